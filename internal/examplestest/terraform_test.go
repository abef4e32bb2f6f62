package examplestest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// providerAddress is the source address the examples require; dev_overrides
// maps it to the binary built here.
const providerAddress = "ztfabric/zerotrust"

// federationTimeout bounds how long spire-controller-manager may take to
// put the peers' bundles into SPIRE after an apply.
const federationTimeout = 90 * time.Second

var (
	cliOnce   sync.Once
	cliConfig string
	cliErr    error
)

// repoRoot is the module root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test source")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// terraformCLIConfig builds the provider once per test binary and returns a
// CLI configuration whose dev_overrides point the examples' provider source
// at it, so no registry is asked and no `init` downloads anything.
func terraformCLIConfig(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	work := acctest.WorkDir(t)
	cliOnce.Do(func() {
		binDir := filepath.Join(work, "provider-bin")
		if cliErr = os.MkdirAll(binDir, 0o755); cliErr != nil {
			return
		}
		build := exec.Command("go", "build", "-o", filepath.Join(binDir, "terraform-provider-zerotrust"), ".")
		build.Dir = root
		build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
		if out, err := build.CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("go build of the provider: %w\n%s", err, out)
			return
		}
		cliConfig = filepath.Join(work, "dev-overrides.tfrc")
		cliErr = os.WriteFile(cliConfig, fmt.Appendf(nil, `disable_checkpoint = true
provider_installation {
  dev_overrides {
    %q = %q
  }
  direct {}
}
`, providerAddress, binDir), 0o600)
	})
	if cliErr != nil {
		t.Fatalf("cannot prepare the provider for the terraform CLI: %v", cliErr)
	}
	return cliConfig
}

// copyExamples copies the named example directories (relative to examples/)
// into a fresh directory with the same layout, so relative module sources
// keep working and terraform's files never land in the repository.
func copyExamples(t *testing.T, dirs ...string) string {
	t.Helper()
	src := filepath.Join(repoRoot(t), "examples")
	dst := t.TempDir()
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(src, d), func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(src, path)
			if err != nil {
				return err
			}
			if e.IsDir() {
				if e.Name() == ".terraform" {
					return filepath.SkipDir
				}
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			if !strings.HasSuffix(path, ".tf") && !strings.HasSuffix(path, ".tftest.hcl") && !strings.HasSuffix(path, ".tfquery.hcl") {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
		})
		if err != nil {
			t.Fatalf("copying examples/%s: %v", d, err)
		}
	}
	return dst
}

// terraform runs the terraform CLI in dir and returns its output and exit
// code; it fails the test when terraform cannot run at all.
func terraform(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	return terraformEnv(t, dir, nil, args...)
}

// terraformEnv is terraform with extra environment variables (later ones win).
func terraformEnv(t *testing.T, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	return cliEnv(t, "terraform", dir, env, args...)
}

// cliEnv runs the CLI tool ("terraform", or "tofu" for the OpenTofu-only
// examples) as terraformEnv does: the same CLI configuration, whose
// dev_overrides both CLIs read.
func cliEnv(t *testing.T, tool, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	tf, err := harness.Tool(tool)
	if err != nil {
		t.Fatalf("%s CLI unavailable: %v", tool, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tf, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"TF_CLI_CONFIG_FILE="+terraformCLIConfig(t),
		"CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1",
		"TF_INPUT=0",
	)
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exitErr):
		return out.String(), exitErr.ExitCode()
	default:
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out.String())
		return "", -1
	}
}

