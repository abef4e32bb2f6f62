package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// helmClusterProvider is a provider block whose cluster chart's SPIRE comes
// from the Helm chart (its own `spire`), beside clusters of the operator's
// install: a mixed fleet.
func helmClusterProvider(chart *harness.Cluster, others ...*harness.Cluster) string {
	b := fmt.Sprintf("provider \"zerotrust\" {\n  clusters = {\n    %s = {\n      config_path = %q\n      config_context = %q\n"+
		"      spire = { install = \"helm\" }\n    }\n", chart.Name, chart.Kubeconfig, chart.Name)
	for _, c := range others {
		b += fmt.Sprintf("    %s = { config_path = %q, config_context = %q }\n", c.Name, c.Kubeconfig, c.Name)
	}
	return b + "  }\n}\n"
}

// TestAccFederatedTrustDomain_helmCluster federates a SPIRE the Helm chart
// laid out (namespace spire-server, class spire-server-spire) with west's,
// and reads its bundle through pod exec, with no SPIRE setting on any
// resource: the cluster's `spire = { install = "helm" }` gives the class
// the object gets and the pod SPIRE is asked in. With the operator's
// defaults the controller manager would ignore the object and the pod would
// not exist.
func TestAccFederatedTrustDomain_helmCluster(t *testing.T) {
	t.Parallel()
	chart := acctest.HelmSpire(t, "chart")
	west := acctest.Spire(t, acctest.West)
	bundle, err := west.BundleShow(context.Background(), "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	const ftd, tb = "zerotrust_federated_trust_domain.west", "data.zerotrust_trust_bundle.chart"
	config := helmClusterProvider(chart.Cluster, acctest.Cluster(t, acctest.West)) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "west" {
  cluster             = "chart"
  trust_domain        = %[1]q
  bundle_endpoint_url = %[2]q
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = %[3]q
  }
  trust_domain_bundle      = %[4]q
  wait_for_bundle          = true
  delete_bundle_on_destroy = true

  timeouts {
    create = "2m"
    delete = "2m"
  }
}

data "zerotrust_trust_bundle" "chart" {
  cluster      = "chart"
  trust_domain = %[5]q
  spire_server = {}
}

# What the chart's default publisher (real SPIRE's BundlePublisher
# "k8s_configmap") wrote: found from the chart's configuration, and read
# with no key given.
data "zerotrust_spire_server" "chart" {
  cluster = "chart"
}

data "zerotrust_trust_bundle" "chart_config_map" {
  cluster      = "chart"
  trust_domain = %[5]q
  config_map   = {}
}

data "zerotrust_federation_status" "chart" {
  cluster    = "chart"
  depends_on = [zerotrust_federated_trust_domain.west]
}
`, west.TrustDomain, west.BundleEndpointURL, west.EndpointSPIFFEID, string(bundle), chart.TrustDomain)
	logBundleConfigMap(t, chart)

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			held, err := spireHolds(t, chart, west.TrustDomain)
			if err != nil {
				return err
			}
			if held {
				return fmt.Errorf("the chart's SPIRE server still holds the bundle of %s after destroy", west.TrustDomain)
			}
			return nil
		},
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ftd, tfjsonpath.New("class_name"), knownvalue.StringExact(chart.ClassName)),
				statecheck.ExpectKnownValue(ftd, tfjsonpath.New("class_name"), knownvalue.StringExact("spire-server-spire")),
				statecheck.ExpectKnownValue(tb, tfjsonpath.New("x509_authorities_pem"),
					knownvalue.StringRegexp(regexp.MustCompile(`-----BEGIN CERTIFICATE-----`))),
				statecheck.ExpectKnownValue("data.zerotrust_spire_server.chart", tfjsonpath.New("bundle_config_map_key"),
					knownvalue.StringExact("bundle.spiffe")),
				statecheck.ExpectKnownValue("data.zerotrust_spire_server.chart", tfjsonpath.New("bundle_namespace"),
					knownvalue.StringExact(harness.HelmSpireBundleNamespace)),
				statecheck.CompareValuePairs(tb, tfjsonpath.New("x509_fingerprints_sha256"),
					"data.zerotrust_trust_bundle.chart_config_map", tfjsonpath.New("x509_fingerprints_sha256"), compare.ValuesSame()),
				statecheck.CompareValuePairs(tb, tfjsonpath.New("jwt_authorities"),
					"data.zerotrust_trust_bundle.chart_config_map", tfjsonpath.New("jwt_authorities"), compare.ValuesSame()),
				statecheck.ExpectKnownValue("data.zerotrust_federation_status.chart", tfjsonpath.New("ok"), knownvalue.Bool(true)),
				acctest.ClusterCheck(func(*terraform.State) error {
					held, err := spireHolds(t, chart, west.TrustDomain)
					if err != nil {
						return err
					}
					if !held {
						return fmt.Errorf("the chart's SPIRE server does not hold the bundle of %s after apply", west.TrustDomain)
					}
					return nil
				}),
			},
		}},
	})
}

// logBundleConfigMap logs the bundle ConfigMap s's SPIRE wrote, with who
// wrote each key (its field managers).
func logBundleConfigMap(t *testing.T, s *harness.Spire) {
	t.Helper()
	cm, err := acctest.Dynamic(t, s.Cluster.Name).Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).
		Namespace(s.BundleNamespace).Get(context.Background(), s.BundleConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	t.Logf("ConfigMap %s/%s on cluster %s, keys written by %v:\n%v", s.BundleNamespace, s.BundleConfigMap, s.Cluster.Name,
		bundlesource.Writers(cm), data)
}

// publishedBundleConfig reads the bundle cluster's SPIRE publishes as a
// peer's configuration would: data.zerotrust_spire_server.<name> (with the
// arguments args) finds the ConfigMap, its namespace and key in SPIRE's
// configuration, and data.zerotrust_trust_bundle.<name> reads it there.
func publishedBundleConfig(name, cluster, trustDomain, args string) string {
	return fmt.Sprintf(`
data "zerotrust_spire_server" %[1]q {
  cluster = %[2]q
  %[4]s
}

data "zerotrust_trust_bundle" %[1]q {
  cluster      = %[2]q
  trust_domain = %[3]q
  config_map = {
    namespace = data.zerotrust_spire_server.%[1]s.bundle_namespace
    name      = data.zerotrust_spire_server.%[1]s.bundle_config_map
    key       = data.zerotrust_spire_server.%[1]s.bundle_config_map_key
  }
}
`, name, cluster, trustDomain, args)
}
