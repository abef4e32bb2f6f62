package datasources_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

const spireServerAddr = "data.zerotrust_spire_server.this"

func spireServerConfig(provider string, c *harness.Cluster) string {
	return provider + fmt.Sprintf(`
data "zerotrust_spire_server" "this" {
  cluster = %q
}
`, c.Name)
}

func expectOutputs(want map[string]knownvalue.Check) []statecheck.StateCheck {
	checks := make([]statecheck.StateCheck, 0, len(want))
	for attr, check := range want {
		checks = append(checks, statecheck.ExpectKnownValue(spireServerAddr, tfjsonpath.New(attr), check))
	}
	return checks
}

// TestAccSpireServerDataSource reads a released operator's installation: the
// facts on the ZeroTrustWorkloadIdentityManager, federation on the
// SpireServer. No Route CRD is installed: none is published where the tests
// can take it from (the Go module proxy serves no openshift/api release with
// CRD manifests), and the provider reads Routes only when the cluster serves
// them, so bundle_endpoint_url is null here; spirefacts' unit tests cover
// the Route's host, and TestAccSpireFederationOperator_routeNamespaceConstant
// (with a minimal Route CRD and the operator stand-in) reads it through this
// data source.
func TestAccSpireServerDataSource(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		acctest.ResetSpireSingletons(t, c)
		td := acctest.UniqueName("facts") + ".test"
		install := func(federation map[string]any) {
			acctest.ApplyAs(t, c, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject(td, "solo-cluster"))
			spec := map[string]any{}
			if federation != nil {
				spec["federation"] = federation
			}
			acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(spec))
		}
		install(map[string]any{"bundleEndpoint": map[string]any{}})
		provider := acctest.ProviderConfigFor(t, c)
		customNamespace := strings.Replace(provider, "provider \"zerotrust\" {\n",
			"provider \"zerotrust\" {\n  spire = { namespace = \"spire-system\" }\n", 1)

		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					// Federation with the CRD's default profile.
					Config: spireServerConfig(provider, c),
					ConfigStateChecks: expectOutputs(map[string]knownvalue.Check{
						"trust_domain":      knownvalue.StringExact(td),
						"cluster_name":      knownvalue.StringExact("solo-cluster"),
						"bundle_config_map": knownvalue.StringExact("spire-bundle"),
						// The operator renders SPIRE's Notifier "k8sbundle".
						"bundle_config_map_key": knownvalue.StringExact("bundle.crt"),
						"namespace":             knownvalue.StringExact("zero-trust-workload-identity-manager"),
						"federation_profile":    knownvalue.StringExact("https_spiffe"),
						"bundle_endpoint_url":   knownvalue.Null(),
						"endpoint_spiffe_id":    knownvalue.StringExact("spiffe://" + td + "/spire/server"),
					}),
				},
				{
					// No federation yet, and the provider's own SPIRE namespace.
					PreConfig: func() {
						acctest.ResetSpireSingletons(t, c)
						install(nil)
					},
					Config: spireServerConfig(customNamespace, c),
					ConfigStateChecks: expectOutputs(map[string]knownvalue.Check{
						"trust_domain":        knownvalue.StringExact(td),
						"namespace":           knownvalue.StringExact("spire-system"),
						"federation_profile":  knownvalue.Null(),
						"bundle_endpoint_url": knownvalue.Null(),
					}),
				},
				{
					// A SpireServer without its ZeroTrustWorkloadIdentityManager:
					// the released SpireServer has no trust domain of its own.
					PreConfig: func() {
						acctest.ResetSpireSingletons(t, c)
						acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(nil))
					},
					Config:      spireServerConfig(provider, c),
					ExpectError: regexp.MustCompile(`(?s)Trust Domain Not Set.*ZeroTrustWorkloadIdentityManager`),
				},
				{
					PreConfig:   func() { acctest.ResetSpireSingletons(t, c) },
					Config:      spireServerConfig(provider, c),
					ExpectError: regexp.MustCompile(`(?s)SPIRE Installation Not Found.*neither a\s+ZeroTrustWorkloadIdentityManager\s+nor\s+a\s+SpireServer.*Zero\s+Trust\s+Workload\s+Identity\s+Manager\s+operator`),
				},
			},
		}
	})
}

