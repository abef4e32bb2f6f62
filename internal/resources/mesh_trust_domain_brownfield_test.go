package resources_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// brownfieldMesh is a mesh object someone else created before Terraform
// knew it, and the configuration a user writes to adopt it.
type brownfieldMesh struct {
	cluster  string
	gvr      schema.GroupVersionResource
	object   map[string]any
	importID string
	config   string
	// state is what the import must read: attributes whose field is absent
	// are null, computed ones follow from what the object holds.
	state map[string]knownvalue.Check
	// defaults are fields the API server filled in from the CRD: they stay
	// the creator's, never re-sent by the provider.
	defaults map[string]any
}

// TestAccMeshTrustDomain_brownfieldImport adopts, for each kind, an object
// another field manager created with only the fields its CRD requires (the
// API server adds the CRD's defaults), with `terraform import` and with an
// `import {}` block: both read it without a diff, and the plan that follows
// is empty, so nothing is written to the cluster.
func TestAccMeshTrustDomain_brownfieldImport(t *testing.T) {
	kumaNS := acctest.UniqueNamespace(t, acctest.West, "bfkuma")
	kymaNS := acctest.UniqueNamespace(t, acctest.East, "bfkyma")
	sailName := acctest.UniqueName("bfsail")
	peer := "peer-" + kumaNS + ".test"
	pem := peerPEM(t, peer)
	kumaName := strings.ReplaceAll(peer, ".", "-")
	const istioDefault = "spiffe://cluster.local/"

	cases := map[string]brownfieldMesh{
		"istio_sail": {
			cluster: acctest.West, gvr: sailIstioGVR,
			// Sail's spec, spec.version and spec.namespace are required but
			// defaulted: the smallest valid object has no spec at all.
			object: map[string]any{
				"apiVersion": "sailoperator.io/v1", "kind": "Istio", "metadata": map[string]any{"name": sailName},
			},
			importID: "west/istio_sail:" + sailName,
			config: fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "this" {
  cluster = "west"
  mesh    = { kind = "istio_sail", name = %q }
}
`, sailName),
			state: map[string]knownvalue.Check{
				"trust_domain":                   knownvalue.Null(),
				"spiffe_id_prefix":               knownvalue.StringExact(istioDefault),
				"trust_domain_aliases":           knownvalue.Null(),
				"ca_certificates":                knownvalue.Null(),
				"ca_address":                     knownvalue.Null(),
				"previous_trust_domains":         knownvalue.ListSizeExact(0),
				"effective_trust_domain_aliases": knownvalue.ListSizeExact(0),
			},
			defaults: map[string]any{
				"spec.namespace": "istio-system", "spec.updateStrategy.type": "InPlace", "spec.version": sailDefaultVersion(t),
			},
		},
		"istio_kyma": {
			cluster: acctest.East, gvr: kymaIstioGVR,
			object: map[string]any{
				"apiVersion": "operator.kyma-project.io/v1alpha2", "kind": "Istio",
				"metadata": map[string]any{"name": "default", "namespace": kymaNS},
			},
			importID: "istio_kyma:" + kymaNS + ":default",
			config: fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "this" {
  mesh = { kind = "istio_kyma", namespace = %q }
}
`, kymaNS),
			state: map[string]knownvalue.Check{
				"trust_domain":           knownvalue.Null(),
				"spiffe_id_prefix":       knownvalue.StringExact(istioDefault),
				"previous_trust_domains": knownvalue.Null(),
			},
		},
		// Kuma's own examples label a MeshTrust with its mesh; the CRD does
		// not require it, so an unlabelled one must adopt as cleanly.
		"kuma": {
			cluster: acctest.West, gvr: meshTrustGVR,
			object: map[string]any{
				"apiVersion": "kuma.io/v1alpha1", "kind": "MeshTrust",
				"metadata": map[string]any{"name": kumaName, "namespace": kumaNS},
				"spec": map[string]any{
					"trustDomain": peer,
					"caBundles":   []any{map[string]any{"type": "Pem", "pem": map[string]any{"value": pem}}},
				},
			},
			importID: "west/kuma:" + kumaNS + ":" + kumaName,
			config: fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "this" {
  cluster      = "west"
  mesh         = { kind = "kuma", namespace = %q }
  trust_domain = %q
  ca_bundles   = [%q]
}
`, kumaNS, peer, pem),
			state: map[string]knownvalue.Check{
				"mesh": knownvalue.ObjectExact(map[string]knownvalue.Check{
					"kind": knownvalue.StringExact("kuma"), "name": knownvalue.StringExact(kumaName),
					"namespace": knownvalue.StringExact(kumaNS), "kuma_mesh": knownvalue.Null(),
				}),
				"trust_domain":     knownvalue.StringExact(peer),
				"spiffe_id_prefix": knownvalue.StringExact("spiffe://" + peer + "/"),
			},
		},
		"kuma_labelled": {
			cluster: acctest.West, gvr: meshTrustGVR,
			object: map[string]any{
				"apiVersion": "kuma.io/v1alpha1", "kind": "MeshTrust",
				"metadata": map[string]any{"name": "labelled", "namespace": kumaNS, "labels": map[string]any{"kuma.io/mesh": "default"}},
				"spec": map[string]any{
					"trustDomain": peer,
					"caBundles":   []any{map[string]any{"type": "Pem", "pem": map[string]any{"value": pem}}},
				},
			},
			importID: "west/kuma:" + kumaNS + ":labelled",
			config: fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "this" {
  cluster      = "west"
  mesh         = { kind = "kuma", namespace = %q, name = "labelled" }
  trust_domain = %q
  ca_bundles   = [%q]
}
`, kumaNS, peer, pem),
			state: map[string]knownvalue.Check{
				"mesh": knownvalue.ObjectExact(map[string]knownvalue.Check{
					"kind": knownvalue.StringExact("kuma"), "name": knownvalue.StringExact("labelled"),
					"namespace": knownvalue.StringExact(kumaNS), "kuma_mesh": knownvalue.StringExact("default"),
				}),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			testBrownfieldMesh(t, tc)
		})
	}
}

