package resources

import (
	"context"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// planApplyTimeout bounds the plan-time dry run: a slow cluster must not
// hold up the plan, and the apply asks again anyway.
const planApplyTimeout = 10 * time.Second

// plannedApply describes the server-side apply an update plan leads to.
type plannedApply struct {
	Kind kube.Kind
	// Object builds what the apply would send; ok false skips the check
	// (the object cannot be known at plan). Called only when the check runs.
	Object func() (obj *unstructured.Unstructured, ok bool)
	// Outputs are top-level attributes the cluster computes and the apply
	// never sends: unknown values there do not make the object unknown.
	Outputs []string
	// Forced, when set, tells conflicts the apply forces itself (it retries
	// with force): the dry run then does the same instead of warning.
	Forced func(err error) bool
}

// checkPlannedApply asks the cluster, by a server-side apply dry run with the
// provider's field manager, what the apply of an update plan would get:
//   - fields another field manager owns: a warning that the apply will fail
//     without force_conflicts, naming the managers and their fields;
//   - the object refused (a field the installed CRD does not declare, a
//     value outside its limits, a CEL rule, an admission policy): an error
//     now, naming the fields, the object and the cluster.
//
// It runs only for an in-place update of an existing object whose planned
// values are all known, on a cluster whose connection is known: never for a
// create (planning a new object must not need the API), a replacement, a
// destroy or a no-op plan. Anything else the dry run meets (unreachable,
// throttled, forbidden to the credentials that plan, CRD missing) says
// nothing: the apply decides, with its retries and its own diagnostics.
// Call it last in ModifyPlan, once resp.Plan holds the final plan.
func checkPlannedApply(ctx context.Context, data *providerdata.Data, req resource.ModifyPlanRequest,
	resp *resource.ModifyPlanResponse, a plannedApply) {
	if data == nil || data.Clusters == nil || req.State.Raw.IsNull() || resp.Plan.Raw.IsNull() || resp.Diagnostics.HasError() ||
		len(resp.RequiresReplace) > 0 || resp.Plan.Raw.Equal(req.State.Raw) || !req.Config.Raw.IsFullyKnown() ||
		unknownInputs(resp.Plan.Raw, a.Outputs) || replacedByAttribute(ctx, req, resp.Plan) {
		return
	}
	var cluster types.String
	var force types.Bool
	if d := resp.Plan.GetAttribute(ctx, path.Root("cluster"), &cluster); d.HasError() {
		return
	}
	if d := resp.Plan.GetAttribute(ctx, path.Root("force_conflicts"), &force); d.HasError() {
		return
	}
	ctx, client, cancel := planLookup(ctx, data, cluster, planApplyTimeout, &resp.Diagnostics)
	defer cancel()
	if client == nil {
		return
	}
	obj, ok := a.Object()
	if !ok || obj == nil {
		return
	}
	_, err := client.ApplyDryRun(ctx, a.Kind, obj, force.ValueBool())
	if kube.IsFieldConflict(err) && a.Forced != nil && a.Forced(err) {
		_, err = client.ApplyDryRun(ctx, a.Kind, obj, true)
	}
	switch {
	case err == nil:
	case kube.IsFieldConflict(err):
		resp.Diagnostics.Append(kube.ConflictWarning(err))
	case kube.IsRejected(err):
		d := kube.Diagnostic(err, "apply the planned change")
		resp.Diagnostics.AddError(d.Summary(), d.Detail()+
			"\n\nFound at plan time by a server-side apply dry run against the cluster; nothing was changed.")
	}
}

// unknownInputs reports whether v has an unknown value anywhere but under
// the top-level attributes outputs (or id): then the object the apply will
// send is not known yet.
func unknownInputs(v tftypes.Value, outputs []string) bool {
	found := false
	_ = tftypes.Walk(v, func(p *tftypes.AttributePath, v tftypes.Value) (bool, error) {
		if found || v.IsKnown() {
			return !found, nil
		}
		if steps := p.Steps(); len(steps) > 0 {
			if name, ok := steps[0].(tftypes.AttributeName); ok && (name == "id" || slices.Contains(outputs, string(name))) {
				return false, nil
			}
		}
		found = true
		return false, nil
	})
	return found
}

// replacedByAttribute reports whether the plan replaces the object because
// of an attribute's own plan modifier (RequiresReplace and its variants).
// The framework runs those before ModifyPlan but hands ModifyPlan an empty
// RequiresReplace, so they are asked again here, for the attributes whose
// planned value differs from the prior one. A replacement is a delete and a
// create: a dry run of the new values onto the old object would meet the
// very immutability rules that made the attribute RequiresReplace. Elements
// of nested lists and maps that plan and state both hold are walked too;
// elements of nested sets have no address to compare (see walk). When a
// value cannot be read, the answer is true, which skips the check rather
// than risk a wrong error.
func replacedByAttribute(ctx context.Context, req resource.ModifyPlanRequest, plan tfsdk.Plan) bool {
	sch, ok := plan.Schema.(schema.Schema)
	if !ok {
		return true
	}
	in := replaceInput{config: req.Config, plan: plan, state: req.State, req: req}
	return in.walk(ctx, sch.Attributes, path.Empty())
}

type replaceInput struct {
	config tfsdk.Config
	plan   tfsdk.Plan
	state  tfsdk.State
	req    resource.ModifyPlanRequest // for its Private, whose type is internal to the framework
}

func (in replaceInput) walk(ctx context.Context, attrs map[string]schema.Attribute, parent path.Path) bool {
	for name, a := range attrs {
		p := parent.AtName(name)
		e := p.Expression()
		var hit bool
		switch a := a.(type) {
		case schema.StringAttribute:
			hit = replaces(ctx, in, p, a.PlanModifiers, func(m planmodifier.String, c, pl, st types.String) bool {
				r := &planmodifier.StringResponse{PlanValue: pl}
				m.PlanModifyString(ctx, planmodifier.StringRequest{Path: p, PathExpression: e, Config: in.config, ConfigValue: c,
					Plan: in.plan, PlanValue: pl, State: in.state, StateValue: st, Private: in.req.Private}, r)
				return r.RequiresReplace
			})
		case schema.BoolAttribute:
			hit = replaces(ctx, in, p, a.PlanModifiers, func(m planmodifier.Bool, c, pl, st types.Bool) bool {
				r := &planmodifier.BoolResponse{PlanValue: pl}
				m.PlanModifyBool(ctx, planmodifier.BoolRequest{Path: p, PathExpression: e, Config: in.config, ConfigValue: c,
					Plan: in.plan, PlanValue: pl, State: in.state, StateValue: st, Private: in.req.Private}, r)
				return r.RequiresReplace
			})
		case schema.Int64Attribute:
			hit = replaces(ctx, in, p, a.PlanModifiers, func(m planmodifier.Int64, c, pl, st types.Int64) bool {
				r := &planmodifier.Int64Response{PlanValue: pl}
				m.PlanModifyInt64(ctx, planmodifier.Int64Request{Path: p, PathExpression: e, Config: in.config, ConfigValue: c,
					Plan: in.plan, PlanValue: pl, State: in.state, StateValue: st, Private: in.req.Private}, r)
				return r.RequiresReplace
			})
		case schema.Int32Attribute:
			hit = replaces(ctx, in, p, a.PlanModifiers, func(m planmodifier.Int32, c, pl, st types.Int32) bool {
				r := &planmodifier.Int32Response{PlanValue: pl}
				m.PlanModifyInt32(ctx, planmodifier.Int32Request{Path: p, PathExpression: e, Config: in.config, ConfigValue: c,
					Plan: in.plan, PlanValue: pl, State: in.state, StateValue: st, Private: in.req.Private}, r)
				return r.RequiresReplace
			})
		case schema.Float64Attribute:
			hit = replaces(ctx, in, p, a.PlanModifiers, func(m planmodifier.Float64, c, pl, st types.Float64) bool {
				r := &planmodifier.Float64Response{PlanValue: pl}
				m.PlanModifyFloat64(ctx, planmodifier.Float64Request{Path: p, PathExpression: e, Config: in.config, ConfigValue: c,
					Plan: in.plan, PlanValue: pl, State: in.state, StateValue: st, Private: in.req.Private}, r)
				return r.RequiresReplace
			})
		case schema.NumberAttribute:
			hit = replaces(ctx, in, p, a.PlanModifiers, func(m planmodifier.Number, c, pl, st types.Number) bool {
				r := &planmodifier.NumberResponse{PlanValue: pl}
				m.PlanModifyNumber(ctx, planmodifier.NumberRequest{Path: p, PathExpression: e, Config: in.config, ConfigValue: c,
					Plan: in.plan, PlanValue: pl, State: in.state, StateValue: st, Private: in.req.Private}, r)
				return r.RequiresReplace
			})
		case schema.ListAttribute:
			hit = listReplaces(ctx, in, p, a.PlanModifiers)
		case schema.ListNestedAttribute:
			hit = listReplaces(ctx, in, p, a.PlanModifiers) || in.walkElements(ctx, a.NestedObject.Attributes, p, listKeys)
		case schema.SetAttribute:
			hit = setReplaces(ctx, in, p, a.PlanModifiers)
		case schema.SetNestedAttribute:
			// A set element has no address but its value: a changed element
			// is one removed and one added, never one replaced in place.
			hit = setReplaces(ctx, in, p, a.PlanModifiers)
		case schema.MapAttribute:
			hit = mapReplaces(ctx, in, p, a.PlanModifiers)
		case schema.MapNestedAttribute:
			hit = mapReplaces(ctx, in, p, a.PlanModifiers) || in.walkElements(ctx, a.NestedObject.Attributes, p, mapKeys)
		case schema.ObjectAttribute:
			hit = objectReplaces(ctx, in, p, a.PlanModifiers)
		case schema.SingleNestedAttribute:
			hit = objectReplaces(ctx, in, p, a.PlanModifiers) || in.walk(ctx, a.Attributes, p)
		default:
			// A kind of attribute this walk does not know: cannot tell.
			hit = true
		}
		if hit {
			return true
		}
	}
	return false
}

// walkElements walks the attributes of every element of the nested list or
// map at p that both the plan and the prior state hold (keys gives their
// paths): an element only one of them holds is added or removed, not
// replaced. An unknown collection cannot tell, so it answers true.
func (in replaceInput) walkElements(ctx context.Context, attrs map[string]schema.Attribute, p path.Path,
	keys func(planned, prior attr.Value, p path.Path) ([]path.Path, bool),
) bool {
	var planned, prior attr.Value
	if in.plan.GetAttribute(ctx, p, &planned).HasError() || in.state.GetAttribute(ctx, p, &prior).HasError() {
		return true
	}
	if planned.IsUnknown() {
		return true
	}
	if planned.IsNull() || prior.IsNull() || prior.IsUnknown() {
		return false
	}
	elements, ok := keys(planned, prior, p)
	if !ok {
		return true
	}
	for _, e := range elements {
		if in.walk(ctx, attrs, e) {
			return true
		}
	}
	return false
}

// listKeys are the indexes both lists hold.
func listKeys(planned, prior attr.Value, p path.Path) ([]path.Path, bool) {
	pl, ok1 := planned.(types.List)
	st, ok2 := prior.(types.List)
	if !ok1 || !ok2 {
		return nil, false
	}
	n := min(len(pl.Elements()), len(st.Elements()))
	out := make([]path.Path, 0, n)
	for i := range n {
		out = append(out, p.AtListIndex(i))
	}
	return out, true
}

// mapKeys are the keys both maps hold.
func mapKeys(planned, prior attr.Value, p path.Path) ([]path.Path, bool) {
	pl, ok1 := planned.(types.Map)
	st, ok2 := prior.(types.Map)
	if !ok1 || !ok2 {
		return nil, false
	}
	var out []path.Path
	for key := range pl.Elements() {
		if _, both := st.Elements()[key]; both {
			out = append(out, p.AtMapKey(key))
		}
	}
	return out, true
}

// replaces reads the configured, planned and prior value of the attribute
// at p and, when planned and prior differ, asks each modifier through run
// whether it requires replacement.
func replaces[V attr.Value, M any](ctx context.Context, in replaceInput, p path.Path, mods []M, run func(m M, config, planned, prior V) bool) bool {
	if len(mods) == 0 {
		return false
	}
	config, ok1 := baseValueAt[V](ctx, in.config.GetAttribute, p)
	planned, ok2 := baseValueAt[V](ctx, in.plan.GetAttribute, p)
	prior, ok3 := baseValueAt[V](ctx, in.state.GetAttribute, p)
	if !ok1 || !ok2 || !ok3 {
		return true
	}
	if planned.Equal(prior) {
		return false
	}
	for _, m := range mods {
		if run(m, config, planned, prior) {
			return true
		}
	}
	return false
}

func listReplaces(ctx context.Context, in replaceInput, p path.Path, mods []planmodifier.List) bool {
	return replaces(ctx, in, p, mods, func(m planmodifier.List, c, pl, st types.List) bool {
		r := &planmodifier.ListResponse{PlanValue: pl}
		m.PlanModifyList(ctx, planmodifier.ListRequest{Path: p, PathExpression: p.Expression(), Config: in.config, ConfigValue: c,
			Plan: in.plan, PlanValue: pl, State: in.state, StateValue: st, Private: in.req.Private}, r)
		return r.RequiresReplace
	})
}

func setReplaces(ctx context.Context, in replaceInput, p path.Path, mods []planmodifier.Set) bool {
	return replaces(ctx, in, p, mods, func(m planmodifier.Set, c, pl, st types.Set) bool {
		r := &planmodifier.SetResponse{PlanValue: pl}
		m.PlanModifySet(ctx, planmodifier.SetRequest{Path: p, PathExpression: p.Expression(), Config: in.config, ConfigValue: c,
			Plan: in.plan, PlanValue: pl, State: in.state, StateValue: st, Private: in.req.Private}, r)
		return r.RequiresReplace
	})
}

func mapReplaces(ctx context.Context, in replaceInput, p path.Path, mods []planmodifier.Map) bool {
	return replaces(ctx, in, p, mods, func(m planmodifier.Map, c, pl, st types.Map) bool {
		r := &planmodifier.MapResponse{PlanValue: pl}
		m.PlanModifyMap(ctx, planmodifier.MapRequest{Path: p, PathExpression: p.Expression(), Config: in.config, ConfigValue: c,
			Plan: in.plan, PlanValue: pl, State: in.state, StateValue: st, Private: in.req.Private}, r)
		return r.RequiresReplace
	})
}

func objectReplaces(ctx context.Context, in replaceInput, p path.Path, mods []planmodifier.Object) bool {
	return replaces(ctx, in, p, mods, func(m planmodifier.Object, c, pl, st types.Object) bool {
		r := &planmodifier.ObjectResponse{PlanValue: pl}
		m.PlanModifyObject(ctx, planmodifier.ObjectRequest{Path: p, PathExpression: p.Expression(), Config: in.config, ConfigValue: c,
			Plan: in.plan, PlanValue: pl, State: in.state, StateValue: st, Private: in.req.Private}, r)
		return r.RequiresReplace
	})
}

// baseValueAt reads the value at p as its base framework type V
// (types.String for a custom string type such as durationtype.Value): the
// framework refuses to read a custom-typed attribute into its base type, and
// plan modifiers of custom-typed attributes receive base values anyway.
func baseValueAt[V attr.Value](ctx context.Context, get func(context.Context, path.Path, any) diag.Diagnostics, p path.Path) (V, bool) {
	var zero V
	var v attr.Value
	if get(ctx, p, &v).HasError() || v == nil {
		return zero, false
	}
	if b, ok := v.(V); ok {
		return b, true
	}
	var out attr.Value
	var d diag.Diagnostics
	switch any(zero).(type) {
	case types.String:
		if s, ok := v.(basetypes.StringValuable); ok {
			out, d = s.ToStringValue(ctx)
		}
	case types.Bool:
		if s, ok := v.(basetypes.BoolValuable); ok {
			out, d = s.ToBoolValue(ctx)
		}
	case types.Int64:
		if s, ok := v.(basetypes.Int64Valuable); ok {
			out, d = s.ToInt64Value(ctx)
		}
	case types.Int32:
		if s, ok := v.(basetypes.Int32Valuable); ok {
			out, d = s.ToInt32Value(ctx)
		}
	case types.Float64:
		if s, ok := v.(basetypes.Float64Valuable); ok {
			out, d = s.ToFloat64Value(ctx)
		}
	case types.Number:
		if s, ok := v.(basetypes.NumberValuable); ok {
			out, d = s.ToNumberValue(ctx)
		}
	case types.List:
		if s, ok := v.(basetypes.ListValuable); ok {
			out, d = s.ToListValue(ctx)
		}
	case types.Set:
		if s, ok := v.(basetypes.SetValuable); ok {
			out, d = s.ToSetValue(ctx)
		}
	case types.Map:
		if s, ok := v.(basetypes.MapValuable); ok {
			out, d = s.ToMapValue(ctx)
		}
	case types.Object:
		if s, ok := v.(basetypes.ObjectValuable); ok {
			out, d = s.ToObjectValue(ctx)
		}
	}
	b, ok := out.(V)
	return b, ok && !d.HasError()
}
