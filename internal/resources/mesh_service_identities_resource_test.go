package resources_test

import (
	"fmt"
	"reflect"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

const msiAddr = "zerotrust_mesh_service_identities.this"

var meshServiceGVR = kube.KumaMeshService.GVR()

// meshServiceObject is a MeshService as a user defines one for a service of
// a federated peer: ports and a selector, no identities.
func meshServiceObject(ns, name string) map[string]any {
	return map[string]any{
		"apiVersion": "kuma.io/v1alpha1", "kind": "MeshService",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"selector": map[string]any{"dataplaneLabels": map[string]any{"matchLabels": map[string]any{"app": name}}},
			"ports": []any{
				map[string]any{"name": "http", "port": int64(8080), "targetPort": "http", "appProtocol": "http"},
				map[string]any{"port": int64(9090), "targetPort": int64(9091)},
			},
		},
	}
}

func msiConfig(t *testing.T, ns, name, identities string) string {
	return acctest.ProviderConfig(t) + fmt.Sprintf(`
locals {
  peer = "peer-%[1]s.test"
}

resource "zerotrust_mesh_service_identities" "this" {
  cluster    = "west"
  namespace  = %[1]q
  name       = %[2]q
  identities = %[3]s
}

data "zerotrust_mesh_service" "this" {
  cluster    = "west"
  namespace  = zerotrust_mesh_service_identities.this.namespace
  name       = zerotrust_mesh_service_identities.this.name
}
`, ns, name, identities)
}

// checkMeshServiceKept checks that the object still holds what its creator
// wrote (selector, ports and the CRD's defaults), owned by the creator, and
// spec.identities as want (nil: absent).
func checkMeshServiceKept(get func() (*unstructured.Unstructured, error), before *unstructured.Unstructured, want []any) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := get()
		if err != nil {
			return err
		}
		for _, field := range []string{"selector", "ports", "state"} {
			was, _, _ := unstructured.NestedFieldCopy(before.Object, "spec", field)
			now, _, _ := unstructured.NestedFieldCopy(obj.Object, "spec", field)
			if now == nil || !reflect.DeepEqual(now, was) {
				return fmt.Errorf("spec.%s changed: %v -> %v", field, was, now)
			}
		}
		got, found, _ := unstructured.NestedSlice(obj.Object, "spec", "identities")
		if want == nil && found {
			return fmt.Errorf("spec.identities is %v, want it absent", got)
		}
		if want != nil && !reflect.DeepEqual(got, want) {
			return fmt.Errorf("spec.identities is %v, want %v", got, want)
		}
		for _, m := range obj.GetManagedFields() {
			if m.Manager == acctest.OperatorManager && m.Operation == metav1.ManagedFieldsOperationApply {
				return nil
			}
		}
		return fmt.Errorf("the creator %q no longer holds fields: %v", acctest.OperatorManager, fieldManagers(obj))
	}
}

// setMeshServiceIdentities sets spec.identities of a MeshService object.
func setMeshServiceIdentities(t *testing.T, obj map[string]any, ids ...string) {
	t.Helper()
	if err := unstructured.SetNestedSlice(obj, spiffeIdentities(ids...), "spec", "identities"); err != nil {
		t.Fatal(err)
	}
}

func spiffeIdentities(ids ...string) []any {
	out := make([]any, 0, len(ids))
	for _, id := range ids {
		out = append(out, map[string]any{"type": "SpiffeID", "value": id})
	}
	return out
}