// mustTerraform is terraform that fails the test on a non-zero exit.
func mustTerraform(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, code := terraform(t, dir, args...)
	if code != 0 {
		t.Fatalf("terraform %s exited %d:\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// cftdNames lists the ClusterFederatedTrustDomains of cluster c.
func cftdNames(t *testing.T, c *harness.Cluster) []string {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	list, err := dyn.Resource(kube.ClusterFederatedTrustDomain.GVR()).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing ClusterFederatedTrustDomains on %s: %v", c.Name, err)
	}
	var names []string
	for _, o := range list.Items {
		names = append(names, o.GetName())
	}
	sort.Strings(names)
	return names
}

// TestAccModuleTerraformTest runs the reusable module's own `terraform test`
// (examples/modules/spire-federation-peer/tests) against a cluster of its
// own, and checks that every run passed and nothing was left behind.
func TestAccModuleTerraformTest(t *testing.T) {
	t.Parallel()
	c := acctest.OwnCluster(t, "tftest")
	dir := filepath.Join(copyExamples(t, "modules"), "modules", "spire-federation-peer")

	// No `init`: with dev_overrides the provider needs none (and init would
	// ask the registry), and the module calls no other module.
	out, code := terraformEnv(t, dir, []string{"KUBE_CONFIG_PATH=" + c.Kubeconfig, "KUBE_CTX=" + c.Name}, "test", "-no-color")
	t.Logf("terraform test:\n%s", out)
	if code != 0 {
		t.Fatalf("terraform test exited %d", code)
	}
	if !strings.Contains(out, "Success! 3 passed, 0 failed.") {
		t.Fatalf("terraform test did not report all three runs passing")
	}
	if left := cftdNames(t, c); len(left) != 0 {
		t.Fatalf("terraform test left ClusterFederatedTrustDomains behind: %v", left)
	}
}

// TestAccExampleModuleComposition applies examples/module-composition (the
// module once per cluster, one provider alias each) to three clusters with
// real SPIRE servers and spire-controller-manager, east's and west's laid
// out as the OpenShift operator does and north's as the SPIFFE Helm chart
// does (spire_installs), then asks SPIRE whether every server holds both
// peers' bundles, checks that a second plan is empty, and destroys.
func TestAccExampleModuleComposition(t *testing.T) {
	t.Parallel()
	start := time.Now()
	north := acctest.HelmSpire(t, "north")
	clusters := []*harness.Cluster{acctest.Cluster(t, acctest.East), acctest.Cluster(t, acctest.West), north.Cluster}
	spires := []*harness.Spire{acctest.Spire(t, acctest.East), acctest.Spire(t, acctest.West), north}
	t.Logf("two operator-layout clusters and a chart-layout one with SPIRE ready in %v", time.Since(start).Round(time.Millisecond))
	dir := filepath.Join(copyExamples(t, "modules", "module-composition"), "module-composition")

	vars, urls := map[string]any{}, map[string]string{}
	for i, c := range clusters {
		vars[c.Name] = map[string]string{"config_path": c.Kubeconfig, "config_context": c.Name}
		// The lab routes neither an OpenShift Route nor the chart's Ingress.
		urls[c.Name] = spires[i].BundleEndpointURL
	}
	data, err := json.Marshal(map[string]any{"kubeconfigs": vars, "bundle_endpoint_urls": urls,
		"spire_installs": map[string]string{north.Cluster.Name: "helm"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "terraform.tfvars.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}

	// `get` installs the local module without asking any registry for
	// providers, which `init` would do even with dev_overrides.
	mustTerraform(t, dir, "get", "-no-color")
	destroyed := false
	t.Cleanup(func() {
		if !destroyed {
			if out, code := terraform(t, dir, "destroy", "-auto-approve", "-no-color"); code != 0 {
				t.Errorf("cleanup: terraform destroy exited %d:\n%s", code, out)
			}
		}
	})
	applied := time.Now()
	mustTerraform(t, dir, "apply", "-auto-approve", "-no-color")
	t.Logf("apply of the mixed three: %v", time.Since(applied).Round(time.Millisecond))

	// The output names, per cluster, the two peers' trust domains.
	var federations map[string][]string
	if err := json.Unmarshal([]byte(mustTerraform(t, dir, "output", "-json", "federations")), &federations); err != nil {
		t.Fatalf("output federations: %v", err)
	}
	for i, c := range clusters {
		want := peerTrustDomains(spires, i)
		if got := federations[c.Name]; !slices.Equal(got, want) {
			t.Errorf("output federations[%s] = %v, want %v", c.Name, got, want)
		}
		if got := cftdNames(t, c); !slices.Equal(got, want) {
			t.Errorf("ClusterFederatedTrustDomains on %s = %v, want %v", c.Name, got, want)
		}
	}

	// The proof that matters: each SPIRE server holds both peers' bundles.
	waitFederated(context.Background(), t, spires)

	// Right after the apply, nothing is left to do.
	if out, code := terraform(t, dir, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Fatalf("plan after apply is not empty (exit %d):\n%s", code, out)
	}
	t.Logf("plan -detailed-exitcode after the apply: exit 0")

	mustTerraform(t, dir, "destroy", "-auto-approve", "-no-color")
	destroyed = true
	for _, c := range clusters {
		if left := cftdNames(t, c); len(left) != 0 {
			t.Errorf("destroy left ClusterFederatedTrustDomains on %s: %v", c.Name, left)
		}
	}
}

// peerTrustDomains are the trust domains of every SPIRE server but the i-th,
// sorted: what the i-th federates with.
func peerTrustDomains(spires []*harness.Spire, i int) []string {
	var tds []string
	for j, s := range spires {
		if j != i {
			tds = append(tds, s.TrustDomain)
		}
	}
	sort.Strings(tds)
	return tds
}
