package resources_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// unreachablePlanBound is far above what the plan takes (the measured time
// is logged; bench/ measures it): the assertion only catches a plan that
// waits out retries again (16 s before the cluster was asked once).
const unreachablePlanBound = 40 * time.Second

// TestAccPlan_unreachableCluster plans new objects on three clusters, one of
// which does not answer: once an address where nothing listens, once a
// listener that accepts connections and never answers. The plan succeeds,
// names the dead cluster, its address and the checks it skipped in exactly
// one warning, and does not wait out the client's retries.
func TestAccPlan_unreachableCluster(t *testing.T) {
	t.Parallel()
	for name, address := range map[string]func(*testing.T) string{
		"closed port":     acctest.ClosedAddress,
		"silent listener": acctest.SilentAddress,
	} {
		t.Run(name, func(t *testing.T) {
			host := "https://" + address(t)
			td := acctest.UniqueName("unreach")
			config := strings.Replace(acctest.ProviderConfig(t), "  clusters = {\n",
				fmt.Sprintf("  clusters = {\n    dead = { host = %q, token = \"x\", insecure = true }\n", host), 1) + fmt.Sprintf(`
resource "zerotrust_spire_federation" "dead" {
  cluster = "dead"
  bundle_endpoint = {
    profile = "https_web"
    https_web = {
      acme = {
        directory_url = "https://acme.example.test/directory"
        domain_name   = "federation.wrong.test"
        email         = "admin@example.test"
        tos_accepted  = true
      }
    }
  }
}

resource "zerotrust_istio_csr" "dead" {
  cluster      = "dead"
  namespace    = "cert-manager"
  cert_manager = { issuer_ref = { name = "istio-ca", kind = "Issuer" } }
  istiod_tls   = { trust_domain = "cluster.local" }
  istio        = { namespace = "istio-system" }
}

resource "zerotrust_federated_trust_domain" "live" {
  for_each                = toset([%q, %q])
  cluster                 = each.key
  trust_domain            = "%s.test"
  bundle_endpoint_url     = "https://bundle.%s.test/spiffe"
  bundle_endpoint_profile = { type = "https_web" }
}
`, acctest.East, acctest.West, td, td)
			w := newCLIWorkspace(t)
			w.write(config)
			w.run("init")
			start := time.Now()
			out := w.run("plan")
			took := time.Since(start)
			t.Logf("plan with one of three clusters at %s (%s) took %s", host, name, took.Round(time.Millisecond))

			const summary = "Warning: Cluster Unreachable: Plan-Time Checks Skipped"
			if n := strings.Count(out, summary); n != 1 {
				t.Fatalf("want the warning %q once, got %d times:\n%s", summary, n, out)
			}
			for _, want := range []string{
				fmt.Sprintf("Cluster \"dead\" at %s did not answer within 3s:", host),
				"zerotrust_spire_federation: the cluster's trust domain",
				"that an ACME domain_name is the host of the operator's Route",
				"zerotrust_istio_csr: that no other IstioCSR exists on the cluster",
				"that the cert-manager issuer exists and is not an ACME issuer",
				"that the CA ConfigMap of ca_certificate holds a CA certificate",
				"that no other ClusterFederatedTrustDomain federates with the same trust domain",
				"4 to add",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("want %q in the plan output:\n%s", want, out)
				}
			}
			if strings.Contains(out, "\"east\" at") || strings.Contains(out, "\"west\" at") {
				t.Errorf("a live cluster was reported unreachable:\n%s", out)
			}
			if took > unreachablePlanBound {
				t.Errorf("plan took %s, more than %s", took, unreachablePlanBound)
			}
		})
	}
}