// TestAccMeshServiceIdentities_lifecycle sets the identities of a
// MeshService another field manager created (the upstream Kuma CRD): the
// provider owns spec.identities and nothing else, the creator keeps its
// fields; an update rewrites the list; an import plans nothing; destroy
// gives spec.identities back and leaves the MeshService. The data source
// reads identities, ports and state along the way.
func TestAccMeshServiceIdentities_lifecycle(t *testing.T) {
	ns := acctest.UniqueNamespace(t, acctest.West, "msid")
	const name = "cart"
	before := acctest.ApplyAsOperator(t, acctest.West, meshServiceGVR, meshServiceObject(ns, name))
	get := acctest.ObjectGetter(t, acctest.West, meshServiceGVR, ns, name)
	peer := "peer-" + ns + ".test"
	first := "spiffe://" + peer + "/ns/shop/sa/cart"
	second := "spiffe://" + peer + "/ns/shop/sa/cart-canary"
	const ds = "data.zerotrust_mesh_service.this"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkMeshServiceKept(get, before, nil),
		Steps: []resource.TestStep{
			{
				Config: msiConfig(t, ns, name, `[provider::zerotrust::spiffe_id(local.peer, "ns", "shop", "sa", "cart")]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(msiAddr, tfjsonpath.New("id"), knownvalue.StringExact("west/"+ns+"/"+name)),
					statecheck.ExpectKnownValue(msiAddr, tfjsonpath.New("identities"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(first)})),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("identities"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectExact(map[string]knownvalue.Check{
							"type": knownvalue.StringExact("SpiffeID"), "value": knownvalue.StringExact(first),
						}),
					})),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("spiffe_ids"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(first)})),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("ports"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectExact(map[string]knownvalue.Check{
							"name": knownvalue.StringExact("http"), "port": knownvalue.Int64Exact(8080),
							"target_port": knownvalue.StringExact("http"), "app_protocol": knownvalue.StringExact("http"),
						}),
						// appProtocol defaulted by the CRD; targetPort an integer.
						knownvalue.ObjectExact(map[string]knownvalue.Check{
							"name": knownvalue.Null(), "port": knownvalue.Int64Exact(9090),
							"target_port": knownvalue.StringExact("9091"), "app_protocol": knownvalue.StringExact("tcp"),
						}),
					})),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("state"), knownvalue.StringExact("Unavailable")),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("selector"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"dataplane_labels": knownvalue.MapExact(map[string]knownvalue.Check{"app": knownvalue.StringExact(name)}),
						"dataplane_ref":    knownvalue.Null(),
					})),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkMeshServiceKept(get, before, spiffeIdentities(first)),
					checkAppliedFields(t, get, []string{"spec.identities"}),
				),
			},
			{
				Config: msiConfig(t, ns, name, fmt.Sprintf(`[%q, %q]`, second, first)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(msiAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("spiffe_ids"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringExact(second), knownvalue.StringExact(first),
					})),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkMeshServiceKept(get, before, spiffeIdentities(second, first)),
					checkAppliedFields(t, get, []string{"spec.identities"}),
				),
			},
			{
				ResourceName:      msiAddr,
				ImportState:       true,
				ImportStateId:     "west/" + ns + "/" + name,
				ImportStateVerify: true,
			},
		},
	})
}

// TestAccMeshServiceIdentities_identityAndList imports by resource identity
// (Terraform >= 1.12) with an empty plan, and lists the MeshServices that
// have SpiffeID identities (Terraform >= 1.14): one without is left out, and
// the trust_domain filter selects by the identities' trust domain.
func TestAccMeshServiceIdentities_identityAndList(t *testing.T) {
	ns := acctest.UniqueNamespace(t, acctest.West, "msls")
	acctest.ApplyAsOperator(t, acctest.West, meshServiceGVR, meshServiceObject(ns, "cart"))
	acctest.ApplyAsOperator(t, acctest.West, meshServiceGVR, meshServiceObject(ns, "plain"))
	other := meshServiceObject(ns, "other")
	setMeshServiceIdentities(t, other, "spiffe://elsewhere-"+ns+".test/ns/x/sa/y")
	acctest.ApplyAsOperator(t, acctest.West, meshServiceGVR, other)
	peer := "peer-" + ns + ".test"
	config := msiConfig(t, ns, "cart", `[provider::zerotrust::spiffe_id(local.peer, "ns", "shop", "sa", "cart")]`)
	identity := map[string]knownvalue.Check{
		"cluster": knownvalue.StringExact(acctest.West), "namespace": knownvalue.StringExact(ns), "name": knownvalue.StringExact("cart"),
	}
	const byNS, byTD = "zerotrust_mesh_service_identities.by_namespace", "zerotrust_mesh_service_identities.by_trust_domain"
	query := fmt.Sprintf(`
list "zerotrust_mesh_service_identities" "by_namespace" {
  provider         = zerotrust
  include_resource = true
  config {
    cluster   = "west"
    namespace = %q
  }
}

list "zerotrust_mesh_service_identities" "by_trust_domain" {
  provider = zerotrust
  config {
    trust_domain = %q
  }
}
`, ns, peer)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)},
		Steps: []resource.TestStep{
			{
				Config:            config,
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectIdentity(msiAddr, identity)},
			},
			{
				ResourceName:    msiAddr,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithResourceIdentity,
				ImportPlanChecks: resource.ImportPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(msiAddr, plancheck.ResourceActionNoop)},
				},
			},
			{
				Query:  true,
				Config: query,
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength(byNS, 2),
					querycheck.ExpectIdentity(byNS, identity),
					querycheck.ExpectResourceDisplayName(byNS, queryfilter.ByResourceIdentity(identity),
						knownvalue.StringExact("west/"+ns+"/cart")),
					querycheck.ExpectResourceKnownValues(byNS, queryfilter.ByResourceIdentity(identity), []querycheck.KnownValueCheck{
						{Path: tfjsonpath.New("identities"), KnownValue: knownvalue.ListExact([]knownvalue.Check{
							knownvalue.StringExact("spiffe://" + peer + "/ns/shop/sa/cart"),
						})},
					}),
					querycheck.ExpectLength(byTD, 1),
					querycheck.ExpectIdentity(byTD, identity),
				},
			},
		},
	})
}

// TestAccMeshServiceIdentities_ownershipAndMissing: a MeshService that does
// not exist is flagged at plan and fails the apply naming it, without
// creating anything; identities another manager set fail the apply naming
// that manager, and force_conflicts takes them over.
func TestAccMeshServiceIdentities_ownershipAndMissing(t *testing.T) {
	ns := acctest.UniqueNamespace(t, acctest.West, "msown")
	owned := meshServiceObject(ns, "owned")
	setMeshServiceIdentities(t, owned, "spiffe://kuma-"+ns+".test/ns/shop/sa/owned")
	acctest.ApplyAsOperator(t, acctest.West, meshServiceGVR, owned)
	getMissing := acctest.ObjectGetter(t, acctest.West, meshServiceGVR, ns, "missing")
	getOwned := acctest.ObjectGetter(t, acctest.West, meshServiceGVR, ns, "owned")
	want := "spiffe://peer-" + ns + ".test/ns/shop/sa/owned"
	forced := func(force bool) string {
		return acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_mesh_service_identities" "this" {
  cluster         = "west"
  namespace       = %q
  name            = "owned"
  identities      = [%q]
  force_conflicts = %t
}
`, ns, want, force)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := getMissing(); err == nil {
				return fmt.Errorf("MeshService %s/missing exists: the provider must never create one", ns)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_mesh_service_identities" "this" {
  cluster    = "west"
  namespace  = %q
  name       = "missing"
  identities = ["spiffe://peer.test/ns/shop/sa/missing"]
}
`, ns),
				ExpectError: regexp.MustCompile(`(?s)MeshService Not Found.*"missing"\s+does\s+not\s+exist`),
			},
			{
				Config:      forced(false),
				ExpectError: regexp.MustCompile(`(?s)` + acctest.OperatorManager + `.*spec\.identities`),
			},
			{
				Config: forced(true),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkAppliedFields(t, getOwned, []string{"spec.identities"}),
					func(*terraform.State) error {
						obj, err := getOwned()
						if err != nil {
							return err
						}
						if got, _, _ := unstructured.NestedSlice(obj.Object, "spec", "identities"); !reflect.DeepEqual(got, spiffeIdentities(want)) {
							return fmt.Errorf("spec.identities is %v, want %v", got, spiffeIdentities(want))
						}
						return nil
					},
				),
			},
		},
	})
	// Taken over with force, the field was the provider's alone, so the
	// destroy removed it; the MeshService itself stays.
	obj, err := getOwned()
	if err != nil {
		t.Fatalf("MeshService %s/owned after destroy: %v", ns, err)
	}
	if ids, found, _ := unstructured.NestedSlice(obj.Object, "spec", "identities"); found {
		t.Errorf("spec.identities after destroy: %v, want it released", ids)
	}
}
