package leastprivilege_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/rbac"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

// clusterName is the audited cluster the tests run on.
const clusterName = "rbac"

// Namespaces the configuration uses: those the optional manifests bind
// their roles in, as shipped.
const (
	csrNS   = rbac.IstioCSRNamespace
	istioNS = rbac.IstioNamespace
	kymaNS  = rbac.KymaNamespace
	kumaNS  = rbac.KumaNamespace
)

// operatorFiles are the manifests TestAccLeastPrivilege applies, unchanged, to
// its cluster, whose SPIRE is laid out as the operator does: the operator's
// install file and the optional ones. The chart's file is
// TestAccLeastPrivilegeChart's.
var operatorFiles = []rbac.File{rbac.OperatorFile, rbac.IstioCSRFile, rbac.KymaFile, rbac.KumaFile}

// readFiles reads the committed manifests of files.
func readFiles(t *testing.T, files ...rbac.File) [][]byte {
	t.Helper()
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("..", "..", f.Path))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// env is what every exercise shares: one audited cluster with SPIRE (exec
// reaches the real spire-server), a standalone peer SPIRE server to federate
// with, the operator stand-ins (with their admin clients), and the
// ServiceAccount whose token is the provider's only credential.
type env struct {
	c          *harness.Cluster
	spire      *harness.Spire
	peer       *harness.Spire
	kubeconfig string
	token      string
	reattach   string
	peerBundle string
	// courierBundle is the bundle of courierTrustDomain, a trust domain the
	// cluster has no relationship with, for zerotrust_spire_bundle.
	courierBundle string
	pems          []string
	// helm is set on a cluster whose SPIRE the chart installed.
	helm bool
}

// courierTrustDomain is the peer whose bundle Terraform sets in SPIRE.
const courierTrustDomain = "courier.zt.test"

// saName is the ServiceAccount the provider runs as, as the manifests'
// bindings name it.
const saName = rbac.SubjectNamespace + "/" + rbac.SubjectName

func setup(t *testing.T) *env {
	t.Helper()
	e := &env{}
	e.c = acctest.AuditedCluster(t, clusterName)
	e.spire = acctest.Spire(t, clusterName)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	peer, err := harness.StartSpire(ctx, nil, harness.SpireOptions{TrustDomain: "peer.zt.test", Standalone: true})
	if err != nil {
		t.Fatalf("cannot start the peer SPIRE server: %v", err)
	}
	acctest.AtExit(func() { _ = peer.Stop() })
	e.peer = peer
	b, err := peer.BundleShow(ctx, "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	e.peerBundle = string(b)
	courier := spiffeid.RequireTrustDomainFromString(courierTrustDomain)
	e.courierBundle = bundletest.BundleJSON(t, courier, bundletest.NewCA(t, courier, time.Now().Add(-time.Minute), time.Now().Add(24*time.Hour)))

	acctest.ZTWIMStandIn(t, e.c)
	acctest.IstioCSRStandIn(t, clusterName)
	acctest.DomainVerificationController(t, clusterName)

	// The namespaces the optional files bind in, as the products they are
	// for would have made them; the operator's SPIRE made its own.
	for _, ns := range []string{csrNS, istioNS, kymaNS, kumaNS} {
		acctest.EnsureNamespace(t, clusterName, ns)
	}
	e.kubeconfig, err = e.c.ManifestKubeconfig(ctx, readFiles(t, operatorFiles...)...)
	if err != nil {
		t.Fatalf("applying the manifests as shipped: %v", err)
	}
	for _, f := range operatorFiles {
		t.Logf("%s applied unchanged to cluster %s", f.Path, clusterName)
	}
	if e.token, err = harness.ServiceAccountToken(e.kubeconfig); err != nil {
		t.Fatal(err)
	}
	e.reattach = acctest.ServeProvider(t)
	return e
}

// provider is the provider block: the ServiceAccount's kubeconfig and, on
// a cluster whose SPIRE the chart installed, that install.
func (e *env) provider() string {
	spire := ""
	if e.helm {
		spire = `
  spire      = { install = "helm" }`
	}
	return acctest.RequiredProviders + fmt.Sprintf(`
provider "zerotrust" {
  kubernetes = { config_path = %q }%s
}
`, e.kubeconfig, spire)
}

// workdir is a terraform working directory holding main.tf (the provider
// block plus config), initialised.
func (e *env) workdir(t *testing.T, config string) string {
	t.Helper()
	dir := t.TempDir()
	e.write(t, dir, "main.tf", config)
	acctest.MustTerraform(t, "terraform", dir, e.reattach, "init")
	return dir
}

func (e *env) write(t *testing.T, dir, name, config string) {
	t.Helper()
	if name == "main.tf" {
		config = e.provider() + config
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
}

// tf runs terraform in dir and returns its output and exit code.
func (e *env) tf(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	return acctest.Terraform(t, "terraform", dir, e.reattach, args...)
}

// degraded are what the provider says, as a warning and not an error, when
// the credentials may not do something it would do: with the manifest's
// grants none may appear.
var degraded = []string{"forbidden", "left behind", "not asked", "may not"}

// mustTF runs terraform in dir and fails the test unless it succeeds
// without a word about missing permissions.
func (e *env) mustTF(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out := acctest.MustTerraform(t, "terraform", dir, e.reattach, args...)
	// A plan line that removes a value quotes what an earlier run recorded
	// (an output of a run an exercise refused): not this run's answer.
	var current []string
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "- ") {
			current = append(current, line)
		}
	}
	lower := strings.ToLower(strings.Join(strings.Fields(strings.Join(current, "\n")), " "))
	for _, d := range degraded {
		if strings.Contains(lower, d) {
			t.Errorf("terraform %s: the output says %q: the manifest lacks a permission:\n%s", strings.Join(args, " "), d, out)
		}
	}
	return out
}

// emptyPlan fails the test unless a plan in dir has nothing to do.
func (e *env) emptyPlan(t *testing.T, dir string) {
	t.Helper()
	if out, code := e.tf(t, dir, "plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan exited %d, want 0 (no changes):\n%s", code, out)
	}
}

// expect fails the test unless out contains every one of want.
func expect(t *testing.T, what, out string, want ...string) {
	t.Helper()
	flat := strings.Join(strings.Fields(out), " ")
	for _, w := range want {
		if !strings.Contains(flat, w) {
			t.Errorf("%s: output lacks %q:\n%s", what, w, out)
		}
	}
}
