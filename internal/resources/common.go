package resources

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
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

// optionalString and resourceID are defined in providerdata, which the data
// sources share; these names keep the package's call sites short.
var (
	optionalString = providerdata.OptionalString
	resourceID     = providerdata.ResourceID
)

// adoptGuard is the check Create makes against an object that already exists
// under the name it is about to apply: applying over an object another
// manager made would silently take it over, so such an object is refused
// with an "Object Already Exists" error at attribute at, whose detail (which
// object it is, on which cluster, and how to import it) the caller words.
// A nil obj (nothing there) and an object client's manager applied itself (a
// create whose response never reached the state) pass; one a Helm release
// owns gets refuseHelmOwned's error instead. It reports whether Create may
// go on.
//
// The detail ends with who did write the object: with one field_manager per
// Terraform workspace (the guide "One workspace per cluster"), another
// workspace's manager there says which workspace already declares it.
func adoptGuard(obj *unstructured.Unstructured, client *kube.Client, at path.Path, detail string, diags *diag.Diagnostics) bool {
	if obj == nil || applier(client.FieldManager).wrote(obj) {
		return true
	}
	if !refuseHelmOwned(obj, client.DisplayName(), at, diags) {
		diags.AddAttributeError(at, "Object Already Exists", detail+" "+writtenBy(obj, client.FieldManager))
	}
	return false
}

// writtenBy is a sentence naming the field managers that wrote obj, for
// errors about an object this configuration's manager did not write.
func writtenBy(obj *unstructured.Unstructured, manager string) string {
	var names []string
	for _, f := range obj.GetManagedFields() {
		if !slices.Contains(names, f.Manager) {
			names = append(names, f.Manager)
		}
	}
	if len(names) == 0 {
		return fmt.Sprintf("The object records no field manager; this configuration's field manager is %q.", manager)
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	return fmt.Sprintf("It was written by field manager %s, not by this configuration's field manager %q: another "+
		"Terraform workspace (each sets its own provider field_manager) or another tool manages it.",
		strings.Join(quoted, ", "), manager)
}

// schemaTypes gives the attribute types of the object at an attribute path of
// a resource's schema (through list, set and map elements; no names: the
// resource itself). It is each resource's one source of attribute types for
// null and new object values, so they cannot drift from the schema. The map
// is shared by every caller: read it, never write to it (framework values
// keep it as given and only read it).
type schemaTypes func(names ...string) map[string]attr.Type

// schemaTypesOf derives schemaTypes from the schema's type, built once, and
// each path's map once: the framework's AttributeTypes copies its map at
// every call, which made resolving three paths the largest allocation of a
// refresh.
func schemaTypesOf(schemaType func() attr.Type) schemaTypes {
	root := sync.OnceValue(schemaType)
	var byPath sync.Map // path joined by NUL -> map[string]attr.Type
	return func(names ...string) map[string]attr.Type {
		key := strings.Join(names, "\x00")
		if v, ok := byPath.Load(key); ok {
			attrs, _ := v.(map[string]attr.Type) // byPath holds nothing else
			return attrs
		}
		attrs := objectAttrTypes(root())
		for _, name := range names {
			attrs = objectAttrTypes(attrs[name])
		}
		if attrs == nil {
			panic(fmt.Sprintf("resources: %v is not an object attribute path of the schema", names))
		}
		byPath.Store(key, attrs)
		return attrs
	}
}

func objectAttrTypes(t attr.Type) map[string]attr.Type {
	switch t := t.(type) {
	case attr.TypeWithElementType:
		return objectAttrTypes(t.ElementType())
	case attr.TypeWithAttributeTypes:
		return t.AttributeTypes()
	}
	return nil
}