// TestAccSpireServerDataSource_wiresPeer shows the point of the data source:
// a federation on one cluster configured from another cluster's facts. Off
// OpenShift no Route says where the endpoint is, so the URL is null and a
// configuration must take it from elsewhere (the lab's clusters.json).
func TestAccSpireServerDataSource_wiresPeer(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		acctest.ResetSpireSingletons(t, c)
		td := acctest.UniqueName("peer") + ".test"
		acctest.ApplyAs(t, c, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject(td, "solo"))
		acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(map[string]any{
			"federation": map[string]any{"bundleEndpoint": map[string]any{}},
		}))
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{{
				Config: acctest.ProviderConfigFor(t, c) + fmt.Sprintf(`
data "zerotrust_spire_server" "peer" {
  cluster = %q
}

output "federates_with" {
  value = {
    (data.zerotrust_spire_server.peer.trust_domain) = {
      bundle_endpoint_url     = data.zerotrust_spire_server.peer.bundle_endpoint_url
      bundle_endpoint_profile = data.zerotrust_spire_server.peer.federation_profile
      endpoint_spiffe_id      = data.zerotrust_spire_server.peer.endpoint_spiffe_id
    }
  }
}
`, c.Name),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("federates_with", knownvalue.MapExact(map[string]knownvalue.Check{
						td: knownvalue.ObjectExact(map[string]knownvalue.Check{
							"bundle_endpoint_url":     knownvalue.Null(),
							"bundle_endpoint_profile": knownvalue.StringExact("https_spiffe"),
							"endpoint_spiffe_id":      knownvalue.StringExact("spiffe://" + td + "/spire/server"),
						}),
					})),
				},
			}},
		}
	})
}

func TestAccSpireServerDataSource_noOperator(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.ProviderConfig(t) + `
data "zerotrust_spire_server" "this" {
  cluster = "bare"
}
`,
			ExpectError: regexp.MustCompile(`(?s)SPIRE Installation Not Found.*"bare"`),
		}},
	})
}

// TestAccSpireServerDataSource_unreachableCluster reads a cluster whose
// address nobody listens on: with the provider's default on_unreachable
// ("warn") the read succeeds with the argument kept and every fact null;
// with on_unreachable = "error" on the cluster it fails at once naming it.
func TestAccSpireServerDataSource_unreachableCluster(t *testing.T) {
	host := "https://" + acctest.ClosedAddress(t)
	config := func(policy string) string {
		return strings.Replace(acctest.ProviderConfig(t), "  clusters = {\n",
			fmt.Sprintf("  clusters = {\n    dead = { host = %q, token = \"x\", insecure = true%s }\n", host, policy), 1) + `
data "zerotrust_spire_server" "this" {
  cluster = "dead"
}
`
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(""),
				ConfigStateChecks: expectOutputs(map[string]knownvalue.Check{
					"cluster": knownvalue.StringExact("dead"), "trust_domain": knownvalue.Null(),
					"bundle_endpoint_url": knownvalue.Null(), "namespace": knownvalue.Null(),
				}),
			},
			{
				Config:      config(`, on_unreachable = "error"`),
				ExpectError: regexp.MustCompile(`(?s)Cluster Unreachable.*cluster "dead" at\s+` + regexp.QuoteMeta(host)),
			},
		},
	})
}

