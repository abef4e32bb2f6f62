// Package acctest runs acceptance tests against real local clusters: one lab
// of kube-apiservers per test binary, started by the first test that needs
// it, the terraform CLI from scripts/tool.sh, and the provider served in
// process.
package acctest

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/protoserver"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// Cluster names of the shared lab. Bare has no CRDs installed.
const (
	East = "east"
	West = "west"
	Bare = "bare"
)

// ProtoV6ProviderFactories serves the provider in the test process.
var ProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"zerotrust": protoserver.New(provider.New("test"), protoserver.WithFastPaths(provider.FastPaths)),
}

var (
	// work lives as long as the test binary; Main creates it.
	work string

	terraformOnce sync.Once
	terraformPath string
	terraformErr  error

	atExitMu sync.Mutex
	atExit   []func()
)

// AtExit registers f to run once all tests of the binary have finished and
// before the clusters stop. Components started lazily by one test (a SPIRE
// server, a DNS server) register their shutdown here.
func AtExit(f func()) {
	atExitMu.Lock()
	defer atExitMu.Unlock()
	atExit = append(atExit, f)
}

func runAtExit() {
	atExitMu.Lock()
	defer atExitMu.Unlock()
	for i := len(atExit) - 1; i >= 0; i-- {
		atExit[i]()
	}
	atExit = nil
}

// PreCheck readies the terraform CLI (SetupTerraform) once per test binary,
// or fails the test with the reason. Every acceptance test must reach it
// before resource.Test: through Lab, Cluster, ProviderConfig and the other
// lab helpers, or, for a test that needs no cluster, as the TestCase's
// PreCheck.
func PreCheck(t *testing.T) {
	t.Helper()
	if work == "" {
		t.Fatal("acctest: no work directory; call acctest.Main from TestMain")
	}
	terraformOnce.Do(func() { terraformPath, terraformErr = SetupTerraform(work) })
	if terraformErr != nil {
		t.Fatalf("acctest: terraform CLI unavailable: %v", terraformErr)
	}
}

// WorkDir is a directory that lives as long as the test binary.
func WorkDir(t *testing.T) string {
	t.Helper()
	PreCheck(t)
	return work
}

// TerraformPath is the terraform CLI PreCheck readied, for tests that run
// it themselves.
func TerraformPath(t *testing.T) string {
	t.Helper()
	PreCheck(t)
	return terraformPath
}

// Main runs the tests and then stops whatever they started. Nothing starts
// before a test asks for it (see PreCheck and LabFor), so `make unit` runs
// no tool. A component that cannot start fails the tests that need it with
// the reason: acceptance tests are never skipped for lack of a real cluster.
func Main(m *testing.M) {
	os.Exit(run(m, nil))
}

// MainThen is Main with report run once everything has stopped: a package's
// summary of what its tests measured.
func MainThen(m *testing.M, report func()) {
	os.Exit(run(m, report))
}

func run(m *testing.M, report func()) int {
	var err error
	work, err = os.MkdirTemp("", "zerotrust-acc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "acctest:", err)
		return 1
	}
	defer os.RemoveAll(work)
	// TF_ACC makes resource.Test run instead of skipping; until PreCheck
	// resolves the real CLI, the terraform path names the missing call, so a
	// test that forgot it fails loudly rather than finding terraform on PATH.
	for k, v := range map[string]string{
		"TF_ACC":                "1",
		"TF_ACC_TERRAFORM_PATH": filepath.Join(work, "no-terraform-call-acctest.PreCheck-first"),
	} {
		if err := os.Setenv(k, v); err != nil {
			fmt.Fprintln(os.Stderr, "acctest:", err)
			return 1
		}
	}
	code := m.Run()
	runAtExit()
	if report != nil {
		report()
	}
	return code
}

// TerraformCLIs are the CLIs the acceptance tests run on (ZT_TERRAFORM).
var TerraformCLIs = []string{"terraform", "terraform-1.11", "terraform-exp", "tofu"}

