package datasources_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// TestAccClusterSPIFFEIDDataSource reads a ClusterSPIFFEID an administrator
// made on east, whose spire-controller-manager reconciles it: the spec as
// written, in the resource's types (selectors as objects, federates_with a
// set, fields left out null), and the controller's status.stats (it selects
// namespaces but no pod: one that selected no namespace either got no status
// from the controller).
func TestAccClusterSPIFFEIDDataSource(t *testing.T) {
	east := acctest.Spire(t, acctest.East)
	name := acctest.UniqueName("csidds")
	acctest.ApplyAs(t, acctest.Cluster(t, acctest.East), kube.ClusterSPIFFEID, "platform-team", map[string]any{
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"spiffeIDTemplate": "spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}",
			"podSelector":      map[string]any{"matchLabels": map[string]any{"app": name}},
			"namespaceSelector": map[string]any{"matchExpressions": []any{map[string]any{
				"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": []any{"kube-system"}}}},
			"federatesWith": []any{"west.zt.test", "north.zt.test"},
			"ttl":           "1h",
			"className":     east.ClassName,
			"admin":         true,
		},
	})
	t.Cleanup(func() {
		_ = acctest.Dynamic(t, acctest.East).Resource(kube.ClusterSPIFFEID.GVR()).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// The controller reports on every object of its class after its next
	// reconciliation; wait for that status before reading it.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		obj, err := acctest.Dynamic(t, acctest.East).Resource(kube.ClusterSPIFFEID.GVR()).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, found := obj.Object["status"]; found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("spire-controller-manager of class %s wrote no status on ClusterSPIFFEID %s in 2 minutes", harness.DefaultSpireClassName, name)
		}
		time.Sleep(time.Second)
	}
	addr := "data.zerotrust_cluster_spiffe_id.this"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.ProviderConfig(t) + fmt.Sprintf(`
data "zerotrust_cluster_spiffe_id" "this" {
  cluster = "east"
  name    = %q
}
`, name),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("federates_with"), knownvalue.SetExact([]knownvalue.Check{
					knownvalue.StringExact("north.zt.test"), knownvalue.StringExact("west.zt.test")})),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("pod_selector"), knownvalue.ObjectExact(map[string]knownvalue.Check{
					"match_labels":      knownvalue.MapExact(map[string]knownvalue.Check{"app": knownvalue.StringExact(name)}),
					"match_expressions": knownvalue.Null(),
				})),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("namespace_selector"), knownvalue.ObjectExact(map[string]knownvalue.Check{
					"match_labels": knownvalue.Null(),
					"match_expressions": knownvalue.ListExact([]knownvalue.Check{knownvalue.ObjectExact(map[string]knownvalue.Check{
						"key":      knownvalue.StringExact("kubernetes.io/metadata.name"),
						"operator": knownvalue.StringExact("NotIn"),
						"values":   knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("kube-system")}),
					})}),
				})),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("ttl"), knownvalue.StringExact("1h")),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("jwt_ttl"), knownvalue.Null()),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("dns_name_templates"), knownvalue.Null()),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("fallback"), knownvalue.Null()),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("admin"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("class_name"), knownvalue.StringExact(east.ClassName)),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("stats").AtMapKey("pods_selected"), knownvalue.Int64Exact(0)),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("stats").AtMapKey("entry_failures"), knownvalue.Int64Exact(0)),
			},
		}},
	})
}
