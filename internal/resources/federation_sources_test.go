package resources_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// twoSourcesConfig declares the federation of cluster c with td both ways:
// a zerotrust_federated_trust_domain and a federates_with entry of the
// cluster's zerotrust_spire_federation; ftdExtra and fedExtra go into their
// blocks (a depends_on orders their plans).
func twoSourcesConfig(t *testing.T, c *harness.Cluster, td, ftdExtra, fedExtra string) string {
	t.Helper()
	return acctest.ProviderConfigFor(t, c) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "peer" {
  cluster             = %[1]q
  trust_domain        = %[2]q
  bundle_endpoint_url = "https://bundles.%[2]s"
  bundle_endpoint_profile = {
    type = "https_web"
  }
  %[3]s
}

resource "zerotrust_spire_federation" "this" {
  cluster = %[1]q
  federates_with = {
    %[2]q = {
      bundle_endpoint_url     = "https://bundles.%[2]s"
      bundle_endpoint_profile = "https_web"
    }
  }
  %[4]s
}
`, c.Name, td, ftdExtra, fedExtra)
}

// mustFail runs a terraform command that must fail and returns its output
// with every run of white space made one space.
func (w *cliWorkspace) mustFail(args ...string) string {
	w.t.Helper()
	out, code := acctest.Terraform(w.t, "terraform", w.dir, w.reattach, args...)
	if code == 0 {
		w.t.Fatalf("terraform %s succeeded, want it refused:\n%s", strings.Join(args, " "), out)
	}
	return strings.Join(strings.Fields(out), " ")
}

// TestAccFederationSources_refusedAtPlan: a configuration that federates one
// cluster with one trust domain both through a ClusterFederatedTrustDomain
// and in the SPIRE server's configuration file is refused at plan, whichever
// of the two resources Terraform plans first (each order forced by a
// depends_on, and none), by the one planned second, which names the other by
// its id; the apply is refused the same way and writes nothing: no
// ClusterFederatedTrustDomain, no federation on the SpireServer.
func TestAccFederationSources_refusedAtPlan(t *testing.T) {
	t.Parallel()
	c := acctest.Exclusive(t)
	operatorCluster(t, c, "sources", nil)
	td := acctest.UniqueName("twice") + ".test"
	ftdID := fmt.Sprintf("%s/%s", c.Name, td)
	fedID := c.Name + "/cluster"
	for _, order := range []struct {
		name, ftdExtra, fedExtra string
		// refusedBy is the resource planned second, which refuses; "" when
		// the order is Terraform's.
		refusedBy string
	}{
		{"federation planned first", "depends_on = [zerotrust_spire_federation.this]", "", "zerotrust_federated_trust_domain.peer"},
		{"trust domain planned first", "", "depends_on = [zerotrust_federated_trust_domain.peer]", "zerotrust_spire_federation.this"},
		{"no order", "", "", ""},
	} {
		t.Run(order.name, func(t *testing.T) {
			w := newCLIWorkspace(t)
			w.write(twoSourcesConfig(t, c, td, order.ftdExtra, order.fedExtra))
			out := w.mustFail("plan")
			t.Logf("plan: %s", out)
			if n := strings.Count(out, "Error: Federation Declared Twice"); n != 1 {
				t.Fatalf("the plan has %d errors \"Federation Declared Twice\", want one", n)
			}
			ftdSide := fmt.Sprintf(`Attribute trust_domain: This resource declares the federation of cluster %q with %q through SPIRE's API, `+
				`and the zerotrust_spire_federation with id %q (its federates_with[%q]) declares the same federation in the SPIRE server's configuration file.`,
				c.Name, td, fedID, td)
			fedSide := fmt.Sprintf(`Attribute federates_with[%q]: This entry declares the federation of cluster %q with %q in the SPIRE server's `+
				`configuration file, and the zerotrust_federated_trust_domain with id %q (ClusterFederatedTrustDomain %q) declares the same federation through SPIRE's API.`,
				td, c.Name, td, ftdID, td)
			switch order.refusedBy {
			case "zerotrust_federated_trust_domain.peer":
				mustContain(t, out, "with zerotrust_federated_trust_domain.peer", ftdSide)
			case "zerotrust_spire_federation.this":
				mustContain(t, out, "with zerotrust_spire_federation.this", fedSide)
			default:
				if !strings.Contains(out, ftdSide) && !strings.Contains(out, fedSide) {
					t.Errorf("the refusal names neither resource as expected:\n%s", out)
				}
			}
			mustContain(t, out,
				"SPIRE lets the federation in its configuration file override the one created through its API",
				fmt.Sprintf("it fetches %q's bundle from the federates_with entry's endpoint and profile and ignores the ClusterFederatedTrustDomain's", td),
				fmt.Sprintf("Keep the zerotrust_federated_trust_domain and remove %q from federates_with of the zerotrust_spire_federation", td))

			w.mustFail("apply", "-auto-approve")
			if obj := acctest.GetSingleton(t, c, kube.SpireServer); obj == nil {
				t.Fatal("the SpireServer is gone")
			} else if fed, found := obj.Object["spec"].(map[string]any)["federation"]; found {
				t.Errorf("the refused apply wrote spec.federation = %v", fed)
			}
			checkNoFederatedTrustDomain(t, c, td)
		})
	}
}