// SetupTerraform points terraform-plugin-testing (and any terraform run from
// os/exec) at a terraform binary that needs no network, keeps every tool's
// caches inside work, and returns the binary's path. Test binaries with their
// own TestMain (internal/reliability) call it directly.
//
// ZT_TERRAFORM picks the CLI: "terraform" (the default, the newest release the
// module proxy serves), "terraform-1.11" (the oldest release we test),
// "terraform-exp" (the default built with experiments allowed, see
// ExperimentalTerraform) or "tofu" (OpenTofu); make test-compat runs a smoke
// subset on terraform-1.11 and tofu.
func SetupTerraform(work string) (string, error) {
	tool := cmp.Or(os.Getenv("ZT_TERRAFORM"), "terraform")
	if !slices.Contains(TerraformCLIs, tool) {
		return "", fmt.Errorf("acctest: ZT_TERRAFORM=%q: must be one of %s", tool, strings.Join(TerraformCLIs, ", "))
	}
	tf, err := harness.Tool(tool)
	if err != nil {
		return "", err
	}
	if tool == "tofu" {
		// terraform-plugin-testing writes required_providers with
		// registry.terraform.io addresses unless told otherwise; OpenTofu
		// resolves the in-process provider only under its own registry host.
		for k, v := range map[string]string{"TF_ACC_PROVIDER_HOST": "registry.opentofu.org", "TF_ACC_PROVIDER_NAMESPACE": "hashicorp"} {
			if err := os.Setenv(k, v); err != nil {
				return "", err
			}
		}
	}
	cliConfig := filepath.Join(work, "terraformrc")
	if err := os.WriteFile(cliConfig, []byte("disable_checkpoint = true\n"), 0o600); err != nil {
		return "", err
	}
	for k, v := range map[string]string{
		"TF_ACC":                "1",
		"TF_ACC_TERRAFORM_PATH": tf,
		"TF_CLI_CONFIG_FILE":    cliConfig,
		"CHECKPOINT_DISABLE":    "1",
		"TF_IN_AUTOMATION":      "1",
		"KUBECACHEDIR":          filepath.Join(work, "kubecache"),
		"KUBE_CONFIG_PATH":      "",
		"KUBE_HOST":             "",
	} {
		if err := os.Setenv(k, v); err != nil {
			return "", err
		}
	}
	return tf, nil
}

// ExperimentalTerraform runs t's terraform-plugin-testing steps on
// terraform-exp, whatever ZT_TERRAFORM says: the only build that accepts
// -allow-deferral (resource.AdditionalCLIOptions). It sets the environment,
// so t must not be parallel.
func ExperimentalTerraform(t *testing.T) {
	t.Helper()
	PreCheck(t)
	tf, err := harness.Tool("terraform-exp")
	if err != nil {
		t.Fatalf("acctest: terraform-exp unavailable: %v", err)
	}
	t.Setenv("TF_ACC_TERRAFORM_PATH", tf)
	// Undo SetupTerraform's OpenTofu registry host under ZT_TERRAFORM=tofu.
	t.Setenv("TF_ACC_PROVIDER_HOST", "registry.terraform.io")
}

// Dynamic is an admin client for checks that ask the cluster directly.
func Dynamic(t *testing.T, name string) dynamic.Interface {
	t.Helper()
	return dynamicFor(t, Cluster(t, name))
}

// ProviderConfig is a provider block reaching every lab cluster through
// `clusters`, with east also as the default connection. West and bare are
// reached through host/token/CA, east through its kubeconfig, so both ways
// of connecting are exercised.
func ProviderConfig(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	east := Cluster(t, East)
	fmt.Fprintf(&b, "provider \"zerotrust\" {\n  kubernetes = { config_path = %q, config_context = %q }\n", east.Kubeconfig, East)
	b.WriteString("  clusters = {\n")
	fmt.Fprintf(&b, "    %s = { config_path = %q, config_context = %q }\n", East, east.Kubeconfig, East)
	for _, n := range []string{West, Bare} {
		c := Cluster(t, n)
		fmt.Fprintf(&b, "    %s = {\n      host = %q\n      token = %q\n      cluster_ca_certificate = <<-EOT\n%s\nEOT\n    }\n",
			n, c.Host, c.Token, strings.TrimSpace(string(c.CACertPEM)))
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// LateProviderConfig is a provider block whose cluster "late" reaches c
// through a host known only after apply (passed through terraform_data), as
// when the cluster is created in the same apply.
func LateProviderConfig(c *harness.Cluster) string {
	return fmt.Sprintf(`
resource "terraform_data" "cluster" {
  input = %q
}

provider "zerotrust" {
  clusters = {
    late = {
      host                   = terraform_data.cluster.output
      token                  = %q
      cluster_ca_certificate = %q
    }
  }
}
`, c.Host, c.Token, string(c.CACertPEM))
}

// UniqueName returns a lowercase name unique to this test run, usable as a
// DNS label and trust domain component.
func UniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1_000_000_000)
}
