package datasources_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/harness"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

const spireServerAddr = "data.zerotrust_spire_server.this"

var (
	crdKind       = kube.Kind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Plural: "customresourcedefinitions"}
	namespaceKind = kube.Kind{Version: "v1", Kind: "Namespace", Plural: "namespaces"}
)

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

// installRouteCRD makes c serve OpenShift Routes (a minimal CRD: the
// provider reads only spec.host and status.ingress) until the test ends.
func installRouteCRD(t *testing.T, c *harness.Cluster) {
	t.Helper()
	acctest.ApplyAs(t, c, crdKind, "test", map[string]any{
		"metadata": map[string]any{"name": kube.Route.CRDName()},
		"spec": map[string]any{
			"group": kube.Route.Group, "scope": "Namespaced",
			"names": map[string]any{"kind": "Route", "listKind": "RouteList", "plural": "routes", "singular": "route"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	})
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dyn.Resource(crdKind.GVR()).Delete(context.Background(), kube.Route.CRDName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("%s: delete the Route CRD: %v", c.Name, err)
		}
	})
	// Established first; then the endpoint may still 404 for a moment.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := dyn.Resource(kube.Route.GVR()).Namespace("default").List(context.Background(), metav1.ListOptions{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: Routes not served 30s after installing their CRD: %v", c.Name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestAccSpireServerDataSource(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		acctest.ResetSpireSingletons(t, c)
		td := acctest.UniqueName("facts") + ".test"
		legacyTD := acctest.UniqueName("legacy") + ".test"
		acctest.ApplyAs(t, c, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject(td, "solo-cluster"))
		acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(map[string]any{
			"federation": map[string]any{"bundleEndpoint": map[string]any{"address": "spire.solo.test", "port": int64(8443)}},
		}))
		provider := acctest.ProviderConfigFor(t, c)
		customNamespace := strings.Replace(provider, "provider \"zerotrust\" {\n",
			"provider \"zerotrust\" {\n  spire = { namespace = \"spire-system\" }\n", 1)
		const namespace = "zero-trust-workload-identity-manager"

		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					// A newer operator: facts on the ZeroTrustWorkloadIdentityManager,
					// federation (with the CRD's default profile) on the SpireServer.
					Config: spireServerConfig(provider, c),
					ConfigStateChecks: expectOutputs(map[string]knownvalue.Check{
						"trust_domain":        knownvalue.StringExact(td),
						"cluster_name":        knownvalue.StringExact("solo-cluster"),
						"bundle_config_map":   knownvalue.StringExact("spire-bundle"),
						"namespace":           knownvalue.StringExact(namespace),
						"federation_profile":  knownvalue.StringExact("https_spiffe"),
						"bundle_endpoint_url": knownvalue.StringExact("https://spire.solo.test:8443"),
						"endpoint_spiffe_id":  knownvalue.StringExact("spiffe://" + td + "/spire/server"),
					}),
				},
				{
					// On OpenShift the operator publishes the endpoint through a Route.
					PreConfig: func() {
						installRouteCRD(t, c)
						acctest.ApplyAs(t, c, namespaceKind, "test", map[string]any{"metadata": map[string]any{"name": namespace}})
						acctest.ApplyAs(t, c, kube.Route, acctest.OperatorManager, map[string]any{
							"metadata": map[string]any{"name": "spire-server-federation", "namespace": namespace},
							"spec": map[string]any{
								"host": "federation.apps.solo.test",
								"to":   map[string]any{"kind": "Service", "name": "spire-server-federation"},
							},
						})
					},
					Config: spireServerConfig(provider, c),
					ConfigStateChecks: expectOutputs(map[string]knownvalue.Check{
						"bundle_endpoint_url": knownvalue.StringExact("https://federation.apps.solo.test"),
					}),
				},
				{
					// An older operator: everything on the SpireServer, no federation.
					PreConfig: func() {
						acctest.ResetSpireSingletons(t, c)
						acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(map[string]any{
							"trustDomain": legacyTD, "clusterName": "legacy", "bundleConfigMap": "legacy-bundle",
						}))
					},
					Config: spireServerConfig(customNamespace, c),
					ConfigStateChecks: expectOutputs(map[string]knownvalue.Check{
						"trust_domain":        knownvalue.StringExact(legacyTD),
						"cluster_name":        knownvalue.StringExact("legacy"),
						"bundle_config_map":   knownvalue.StringExact("legacy-bundle"),
						"namespace":           knownvalue.StringExact("spire-system"),
						"federation_profile":  knownvalue.Null(),
						"bundle_endpoint_url": knownvalue.Null(),
						"endpoint_spiffe_id":  knownvalue.StringExact("spiffe://" + legacyTD + "/spire/server"),
					}),
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
// a federation on one cluster configured from another cluster's facts.
func TestAccSpireServerDataSource_wiresPeer(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		acctest.ResetSpireSingletons(t, c)
		td := acctest.UniqueName("peer") + ".test"
		acctest.ApplyAs(t, c, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject(td, "solo"))
		acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(map[string]any{
			"federation": map[string]any{"bundleEndpoint": map[string]any{"address": "spire.peer.test"}},
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
							"bundle_endpoint_url":     knownvalue.StringExact("https://spire.peer.test:8443"),
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