// TestAccUnreachable_keepsGoing manages objects on three clusters, two of
// them on "flaky" (east's API server under another key), then points
// flaky's connection at a dead address (nothing listening, or a listener
// that never answers) and changes every object. With on_unreachable unset
// ("warn"): the plan keeps flaky's objects without a refresh, in warnings
// naming flaky that Terraform's CLI shows once, and ends within the
// reachability bound of the live run; the apply updates west's object and
// refuses flaky's at once, naming flaky. With flaky back, one apply carries
// the rest and the plan after it is empty. With on_unreachable = "error"
// for flaky, the plan fails at once naming it.
func TestAccUnreachable_keepsGoing(t *testing.T) {
	t.Parallel()
	for name, address := range map[string]func(*testing.T) string{
		"closed port":     acctest.ClosedAddress,
		"silent listener": acctest.SilentAddress,
	} {
		t.Run(name, func(t *testing.T) {
			dead := "https://" + address(t)
			east := acctest.Cluster(t, acctest.East)
			id := acctest.UniqueName("keep")
			live := fmt.Sprintf("flaky = { config_path = %q, config_context = %q }", east.Kubeconfig, acctest.East)
			down := func(policy string) string {
				return fmt.Sprintf("flaky = { host = %q, token = \"x\", insecure = true%s }", dead, policy)
			}
			objects := map[string]string{"a": "flaky", "b": "flaky", "c": acctest.West}
			config := func(flaky, suffix string) string {
				return strings.Replace(acctest.ProviderConfig(t), "  clusters = {\n", "  clusters = {\n    "+flaky+"\n", 1) +
					fmt.Sprintf(`
locals {
  objects = { a = "flaky", b = "flaky", c = %q }
}

resource "zerotrust_federated_trust_domain" "o" {
  for_each                = local.objects
  cluster                 = each.value
  trust_domain            = "${each.key}-%s.test"
  bundle_endpoint_url     = "https://bundle.${each.key}.test/spiffe%s"
  bundle_endpoint_profile = { type = "https_web" }
}
`, acctest.West, id, suffix)
			}
			url := func(cluster, object string) string {
				if cluster == "flaky" {
					cluster = acctest.East
				}
				obj, err := getCFTD(t, cluster, object+"-"+id+".test")
				if err != nil {
					t.Fatal(err)
				}
				u, _, _ := unstructured.NestedString(obj.Object, "spec", "bundleEndpointURL")
				return u
			}
			w := newCLIWorkspace(t)
			w.write(config(live, ""))
			w.run("init")
			w.run("apply", "-auto-approve")
			w.write(config(live, "/v2"))
			start := time.Now()
			w.run("plan")
			alive := time.Since(start)

			w.write(config(down(""), "/v2"))
			start = time.Now()
			out := w.run("plan")
			took := time.Since(start)
			t.Logf("plan with flaky at %s (%s): %s; the same plan with flaky alive: %s", dead, name, took.Round(time.Millisecond), alive.Round(time.Millisecond))
			const kept = `Warning: Cluster "flaky" Unreachable: State Kept Without Refresh`
			if n := strings.Count(out, kept); n != 1 {
				t.Errorf("want %q once, got %d times:\n%s", kept, n, out)
			}
			for _, want := range []string{
				fmt.Sprintf(`Cluster "flaky" at %s did not answer within 3s`, dead),
				"keeps the state of the last run: it was not refreshed",
				"(and one more similar warning elsewhere)",
				"3 to change",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("want %q in the plan output:\n%s", want, out)
				}
			}
			if took > alive+kube.PlanReachTimeout+5*time.Second {
				t.Errorf("the plan took %s, the same plan with flaky alive %s: more than the reachability bound apart", took, alive)
			}

			start = time.Now()
			out, code := acctest.Terraform(t, "terraform", w.dir, w.reattach, "apply", "-auto-approve")
			took = time.Since(start)
			out = strings.Join(strings.Fields(out), " ")
			t.Logf("apply with flaky dead: %s, exit %d", took.Round(time.Millisecond), code)
			if code == 0 || strings.Count(out, "Error: Cluster Unreachable") != 2 || !strings.Contains(out, `cluster "flaky" at `+dead) {
				t.Errorf("want the apply to refuse flaky's two changes, naming flaky; exit %d:\n%s", code, out)
			}
			if took > 30*time.Second {
				t.Errorf("the apply took %s: a change on the dead cluster waited out retries", took)
			}
			for object, cluster := range objects {
				want := "https://bundle." + object + ".test/spiffe"
				if cluster != "flaky" {
					want += "/v2"
				}
				if got := url(cluster, object); got != want {
					t.Errorf("%s on %s: bundleEndpointURL %q after the apply with flaky dead, want %q", object, cluster, got, want)
				}
			}

			w.write(config(down(` , on_unreachable = "error"`), "/v2"))
			start = time.Now()
			out, code = acctest.Terraform(t, "terraform", w.dir, w.reattach, "plan")
			out = strings.Join(strings.Fields(out), " ")
			if code == 0 || !strings.Contains(out, "Error: Cluster Unreachable") || time.Since(start) > alive+kube.PlanReachTimeout+5*time.Second {
				t.Errorf("with on_unreachable = \"error\", want the plan to fail at once naming flaky; exit %d after %s:\n%s", code, time.Since(start), out)
			}

			w.write(config(live, "/v2"))
			w.run("apply", "-auto-approve")
			for object := range objects {
				if got := url(objects[object], object); got != "https://bundle."+object+".test/spiffe/v2" {
					t.Errorf("%s: bundleEndpointURL %q after the apply with flaky back", object, got)
				}
			}
			if out := w.run("plan"); !strings.Contains(out, "No changes.") {
				t.Errorf("the plan after the recovery apply is not empty:\n%s", out)
			}
			w.run("destroy", "-auto-approve")
		})
	}
}