// TestAccFederationSources_existingWarns: a federation of the other source
// already on the cluster, which this configuration does not manage, is a
// plan warning naming the object and saying that the configuration file
// wins. A SpireServer whose federatesWith an operator's tool wrote warns the
// plan of a zerotrust_federated_trust_domain for one of its trust domains
// (whose apply goes on); a ClusterFederatedTrustDomain another tool wrote
// warns the plan of a zerotrust_spire_federation that lists its trust
// domain.
func TestAccFederationSources_existingWarns(t *testing.T) {
	t.Parallel()
	c := acctest.Exclusive(t)
	operatorCluster(t, c, "existing", nil)
	configured := acctest.UniqueName("configured") + ".test"
	viaAPI := acctest.UniqueName("viaapi") + ".test"
	acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(map[string]any{"federation": map[string]any{
		"bundleEndpoint": map[string]any{},
		"federatesWith":  []any{peer(configured, "https://bundles."+configured, "https_web", "")},
	}}))
	acctest.WaitZTWIMReconciled(t, c)
	acctest.ApplyAs(t, c, kube.ClusterFederatedTrustDomain, acctest.OperatorManager, map[string]any{
		"metadata": map[string]any{"name": viaAPI},
		"spec": map[string]any{
			"trustDomain": viaAPI, "bundleEndpointURL": "https://bundles." + viaAPI,
			"bundleEndpointProfile": map[string]any{"type": "https_web"},
		},
	})
	t.Cleanup(func() {
		if err := dynamicClient(t, c).Resource(kube.ClusterFederatedTrustDomain.GVR()).Delete(context.Background(), viaAPI, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting ClusterFederatedTrustDomain %s: %v", viaAPI, err)
		}
	})

	t.Run("SpireServer entry", func(t *testing.T) {
		w := newCLIWorkspace(t)
		w.write(acctest.ProviderConfigFor(t, c) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "peer" {
  cluster             = %[1]q
  trust_domain        = %[2]q
  bundle_endpoint_url = "https://other.%[2]s"
  bundle_endpoint_profile = {
    type = "https_web"
  }
}
`, c.Name, configured))
		out := w.run("apply", "-auto-approve")
		t.Logf("apply: %s", out)
		mustContain(t, out, "Warning: Trust Domain Federated in the SPIRE Server's Configuration",
			fmt.Sprintf(`Attribute trust_domain: The SpireServer `+"`cluster`"+` of cluster %q lists %q in spec.federation.federatesWith (bundle endpoint "https://bundles.%s")`, c.Name, configured, configured),
			fmt.Sprintf(`written by field manager %q`, acctest.OperatorManager),
			fmt.Sprintf("it fetches %q's bundle from the federates_with entry's endpoint and profile and ignores the ClusterFederatedTrustDomain's", configured),
			"Apply complete! Resources: 1 added")
		// The destroy deletes the ClusterFederatedTrustDomain and keeps the
		// bundle, which the configuration file's relationship keeps anyway,
		// instead of waiting for that relationship to go.
		out = w.run("destroy", "-auto-approve")
		mustContain(t, out, "Warning: Peer Bundle Kept",
			fmt.Sprintf("lists %q in spec.federation.federatesWith", configured), "Destroy complete! Resources: 1 destroyed")
		checkNoFederatedTrustDomain(t, c, configured)
	})

	t.Run("ClusterFederatedTrustDomain", func(t *testing.T) {
		w := newCLIWorkspace(t)
		w.write(acctest.ProviderConfigFor(t, c) + fmt.Sprintf(`
resource "zerotrust_spire_federation" "this" {
  cluster = %[1]q
  federates_with = {
    %[2]q = {
      bundle_endpoint_url     = "https://other.%[2]s"
      bundle_endpoint_profile = "https_web"
    }
  }
}
`, c.Name, viaAPI))
		out := w.run("plan")
		t.Logf("plan: %s", out)
		mustContain(t, out, "Warning: Trust Domain Federated Through SPIRE's API",
			fmt.Sprintf(`Attribute federates_with[%q]: ClusterFederatedTrustDomain %q on cluster %q federates with %q through SPIRE's API`, viaAPI, viaAPI, c.Name, viaAPI),
			fmt.Sprintf(`written by field manager %q`, acctest.OperatorManager),
			fmt.Sprintf("it fetches %q's bundle from the federates_with entry's endpoint and profile and ignores the ClusterFederatedTrustDomain's", viaAPI))
		if strings.Contains(out, configured) {
			t.Errorf("the plan warns about %s, which no ClusterFederatedTrustDomain declares", configured)
		}
	})
}

// mustContain fails t for each of wants that out does not hold.
func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not say %q", want)
		}
	}
}

// checkNoFederatedTrustDomain fails t when a ClusterFederatedTrustDomain on
// c federates with td.
func checkNoFederatedTrustDomain(t *testing.T, c *harness.Cluster, td string) {
	t.Helper()
	list, err := dynamicClient(t, c).Resource(kube.ClusterFederatedTrustDomain.GVR()).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing ClusterFederatedTrustDomains on %s: %v", c.Name, err)
	}
	for _, item := range list.Items {
		if got, _, _ := unstructured.NestedString(item.Object, "spec", "trustDomain"); got == td {
			t.Errorf("the refused apply created ClusterFederatedTrustDomain %s for %s", item.GetName(), td)
		}
	}
}