func testBrownfieldMesh(t *testing.T, tc brownfieldMesh) {
	const addr = "zerotrust_mesh_trust_domain.this"
	created := acctest.ApplyAsOperator(t, tc.cluster, tc.gvr, tc.object)
	get := acctest.ObjectGetter(t, tc.cluster, tc.gvr, created.GetNamespace(), created.GetName())
	config := acctest.ProviderConfig(t) + tc.config

	var importChecks []plancheck.PlanCheck
	var stateChecks []statecheck.StateCheck
	for attr, check := range tc.state {
		importChecks = append(importChecks, plancheck.ExpectKnownValue(addr, tfjsonpath.New(attr), check))
		stateChecks = append(stateChecks, statecheck.ExpectKnownValue(addr, tfjsonpath.New(attr), check))
	}
	// Neither import nor the plans after it may touch the object: same
	// resourceVersion and spec, and no field owned by the provider.
	untouched := func(*terraform.State) error {
		obj, err := get()
		if err != nil {
			return err
		}
		return sameUntouchedObject(created, obj)
	}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		// Destroy hands back fields the resource never took: the object,
		// which belongs to someone else, stays as it was.
		CheckDestroy: untouched,
		Steps: []resource.TestStep{
			{
				// import {} block: the framework fails the step unless the
				// plan is a no-op import.
				Config:           config,
				ResourceName:     addr,
				ImportState:      true,
				ImportStateKind:  resource.ImportBlockWithID,
				ImportStateId:    tc.importID,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: importChecks},
			},
			{
				// terraform import, kept in state for the steps below.
				Config:             config,
				ResourceName:       addr,
				ImportState:        true,
				ImportStateId:      tc.importID,
				ImportStatePersist: true,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 {
						return fmt.Errorf("imported %d instances, want 1", len(states))
					}
					if want := strings.TrimPrefix(tc.importID, "west/"); !strings.HasSuffix(states[0].ID, want) {
						return fmt.Errorf("imported id %q, want it to end in %q", states[0].ID, want)
					}
					return untouched(nil)
				},
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: stateChecks,
				Check:             resource.ComposeAggregateTestCheckFunc(untouched, acctest.CheckObjectFields(t, get, tc.defaults)),
			},
		},
	})
}

// sameUntouchedObject reports how now differs from the object as its creator
// left it, if the provider wrote anything.
func sameUntouchedObject(created, now *unstructured.Unstructured) error {
	for _, entry := range now.GetManagedFields() {
		if entry.Manager == "zerotrust" {
			return fmt.Errorf("%s %s/%s: the provider's field manager owns fields after an import: %s",
				now.GetKind(), now.GetNamespace(), now.GetName(), entry.FieldsV1.Raw)
		}
	}
	if now.GetResourceVersion() != created.GetResourceVersion() {
		var managers []string
		for _, e := range now.GetManagedFields() {
			managers = append(managers, fmt.Sprintf("%s/%s %s", e.Manager, e.Operation, e.FieldsV1.Raw))
		}
		return fmt.Errorf("%s %s/%s: resourceVersion %s, want %s (written since its creator applied it); managed fields: %s; object: %v",
			now.GetKind(), now.GetNamespace(), now.GetName(), now.GetResourceVersion(), created.GetResourceVersion(),
			strings.Join(managers, "; "), now.Object)
	}
	if !reflect.DeepEqual(now.Object["spec"], created.Object["spec"]) || !reflect.DeepEqual(now.GetLabels(), created.GetLabels()) {
		return fmt.Errorf("%s %s/%s: spec %v labels %v, want %v %v", now.GetKind(), now.GetNamespace(), now.GetName(),
			now.Object["spec"], now.GetLabels(), created.Object["spec"], created.GetLabels())
	}
	return nil
}

// sailDefaultVersion is the spec.version the released Sail CRD defaults to.
func sailDefaultVersion(t *testing.T) string {
	t.Helper()
	crd, err := harness.UpstreamCRD("istios.sailoperator.io")
	if err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if def, found, _ := unstructured.NestedString(m, "schema", "openAPIV3Schema", "properties", "spec", "properties", "version", "default"); found {
			return def
		}
	}
	t.Fatal("the released Sail CRD has no spec.version default")
	return ""
}
