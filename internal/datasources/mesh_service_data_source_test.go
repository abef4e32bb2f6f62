package datasources_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// TestAccMeshServiceDataSource reads a MeshService of the upstream Kuma CRD
// as a zone control plane leaves it (the CRD has no status subresource, so
// Kuma writes status with the object): identities, ports, selector, state and
// the status fields; then a MeshService without any of them, and one that
// does not exist.
func TestAccMeshServiceDataSource(t *testing.T) {
	ns := acctest.UniqueName("msds")
	dyn := acctest.Dynamic(t, acctest.West)
	nsObj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns},
	}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(context.Background(), nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const id = "spiffe://east.example.com/ns/shop/sa/cart"
	acctest.ApplyAs(t, acctest.Cluster(t, acctest.West), kube.KumaMeshService, "kuma-cp", map[string]any{
		"metadata": map[string]any{"name": "cart", "namespace": ns},
		"spec": map[string]any{
			"identities": []any{map[string]any{"type": "SpiffeID", "value": id}},
			"selector":   map[string]any{"dataplaneRef": map[string]any{"name": "cart-dp"}},
			"ports":      []any{map[string]any{"name": "grpc", "port": int64(8443), "targetPort": int64(18443), "appProtocol": "grpc"}},
			"state":      "Available",
		},
		"status": map[string]any{
			"addresses":        []any{map[string]any{"hostname": "cart.shop.svc.mesh.local", "origin": "HostnameGenerator"}},
			"vips":             []any{map[string]any{"ip": "241.0.0.7"}},
			"dataplaneProxies": map[string]any{"total": int64(3), "connected": int64(2), "healthy": int64(1)},
			"tls":              map[string]any{"status": "Ready"},
		},
	})
	acctest.ApplyAs(t, acctest.Cluster(t, acctest.West), kube.KumaMeshService, "kuma-cp", map[string]any{
		"metadata": map[string]any{"name": "bare", "namespace": ns},
		"spec":     map[string]any{},
	})
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
data "zerotrust_mesh_service" "cart" {
  cluster   = "west"
  namespace = %[1]q
  name      = "cart"
}

data "zerotrust_mesh_service" "bare" {
  cluster   = "west"
  namespace = %[1]q
  name      = "bare"
}

check "cart_trusts_east" {
  assert {
    condition     = contains(data.zerotrust_mesh_service.cart.spiffe_ids, %[2]q)
    error_message = "cart does not carry its east identity"
  }
}
`, ns, id)
	const cart, bare = "data.zerotrust_mesh_service.cart", "data.zerotrust_mesh_service.bare"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(cart, tfjsonpath.New("identities"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectExact(map[string]knownvalue.Check{
							"type": knownvalue.StringExact("SpiffeID"), "value": knownvalue.StringExact(id),
						}),
					})),
					statecheck.ExpectKnownValue(cart, tfjsonpath.New("ports"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectExact(map[string]knownvalue.Check{
							"name": knownvalue.StringExact("grpc"), "port": knownvalue.Int64Exact(8443),
							"target_port": knownvalue.StringExact("18443"), "app_protocol": knownvalue.StringExact("grpc"),
						}),
					})),
					statecheck.ExpectKnownValue(cart, tfjsonpath.New("selector"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"dataplane_labels": knownvalue.Null(), "dataplane_ref": knownvalue.StringExact("cart-dp"),
					})),
					statecheck.ExpectKnownValue(cart, tfjsonpath.New("state"), knownvalue.StringExact("Available")),
					statecheck.ExpectKnownValue(cart, tfjsonpath.New("hostnames"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("cart.shop.svc.mesh.local")})),
					statecheck.ExpectKnownValue(cart, tfjsonpath.New("vips"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("241.0.0.7")})),
					statecheck.ExpectKnownValue(cart, tfjsonpath.New("dataplane_proxies"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"total": knownvalue.Int64Exact(3), "connected": knownvalue.Int64Exact(2), "healthy": knownvalue.Int64Exact(1),
					})),
					statecheck.ExpectKnownValue(cart, tfjsonpath.New("tls_status"), knownvalue.StringExact("Ready")),

					statecheck.ExpectKnownValue(bare, tfjsonpath.New("identities"), knownvalue.ListSizeExact(0)),
					statecheck.ExpectKnownValue(bare, tfjsonpath.New("spiffe_ids"), knownvalue.ListSizeExact(0)),
					statecheck.ExpectKnownValue(bare, tfjsonpath.New("ports"), knownvalue.ListSizeExact(0)),
					statecheck.ExpectKnownValue(bare, tfjsonpath.New("selector"), knownvalue.Null()),
					// The CRD's default.
					statecheck.ExpectKnownValue(bare, tfjsonpath.New("state"), knownvalue.StringExact("Unavailable")),
					statecheck.ExpectKnownValue(bare, tfjsonpath.New("dataplane_proxies"), knownvalue.Null()),
					statecheck.ExpectKnownValue(bare, tfjsonpath.New("tls_status"), knownvalue.Null()),
				},
			},
			{
				Config: acctest.ProviderConfig(t) + fmt.Sprintf(`
data "zerotrust_mesh_service" "missing" {
  cluster   = "west"
  namespace = %q
  name      = "missing"
}
`, ns),
				ExpectError: regexp.MustCompile(`(?s)MeshService Not Found.*"missing"\s+does\s+not\s+exist\s+in\s+namespace\s+"` +
					ns + `"\s+of\s+cluster\s+"west"`),
			},
		},
	})
}
