package reliability

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	tftest "github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// expectOnlyChanged is a plan check: the resource's planned update changes
// exactly the given top-level attributes, nothing else.
type expectOnlyChanged struct {
	address string
	attrs   []string
}

func (e expectOnlyChanged) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != e.address {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		after, _ := rc.Change.After.(map[string]any)
		unknown, _ := rc.Change.AfterUnknown.(map[string]any)
		var changed []string
		for k, b := range before {
			if u, _ := unknown[k].(bool); u || !reflect.DeepEqual(b, after[k]) {
				changed = append(changed, k)
			}
		}
		sort.Strings(changed)
		want := append([]string(nil), e.attrs...)
		sort.Strings(want)
		if !reflect.DeepEqual(changed, want) {
			resp.Error = fmt.Errorf("%s: planned changes to %v, want exactly %v", e.address, changed, want)
		}
		return
	}
	resp.Error = fmt.Errorf("%s: not in the plan", e.address)
}

// TestAccDriftIsPlannedBackAndOthersFieldsKept: another field manager edits a
// field the provider owns and adds labels, annotations and a spec field the
// provider does not set. The next plan changes exactly that one attribute
// back; applying it (force_conflicts, since the field is now shared) keeps
// every field of the other manager, and the plan after is empty.
func TestAccDriftIsPlannedBackAndOthersFieldsKept(t *testing.T) {
	c := cluster(t, west)
	who := map[string]identity{west: newIdentity(t, c, "drift")}
	name := acctest.UniqueName("drift")
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const address = "zerotrust_federated_trust_domain.this"
	config := func() string {
		return providerBlock(who, west) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "this" {
  cluster                 = "west"
  name                    = %[1]q
  trust_domain            = "%[1]s.test"
  bundle_endpoint_url     = "https://bundles.%[1]s.test"
  bundle_endpoint_profile = { type = "https_web" }
  # The field goes back even though another manager now holds it.
  force_conflicts         = true
}
`, name)
	}
	othersKept := func(*tftest.State) error {
		obj, err := dyn.Resource(cftdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := obj.GetLabels()["team"]; got != "mesh" {
			return fmt.Errorf("label team = %q, want the other manager's \"mesh\"", got)
		}
		if got := obj.GetAnnotations()["example.test/owner"]; got != "platform" {
			return fmt.Errorf("annotation example.test/owner = %q, want the other manager's \"platform\"", got)
		}
		spec, _ := obj.Object["spec"].(map[string]any)
		if got := spec["bundleEndpointURL"]; got != "https://bundles."+name+".test" {
			return fmt.Errorf("spec.bundleEndpointURL = %v, want the configured URL back", got)
		}
		managers := map[string]bool{}
		for _, mf := range obj.GetManagedFields() {
			managers[mf.Manager] = true
		}
		if !managers["drift-editor"] {
			return fmt.Errorf("the other manager lost all its fields: managers %v", managers)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(*tftest.State) error {
			left, err := cftdNames(ctx, c, name)
			if err != nil {
				return err
			}
			if len(left) != 0 {
				return fmt.Errorf("destroy left %v", left)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{Config: config()},
			{
				PreConfig: func() {
					patch := []byte(`{"metadata":{"labels":{"team":"mesh"},"annotations":{"example.test/owner":"platform"}},` +
						`"spec":{"bundleEndpointURL":"https://elsewhere.test"}}`)
					if _, err := dyn.Resource(cftdGVR).Patch(ctx, name, types.MergePatchType, patch,
						metav1.PatchOptions{FieldManager: "drift-editor"}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config(),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
						expectOnlyChanged{address, []string{"bundle_endpoint_url"}},
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: othersKept,
			},
			{
				// Only the other manager's fields changed since: nothing to do.
				PreConfig: func() {
					patch := []byte(`{"metadata":{"labels":{"extra":"yes"}}}`)
					if _, err := dyn.Resource(cftdGVR).Patch(ctx, name, types.MergePatchType, patch,
						metav1.PatchOptions{FieldManager: "drift-editor"}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config(),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: othersKept,
			},
		},
	})
	if !t.Failed() {
		driftOK.Store(true)
	}
}
