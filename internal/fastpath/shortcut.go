package fastpath

import (
	"bytes"
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Shortcut holds what a resource schema says about an unchanged plan: the
// top-level defaults and the top-level string and bool plan modifiers, the
// only schema features through which the framework changes a plan whose
// proposed state equals the prior state (v1.19, fwserver PlanResourceChange:
// defaults for null configuration values, then attribute plan modifiers,
// then the resource's ModifyPlan, which the resource runs itself). A schema
// with anything else that could (a default or plan modifier below the top
// level or on another type, write-only attributes, types with semantic
// equality below the top level) gets a Shortcut that refuses every
// request: Why says why. A top-level string type with semantic equality is
// modelled for a refresh (SemanticEqual), where the framework runs it; a
// plan runs none.
type Shortcut struct {
	schema   schema.Schema
	Type     tftypes.Object
	defaults map[string]tftypes.Value
	strings  map[string][]planmodifier.String
	bools    map[string][]planmodifier.Bool
	semantic map[string]attr.Type
	Why      string
	recent   *Recent // set by New; nil decodes every value
}

// NewShortcut reads s once.
func NewShortcut(ctx context.Context, s schema.Schema) *Shortcut {
	typ, _ := s.Type().TerraformType(ctx).(tftypes.Object)
	c := &Shortcut{schema: s, Type: typ, defaults: map[string]tftypes.Value{},
		strings: map[string][]planmodifier.String{}, bools: map[string][]planmodifier.Bool{}, semantic: map[string]attr.Type{}}
	for name, a := range s.Attributes {
		if why := c.addAttribute(ctx, name, a); why != "" {
			c.Why = fmt.Sprintf("attribute %q: %s", name, why)
			return c
		}
	}
	for name, b := range s.Blocks {
		single, ok := b.(schema.SingleNestedBlock)
		if !ok || len(single.PlanModifiers) > 0 {
			c.Why = fmt.Sprintf("block %q: only single nested blocks without plan modifiers are modelled", name)
			return c
		}
		if why := semanticEquality(ctx, single.GetNestedObject().Type()); why != "" {
			c.Why = fmt.Sprintf("block %q: %s", name, why)
			return c
		}
		for n, a := range single.Attributes {
			if why := plainNested(ctx, a); why != "" {
				c.Why = fmt.Sprintf("block %q attribute %q: %s", name, n, why)
				return c
			}
		}
		if len(single.Blocks) > 0 {
			c.Why = fmt.Sprintf("block %q: nested blocks are not modelled", name)
			return c
		}
	}
	return c
}

func (c *Shortcut) addAttribute(ctx context.Context, name string, a schema.Attribute) string {
	if a.IsWriteOnly() {
		return "write-only attributes are not modelled"
	}
	if _, ok := a.GetType().ValueType(ctx).(basetypes.StringValuableWithSemanticEquals); ok {
		if _, ok := a.(schema.StringAttribute); !ok {
			return "types with semantic equality are not modelled on this attribute type"
		}
		c.semantic[name] = a.GetType()
	} else if why := semanticEquality(ctx, a.GetType()); why != "" {
		return why
	}
	p := path.Root(name)
	switch a := a.(type) {
	case schema.StringAttribute:
		c.strings[name] = a.PlanModifiers
		if a.Default != nil {
			var resp defaults.StringResponse
			a.Default.DefaultString(ctx, defaults.StringRequest{Path: p}, &resp)
			v, err := resp.PlanValue.ToTerraformValue(ctx)
			if err != nil || resp.Diagnostics.HasError() {
				return "its default cannot be computed"
			}
			c.defaults[name] = v
		}
	case schema.BoolAttribute:
		c.bools[name] = a.PlanModifiers
		if a.Default != nil {
			var resp defaults.BoolResponse
			a.Default.DefaultBool(ctx, defaults.BoolRequest{Path: p}, &resp)
			v, err := resp.PlanValue.ToTerraformValue(ctx)
			if err != nil || resp.Diagnostics.HasError() {
				return "its default cannot be computed"
			}
			c.defaults[name] = v
		}
	case schema.SingleNestedAttribute:
		if a.Default != nil || len(a.PlanModifiers) > 0 {
			return "defaults and plan modifiers of nested attributes are not modelled"
		}
		return plainObject(ctx, a.Attributes)
	case schema.Int64Attribute:
		return noneOf(a.Default != nil, len(a.PlanModifiers))
	case schema.ListAttribute:
		return noneOf(a.Default != nil, len(a.PlanModifiers))
	case schema.MapAttribute:
		return noneOf(a.Default != nil, len(a.PlanModifiers))
	case schema.SetAttribute:
		return noneOf(a.Default != nil, len(a.PlanModifiers))
	default:
		return "attributes of this type are not modelled"
	}
	return ""
}

// noneOf refuses a top-level attribute of a type whose defaults and plan
// modifiers Unchanged does not run.
func noneOf(hasDefault bool, planModifiers int) string {
	if hasDefault || planModifiers > 0 {
		return "defaults and plan modifiers of this attribute type are not modelled"
	}
	return ""
}

// plainNested refuses anything that would let the framework change an
// unchanged plan below the top level.
func plainNested(ctx context.Context, a schema.Attribute) string {
	if a.IsWriteOnly() {
		return "write-only attributes are not modelled"
	}
	if why := semanticEquality(ctx, a.GetType()); why != "" {
		return why
	}
	switch a := a.(type) {
	case schema.StringAttribute:
		if a.Default == nil && len(a.PlanModifiers) == 0 {
			return ""
		}
	case schema.BoolAttribute:
		if a.Default == nil && len(a.PlanModifiers) == 0 {
			return ""
		}
	case schema.Int64Attribute:
		if a.Default == nil && len(a.PlanModifiers) == 0 {
			return ""
		}
	case schema.ListAttribute:
		if a.Default == nil && len(a.PlanModifiers) == 0 {
			return ""
		}
	case schema.MapAttribute:
		if a.Default == nil && len(a.PlanModifiers) == 0 {
			return ""
		}
	case schema.SetAttribute:
		if a.Default == nil && len(a.PlanModifiers) == 0 {
			return ""
		}
	case schema.ListNestedAttribute:
		if a.Default == nil && len(a.PlanModifiers) == 0 && len(a.NestedObject.PlanModifiers) == 0 {
			return plainObject(ctx, a.NestedObject.Attributes)
		}
	case schema.SingleNestedAttribute:
		if a.Default == nil && len(a.PlanModifiers) == 0 {
			return plainObject(ctx, a.Attributes)
		}
	}
	return "only string, bool, int64, list, map, set and nested attributes without defaults or plan modifiers are modelled here"
}

// plainObject refuses a nested object with an attribute plainNested refuses.
func plainObject(ctx context.Context, attrs map[string]schema.Attribute) string {
	for n, a := range attrs {
		if why := plainNested(ctx, a); why != "" {
			return fmt.Sprintf("attribute %q: %s", n, why)
		}
	}
	return ""
}

// semanticEquality refuses types whose values the framework may replace by
// their prior values after Read (SchemaSemanticEquality).
func semanticEquality(ctx context.Context, t attr.Type) string {
	switch t.ValueType(ctx).(type) {
	case basetypes.StringValuableWithSemanticEquals, basetypes.BoolValuableWithSemanticEquals,
		basetypes.Int64ValuableWithSemanticEquals, basetypes.ObjectValuableWithSemanticEquals,
		basetypes.ListValuableWithSemanticEquals, basetypes.MapValuableWithSemanticEquals,
		basetypes.SetValuableWithSemanticEquals, basetypes.NumberValuableWithSemanticEquals,
		basetypes.Float64ValuableWithSemanticEquals, basetypes.Int32ValuableWithSemanticEquals,
		basetypes.Float32ValuableWithSemanticEquals, basetypes.DynamicValuableWithSemanticEquals:
		return "types with semantic equality are not modelled"
	}
	if o, ok := t.(attr.TypeWithAttributeTypes); ok {
		for _, at := range o.AttributeTypes() {
			if why := semanticEquality(ctx, at); why != "" {
				return why
			}
		}
	}
	// List, set and map elements get semantic equality too.
	if e, ok := t.(attr.TypeWithElementType); ok {
		return semanticEquality(ctx, e.ElementType())
	}
	return ""
}

// Unchanged decodes a plan request whose proposed new state is the prior
// state and for which the schema's defaults and top-level plan modifiers
// change nothing; false for any other request, which the resource must
// leave to the framework.
func (c *Shortcut) Unchanged(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (prior, config tftypes.Value, ok bool) {
	if c.Why != "" || req.PriorState == nil || req.ProposedNewState == nil || req.Config == nil ||
		len(req.PriorState.MsgPack) == 0 || !bytes.Equal(req.PriorState.MsgPack, req.ProposedNewState.MsgPack) {
		return prior, config, false
	}
	prior, err := c.recent.Unmarshal(req.PriorState, c.Type)
	if err != nil || prior.IsNull() || !prior.IsFullyKnown() {
		return prior, config, false
	}
	config, err = c.recent.Unmarshal(req.Config, c.Type)
	if err != nil || config.IsNull() || !config.IsFullyKnown() {
		return prior, config, false
	}
	var priorAttrs, configAttrs map[string]tftypes.Value
	if prior.As(&priorAttrs) != nil || config.As(&configAttrs) != nil {
		return prior, config, false
	}
	for name, def := range c.defaults {
		if configAttrs[name].IsNull() && !priorAttrs[name].Equal(def) {
			return prior, config, false
		}
	}
	cfg := tfsdk.Config{Schema: c.schema, Raw: config}
	plan := tfsdk.Plan{Schema: c.schema, Raw: prior}
	state := tfsdk.State{Schema: c.schema, Raw: prior}
	for name, mods := range c.strings {
		if len(mods) == 0 {
			continue
		}
		cv, ok1 := stringValue(ctx, configAttrs[name])
		pv, ok2 := stringValue(ctx, priorAttrs[name])
		if !ok1 || !ok2 {
			return prior, config, false
		}
		for _, m := range mods {
			req := planmodifier.StringRequest{Path: path.Root(name), PathExpression: path.MatchRoot(name), Config: cfg,
				ConfigValue: cv, Plan: plan, PlanValue: pv, State: state, StateValue: pv}
			resp := planmodifier.StringResponse{PlanValue: req.PlanValue}
			m.PlanModifyString(ctx, req, &resp)
			if resp.RequiresReplace || len(resp.Diagnostics) > 0 || !resp.PlanValue.Equal(req.PlanValue) {
				return prior, config, false
			}
		}
	}
	for name, mods := range c.bools {
		if len(mods) == 0 {
			continue
		}
		cv, ok1 := boolValue(ctx, configAttrs[name])
		pv, ok2 := boolValue(ctx, priorAttrs[name])
		if !ok1 || !ok2 {
			return prior, config, false
		}
		for _, m := range mods {
			req := planmodifier.BoolRequest{Path: path.Root(name), PathExpression: path.MatchRoot(name), Config: cfg,
				ConfigValue: cv, Plan: plan, PlanValue: pv, State: state, StateValue: pv}
			resp := planmodifier.BoolResponse{PlanValue: req.PlanValue}
			m.PlanModifyBool(ctx, req, &resp)
			if resp.RequiresReplace || len(resp.Diagnostics) > 0 || !resp.PlanValue.Equal(req.PlanValue) {
				return prior, config, false
			}
		}
	}
	return prior, config, true
}

func stringValue(ctx context.Context, v tftypes.Value) (types.String, bool) {
	av, err := types.StringType.ValueFromTerraform(ctx, v)
	s, ok := av.(types.String)
	return s, err == nil && ok
}

func boolValue(ctx context.Context, v tftypes.Value) (types.Bool, bool) {
	av, err := types.BoolType.ValueFromTerraform(ctx, v)
	b, ok := av.(types.Bool)
	return b, err == nil && ok
}

// SemanticEqual is the framework's semantic equality after a refresh
// (fwserver ReadResource, SchemaSemanticEquality) on the top-level
// attributes that have it: where prior and next are both known, not null
// and semantically equal, next takes the prior value. ok is false when a
// check said something (the framework's answer would carry it).
func (c *Shortcut) SemanticEqual(ctx context.Context, prior, next tftypes.Value) (tftypes.Value, bool) {
	if len(c.semantic) == 0 {
		return next, true
	}
	var priorAttrs, nextAttrs map[string]tftypes.Value
	if prior.As(&priorAttrs) != nil || next.As(&nextAttrs) != nil {
		return next, false
	}
	changed := false
	for name, typ := range c.semantic {
		pv, nv := priorAttrs[name], nextAttrs[name]
		if pv.IsNull() || !pv.IsKnown() || nv.IsNull() || !nv.IsKnown() || pv.Equal(nv) {
			continue
		}
		pa, err1 := typ.ValueFromTerraform(ctx, pv)
		na, err2 := typ.ValueFromTerraform(ctx, nv)
		if err1 != nil || err2 != nil {
			return next, false
		}
		ps, ok1 := pa.(basetypes.StringValuableWithSemanticEquals)
		ns, ok2 := na.(basetypes.StringValuableWithSemanticEquals)
		if !ok1 || !ok2 {
			return next, false
		}
		same, diags := ns.StringSemanticEquals(ctx, ps)
		if len(diags) > 0 {
			return next, false
		}
		if same {
			nextAttrs[name], changed = pv, true
		}
	}
	if !changed {
		return next, true
	}
	return tftypes.NewValue(next.Type(), nextAttrs), true
}