// TestAccSpireServerDataSource_helm reads a SPIRE installed by the SPIFFE
// Helm chart: the objects of release "spire" as the chart names them, with
// federation and its Ingress, in a namespace of the test's own; auto finds
// it where the operator's objects are missing, and the operator's win where
// both are.
func TestAccSpireServerDataSource_helm(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		acctest.ResetSpireSingletons(t, c)
		ns := acctest.UniqueName("spire-server")
		acctest.ApplyAs(t, c, kube.Namespace, "helm", map[string]any{"metadata": map[string]any{"name": ns}})
		td := acctest.UniqueName("chart") + ".test"
		meta := func(name string) map[string]any {
			return map[string]any{
				"name": name, "namespace": ns,
				"labels":      map[string]any{"app.kubernetes.io/managed-by": "Helm"},
				"annotations": map[string]any{"meta.helm.sh/release-name": "spire", "meta.helm.sh/release-namespace": ns},
			}
		}
		acctest.ApplyAs(t, c, kube.ConfigMap, "helm", map[string]any{"metadata": meta("spire-server"), "data": map[string]any{
			"server.conf": `{"server": {"trust_domain": "` + td + `", "federation": {"bundle_endpoint": {"port": 8443,
			  "profile": [{"https_spiffe": {}}]}}}, "plugins": {"BundlePublisher": [{"k8s_configmap": {"plugin_data":
			  {"clusters": [{"chart-internal": {"namespace": "spire-system", "configmap_name": "spire-bundle",
			  "configmap_key": "bundle.spiffe"}}]}}},
			  {"aws_s3": {"plugin_data": {"endpoint": "https://127.0.0.1:9000", "region": "us-east-1", "bucket": "bundles",
			  "object_key": "` + td + `/bundle.json", "format": "spiffe", "refresh_hint": "1m"}}}]}}`,
		}})
		acctest.ApplyAs(t, c, kube.ConfigMap, "helm", map[string]any{"metadata": meta("spire-controller-manager"), "data": map[string]any{
			"controller-manager-config.yaml": "clusterName: chart-cluster\ntrustDomain: " + td + "\n",
		}})
		acctest.ApplyAs(t, c, kube.Ingress, "helm", map[string]any{"metadata": meta("spire-server-federation"), "spec": map[string]any{
			"rules": []any{map[string]any{"host": "spire-server-federation." + td}},
		}})
		// Other tests borrow this cluster next and read it with install auto.
		t.Cleanup(func() {
			dyn, err := dynamic.NewForConfig(c.RESTConfig())
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"spire-server", "spire-controller-manager"} {
				err := dyn.Resource(kube.ConfigMap.GVR()).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
				if err != nil {
					t.Errorf("delete ConfigMap %s/%s: %v", ns, name, err)
				}
			}
		})
		provider := acctest.ProviderConfigFor(t, c)
		withInstall := func(install string) string {
			return provider + fmt.Sprintf(`
data "zerotrust_spire_server" "this" {
  cluster   = %q
  install   = %q
  namespace = %q
}
`, c.Name, install, ns)
		}
		auto := provider + fmt.Sprintf(`
data "zerotrust_spire_server" "this" {
  cluster   = %q
  namespace = %q
}
`, c.Name, ns)
		// The S3 publisher with a custom endpoint writes path-style.
		publishedURL := "https://127.0.0.1:9000/bundles/" + td + "/bundle.json"
		chart := map[string]knownvalue.Check{
			"installed_by":      knownvalue.StringExact("helm"),
			"helm_release":      knownvalue.StringExact(ns + "/spire"),
			"trust_domain":      knownvalue.StringExact(td),
			"cluster_name":      knownvalue.StringExact("chart-cluster"),
			"namespace":         knownvalue.StringExact(ns),
			"bundle_config_map": knownvalue.StringExact("spire-bundle"),
			// The chart's default: BundlePublisher "k8s_configmap".
			"bundle_config_map_key": knownvalue.StringExact("bundle.spiffe"),
			"bundle_namespace":      knownvalue.StringExact("spire-system"),
			"federation_profile":    knownvalue.StringExact("https_spiffe"),
			"bundle_endpoint_port":  knownvalue.Int64Exact(8443),
			"bundle_endpoint_url":   knownvalue.StringExact("https://spire-server-federation." + td),
			"endpoint_spiffe_id":    knownvalue.StringExact("spiffe://" + td + "/spire/server"),
			"class_name":            knownvalue.StringExact(ns + "-spire"),
			"server_pod":            knownvalue.StringExact("spire-server-0"),
			"server_container":      knownvalue.StringExact("spire-server"),
			"bundle_publishers": knownvalue.ListExact([]knownvalue.Check{knownvalue.ObjectExact(map[string]knownvalue.Check{
				"type": knownvalue.StringExact("aws_s3"), "bucket": knownvalue.StringExact("bundles"),
				"object": knownvalue.StringExact(td + "/bundle.json"), "region": knownvalue.StringExact("us-east-1"),
				"endpoint": knownvalue.StringExact("https://127.0.0.1:9000"), "storage_account": knownvalue.Null(),
				"format": knownvalue.StringExact("spiffe"), "refresh_hint": knownvalue.StringExact("1m"),
				"url": knownvalue.StringExact(publishedURL),
			})}),
		}
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					Config:      withInstall("chart"),
					ExpectError: regexp.MustCompile(`(?s)value must be one of`),
				},
				{Config: withInstall("helm"), ConfigStateChecks: expectOutputs(chart)},
				{Config: auto, ConfigStateChecks: expectOutputs(chart)},
				{
					// The URL the data source reports as published is refused
					// for https_spiffe, though its host is no cloud's store.
					Config: auto + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "peer" {
  cluster                 = %q
  trust_domain            = data.zerotrust_spire_server.this.trust_domain
  bundle_endpoint_url     = data.zerotrust_spire_server.this.bundle_publishers[0].url
  bundle_endpoint_profile = { type = "https_spiffe", endpoint_spiffe_id = data.zerotrust_spire_server.this.endpoint_spiffe_id }
}
`, c.Name),
					PlanOnly: true,
					ExpectError: regexp.MustCompile(`(?s)Published Bundle Needs https_web.*` + regexp.QuoteMeta(publishedURL) +
						`.*SPIRE\s+server\s+of\s+"` + regexp.QuoteMeta(td) + `".*https_web`),
				},
				{
					PreConfig: func() {
						acctest.ApplyAs(t, c, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject("op-"+td, "op-cluster"))
					},
					Config: auto,
					ConfigStateChecks: expectOutputs(map[string]knownvalue.Check{
						"installed_by": knownvalue.StringExact("operator"),
						"trust_domain": knownvalue.StringExact("op-" + td),
						"helm_release": knownvalue.Null(),
						// The operator's server.conf has no BundlePublisher.
						"bundle_publishers": knownvalue.ListExact([]knownvalue.Check{}),
					}),
				},
				{
					PreConfig:   func() { acctest.ResetSpireSingletons(t, c) },
					Config:      withInstall("operator"),
					ExpectError: regexp.MustCompile(`(?s)SPIRE Installation Not Found.*neither a\s+ZeroTrustWorkloadIdentityManager`),
				},
			},
		}
	})
}
