package examplestest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// TestAccExamplesMixedPair applies the two examples that federate a pair of
// clusters to one lab pair whose installs differ: mpop's SPIRE laid out as
// the OpenShift operator does, mphelm's as the SPIFFE Helm chart does (server
// in spire-server, bundle ConfigMap in spire-system, the chart's className),
// which its entry of the examples' clusters variable says with
// spire_install = "helm"; each runs spire-controller-manager. In turn,
// examples/two-cluster-federation with terraform and
// examples/opentofu-provider-for-each with tofu: one apply, after which each
// SPIRE server holds the other's bundle (the bundle was read from where each
// install publishes it, or the federation could not have been bootstrapped);
// `plan -detailed-exitcode` exits 0; destroy leaves no
// ClusterFederatedTrustDomain.
func TestAccExamplesMixedPair(t *testing.T) {
	t.Parallel()
	start := time.Now()
	acctest.OwnCluster(t, "mpop")
	spires := []*harness.Spire{acctest.Spire(t, "mpop"), acctest.HelmSpire(t, "mphelm")}
	t.Logf("an operator-layout and a chart-layout cluster with SPIRE ready in %v", time.Since(start).Round(time.Millisecond))
	clusters := map[string]any{}
	for _, s := range spires {
		// The lab routes neither an OpenShift Route nor the chart's Ingress.
		entry := map[string]string{"config_path": s.Cluster.Kubeconfig, "config_context": s.Cluster.Name, "bundle_endpoint_url": s.BundleEndpointURL}
		if install := spireInstall(s); install != "" {
			entry["spire_install"] = install
		}
		clusters[s.Cluster.Name] = entry
	}
	vars, err := json.Marshal(map[string]any{"clusters": clusters})
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range []struct{ dir, cli string }{
		{"two-cluster-federation", "terraform"},
		{"opentofu-provider-for-each", "tofu"},
	} {
		// Not parallel: the second example federates the same pair once the
		// first has removed its federations.
		t.Run(ex.dir, func(t *testing.T) {
			dir := filepath.Join(copyExamples(t, ex.dir), ex.dir)
			if err := os.WriteFile(filepath.Join(dir, "terraform.tfvars.json"), vars, 0o600); err != nil {
				t.Fatal(err)
			}
			// Built (or found) before the clock starts.
			if _, err := harness.Tool(ex.cli); err != nil {
				t.Fatalf("%s CLI unavailable: %v", ex.cli, err)
			}
			run := func(args ...string) (string, int) { return cliEnv(t, ex.cli, dir, nil, args...) }
			destroyed := false
			t.Cleanup(func() {
				if !destroyed {
					if out, code := run("destroy", "-auto-approve", "-no-color"); code != 0 {
						t.Errorf("cleanup: %s destroy exited %d:\n%s", ex.cli, code, out)
					}
				}
			})
			begin := time.Now()
			if out, code := run("apply", "-auto-approve", "-no-color"); code != 0 {
				t.Fatalf("%s apply exited %d:\n%s", ex.cli, code, out)
			}
			t.Logf("%s apply of examples/%s on the mixed pair: %v", ex.cli, ex.dir, time.Since(begin).Round(time.Millisecond))
			waitFederated(context.Background(), t, spires)
			t.Logf("both SPIRE servers hold the other's bundle %v after the apply began", time.Since(begin).Round(time.Millisecond))
			out, code := run("plan", "-detailed-exitcode", "-no-color")
			if code != 0 {
				t.Fatalf("%s plan -detailed-exitcode after the apply exited %d, want 0 (no changes):\n%s", ex.cli, code, out)
			}
			t.Logf("%s plan -detailed-exitcode after the apply: exit 0", ex.cli)
			if out, code := run("destroy", "-auto-approve", "-no-color"); code != 0 {
				t.Fatalf("%s destroy exited %d:\n%s", ex.cli, code, out)
			}
			destroyed = true
			for _, s := range spires {
				if left := cftdNames(t, s.Cluster); len(left) != 0 {
					t.Errorf("destroy left ClusterFederatedTrustDomains on %s: %v", s.Cluster.Name, left)
				}
				// delete_bundle_on_destroy (default true) removed the peer's
				// bundle, which the next example must bootstrap anew.
				if held, err := s.FederatedTrustDomains(context.Background()); err != nil || len(held) != 0 {
					t.Errorf("SPIRE %s holds the bundles of %v (%v) after destroy, want none", s.TrustDomain, held, err)
				}
			}
		})
	}
}

// spireInstall is the examples' spire_install for s: "helm" where its SPIRE
// is laid out as the SPIFFE Helm chart does (the bundle published in the
// chart's agents' namespace), "" (the provider's default, the operator)
// otherwise.
func spireInstall(s *harness.Spire) string {
	if s.BundleNamespace == harness.HelmSpireBundleNamespace {
		return "helm"
	}
	return ""
}
