// Package resources implements the provider's managed resources.
package resources

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func clusterAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Key of the provider's `clusters` map naming the cluster to manage this object in. " +
			"Unset means the provider's `kubernetes` connection. Changing it replaces the object.",
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
	}
}

// idAttribute is the computed id every resource has; description says what
// it is made of (it doubles as the import ID).
func idAttribute(description string) schema.StringAttribute {
	return schema.StringAttribute{
		Computed:            true,
		MarkdownDescription: description,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}

func forceConflictsAttribute() schema.BoolAttribute {
	return schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(false),
		MarkdownDescription: "Take ownership of fields another field manager owns (server-side apply `force`). " +
			"Defaults to `false`: such a conflict fails the apply and names the other manager.",
	}
}

// bootstrapOnly keeps the prior state value once the object exists, so a
// value that matters only at creation never plans an update, not even when
// it is removed from the configuration (the attribute must be Optional and
// Computed for that). Terraform accepts a plan that returns a non-null prior
// value instead of a differing configured one; only an object adopted without
// a value, whose configuration sets one, must plan the configured value. A
// replacement is planned as a create, from the configuration again.
type bootstrapOnly struct{}

func (bootstrapOnly) Description(context.Context) string {
	return "Only the value at creation matters; later changes plan no update."
}

func (m bootstrapOnly) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (bootstrapOnly) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	if req.State.Raw.IsNull() {
		if req.ConfigValue.IsNull() {
			resp.PlanValue = types.StringNull()
		}
		return
	}
	if !req.StateValue.IsNull() || req.ConfigValue.IsNull() {
		resp.PlanValue = req.StateValue
	}
}

// optionalString maps "" to null, for fields the API omits when empty.
func optionalString(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// resourceID is "<name>" on the default connection and "<cluster>/<name>"
// otherwise; it doubles as the import ID. Cluster keys may contain "/", names
// may not, so the last "/" separates them.
func resourceID(cluster types.String, name string) string {
	if cluster.IsNull() || cluster.ValueString() == "" {
		return name
	}
	return cluster.ValueString() + "/" + name
}

func parseImportID(id string) (types.String, string) {
	i := strings.LastIndex(id, "/")
	if i < 0 {
		return types.StringNull(), id
	}
	return types.StringValue(id[:i]), id[i+1:]
}

func importHint(cluster, name string) string {
	if cluster == "" {
		return name
	}
	return cluster + "/" + name
}

// ownedBy reports whether manager applied fields of obj: the object was made
// by an earlier apply of this provider whose result never reached the state
// (a lost response), so creating it again is a harmless re-apply.
func ownedBy(obj *unstructured.Unstructured, manager string) bool {
	for _, f := range obj.GetManagedFields() {
		if f.Manager == manager && f.Operation == "Apply" {
			return true
		}
	}
	return false
}
