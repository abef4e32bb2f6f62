package fastpath

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// shortcutSchema is a schema NewShortcut models: plain strings (one with
// RequiresReplace and UseStateForUnknown), a bool defaulting to true, a
// single nested attribute of plain strings and a timeouts block. mods are
// added to the plan modifiers of "description", boolMods to "enabled".
func shortcutSchema(ctx context.Context, mods []planmodifier.String, boolMods []planmodifier.Bool) schema.Schema {
	return schema.Schema{
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{Required: true, PlanModifiers: []planmodifier.String{
				stringplanmodifier.RequiresReplace(), stringplanmodifier.UseStateForUnknown()}},
			"description": schema.StringAttribute{Optional: true, PlanModifiers: mods},
			"enabled": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				PlanModifiers: boolMods},
			"profile": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
				"type":    schema.StringAttribute{Optional: true},
				"version": schema.StringAttribute{Optional: true},
			}},
		},
		Blocks: map[string]schema.Block{"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true})},
	}
}

func TestNewShortcutPlainSchema(t *testing.T) {
	ctx := t.Context()
	c := NewShortcut(ctx, shortcutSchema(ctx, nil, nil))
	if c.Why != "" {
		t.Fatalf("plain schema refused: %s", c.Why)
	}
	for _, name := range []string{"name", "description", "enabled", "profile", "timeouts"} {
		if _, ok := c.Type.AttributeTypes[name]; !ok {
			t.Errorf("Type %s lacks %q", c.Type, name)
		}
	}
	if got := len(c.Type.AttributeTypes); got != 5 {
		t.Errorf("Type has %d attributes, want 5: %s", got, c.Type)
	}
	if !c.Type.AttributeTypes["enabled"].Equal(tftypes.Bool) {
		t.Errorf("Type of enabled = %s, want Bool", c.Type.AttributeTypes["enabled"])
	}
}

func TestNewShortcutRefusals(t *testing.T) {
	ctx := t.Context()
	for name, tc := range map[string]struct {
		attr  schema.Attribute // added as "odd"
		block schema.Block     // added as "odd"
	}{
		"nested attribute with a default": {attr: schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"x": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("d")}}}},
		"nested attribute with a plan modifier": {attr: schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"x": schema.StringAttribute{Optional: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}}}}},
		"single nested attribute with a plan modifier": {attr: schema.SingleNestedAttribute{Optional: true,
			PlanModifiers: []planmodifier.Object{objectplanmodifier.RequiresReplace()},
			Attributes:    map[string]schema.Attribute{"x": schema.StringAttribute{Optional: true}}}},
		"write-only": {attr: schema.StringAttribute{WriteOnly: true, Optional: true}},
		"semantic equality of a list": {attr: schema.ListAttribute{Optional: true, CustomType: semanticList{ListType: types.ListType{ElemType: types.StringType}},
			ElementType: types.StringType}},
		"nested semantic equality": {attr: schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"x": schema.StringAttribute{Optional: true, CustomType: jsontypes.NormalizedType{}}}}},
		"int64 with a default":               {attr: schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(1)}},
		"float64 attribute":                  {attr: schema.Float64Attribute{Optional: true}},
		"semantic equality of list elements": {attr: schema.ListAttribute{Optional: true, ElementType: jsontypes.NormalizedType{}}},
		"list with a default": {attr: schema.ListAttribute{Optional: true, Computed: true, ElementType: types.StringType,
			Default: listdefault.StaticValue(types.ListValueMust(types.StringType, nil))}},
		"list nested block": {block: schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{
			Attributes: map[string]schema.Attribute{"x": schema.StringAttribute{Optional: true}}}}},
		"single nested block with a default inside": {block: schema.SingleNestedBlock{Attributes: map[string]schema.Attribute{
			"x": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("d")}}}},
		"single nested block with a write-only attribute": {block: schema.SingleNestedBlock{Attributes: map[string]schema.Attribute{
			"x": schema.StringAttribute{Optional: true, WriteOnly: true}}}},
		"single nested block with a plan modifier": {block: schema.SingleNestedBlock{
			PlanModifiers: []planmodifier.Object{objectplanmodifier.RequiresReplace()},
			Attributes:    map[string]schema.Attribute{"x": schema.StringAttribute{Optional: true}}}},
	} {
		t.Run(name, func(t *testing.T) {
			s := shortcutSchema(ctx, nil, nil)
			if tc.attr != nil {
				s.Attributes["odd"] = tc.attr
			} else {
				s.Blocks["odd"] = tc.block
			}
			why := NewShortcut(ctx, s).Why
			if why == "" {
				t.Fatal("accepted")
			}
			if !strings.Contains(why, `"odd"`) {
				t.Errorf("Why = %q, want it to name %q", why, "odd")
			}
		})
	}
}

// setPlan is a string plan modifier that plans another value.
type setPlan struct{ to string }

func (setPlan) Description(context.Context) string         { return "plans another value" }
func (setPlan) MarkdownDescription(context.Context) string { return "plans another value" }
func (m setPlan) PlanModifyString(_ context.Context, _ planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	resp.PlanValue = types.StringValue(m.to)
}

// requireReplace is a string plan modifier that always asks for replacement.
type requireReplace struct{}

func (requireReplace) Description(context.Context) string         { return "replaces" }
func (requireReplace) MarkdownDescription(context.Context) string { return "replaces" }
func (requireReplace) PlanModifyString(_ context.Context, _ planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	resp.RequiresReplace = true
}

// warn is a string plan modifier that only warns.
type warn struct{}

func (warn) Description(context.Context) string         { return "warns" }
func (warn) MarkdownDescription(context.Context) string { return "warns" }
func (warn) PlanModifyString(_ context.Context, _ planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	resp.Diagnostics.AddWarning("careful", "a warning the framework would return")
}

// recordString is a string plan modifier that changes nothing and records
// the request it got.
type recordString struct{ got *[]planmodifier.StringRequest }

func (recordString) Description(context.Context) string         { return "records" }
func (recordString) MarkdownDescription(context.Context) string { return "records" }
func (m recordString) PlanModifyString(_ context.Context, req planmodifier.StringRequest, _ *planmodifier.StringResponse) {
	*m.got = append(*m.got, req)
}

// flipBool is a bool plan modifier that plans the opposite value.
type flipBool struct{}

func (flipBool) Description(context.Context) string         { return "flips" }
func (flipBool) MarkdownDescription(context.Context) string { return "flips" }
func (flipBool) PlanModifyBool(_ context.Context, req planmodifier.BoolRequest, resp *planmodifier.BoolResponse) {
	resp.PlanValue = types.BoolValue(!req.PlanValue.ValueBool())
}

// shortcutValues builds values of c.Type and requests from them.
type shortcutValues struct {
	t *testing.T
	c *Shortcut
}

// obj is an object of the plain schema; nil arguments are null values,
// tftypes.UnknownValue unknown ones.
func (v shortcutValues) obj(name, description, enabled any) tftypes.Value {
	v.t.Helper()
	typ := v.c.Type
	profile, ok := typ.AttributeTypes["profile"].(tftypes.Object)
	if !ok {
		v.t.Fatalf("profile has type %s, want an object", typ.AttributeTypes["profile"])
	}
	return tftypes.NewValue(typ, map[string]tftypes.Value{
		"name":        tftypes.NewValue(tftypes.String, name),
		"description": tftypes.NewValue(tftypes.String, description),
		"enabled":     tftypes.NewValue(tftypes.Bool, enabled),
		"profile": tftypes.NewValue(profile, map[string]tftypes.Value{
			"type":    tftypes.NewValue(tftypes.String, "basic"),
			"version": tftypes.NewValue(tftypes.String, nil),
		}),
		"timeouts": tftypes.NewValue(typ.AttributeTypes["timeouts"], nil),
	})
}

func (v shortcutValues) null() tftypes.Value { return tftypes.NewValue(v.c.Type, nil) }

func (v shortcutValues) dv(val tftypes.Value) *tfprotov6.DynamicValue {
	v.t.Helper()
	d, err := tfprotov6.NewDynamicValue(v.c.Type, val)
	if err != nil {
		v.t.Fatal(err)
	}
	return &d
}

func (v shortcutValues) req(prior, proposed, config tftypes.Value) *tfprotov6.PlanResourceChangeRequest {
	v.t.Helper()
	return &tfprotov6.PlanResourceChangeRequest{TypeName: "zerotrust_test",
		PriorState: v.dv(prior), ProposedNewState: v.dv(proposed), Config: v.dv(config)}
}

func TestUnchanged(t *testing.T) {
	ctx := t.Context()
	c := NewShortcut(ctx, shortcutSchema(ctx, nil, nil))
	if c.Why != "" {
		t.Fatalf("plain schema refused: %s", c.Why)
	}
	v := shortcutValues{t, c}
	state := v.obj("a", "d", true)
	for name, tc := range map[string]struct {
		req  *tfprotov6.PlanResourceChangeRequest
		want bool
	}{
		"unchanged, config equal":            {v.req(state, state, v.obj("a", "d", true)), true},
		"unchanged, optional null":           {v.req(v.obj("a", nil, true), v.obj("a", nil, true), v.obj("a", nil, true)), true},
		"proposed differs":                   {v.req(state, v.obj("b", "d", true), v.obj("b", "d", true)), false},
		"proposed differs in a bool":         {v.req(state, v.obj("a", "d", false), v.obj("a", "d", false)), false},
		"prior null (create)":                {v.req(v.null(), state, state), false},
		"prior and proposed null":            {v.req(v.null(), v.null(), state), false},
		"proposed null (destroy)":            {v.req(state, v.null(), v.null()), false},
		"config null":                        {v.req(state, state, v.null()), false},
		"config with an unknown":             {v.req(state, state, v.obj("a", tftypes.UnknownValue, true)), false},
		"config wholly unknown":              {v.req(state, state, tftypes.NewValue(c.Type, tftypes.UnknownValue)), false},
		"prior with an unknown":              {v.req(v.obj(tftypes.UnknownValue, "d", true), v.obj(tftypes.UnknownValue, "d", true), state), false},
		"default: config null, prior false":  {v.req(v.obj("a", "d", false), v.obj("a", "d", false), v.obj("a", "d", nil)), false},
		"default: config null, prior true":   {v.req(state, state, v.obj("a", "d", nil)), true},
		"default: config false, prior false": {v.req(v.obj("a", "d", false), v.obj("a", "d", false), v.obj("a", "d", false)), true},
		"default: config true, prior true":   {v.req(state, state, v.obj("a", "d", true)), true},
	} {
		t.Run(name, func(t *testing.T) {
			prior, config, ok := c.Unchanged(ctx, tc.req)
			if ok != tc.want {
				t.Fatalf("Unchanged = %v, want %v", ok, tc.want)
			}
			if !ok {
				return
			}
			wantPrior, err := tc.req.PriorState.Unmarshal(c.Type)
			if err != nil {
				t.Fatal(err)
			}
			wantConfig, err := tc.req.Config.Unmarshal(c.Type)
			if err != nil {
				t.Fatal(err)
			}
			if !prior.Equal(wantPrior) {
				t.Errorf("prior = %s, want %s", prior, wantPrior)
			}
			if !config.Equal(wantConfig) {
				t.Errorf("config = %s, want %s", config, wantConfig)
			}
		})
	}
}

func TestUnchangedRefusesMissingValues(t *testing.T) {
	ctx := t.Context()
	c := NewShortcut(ctx, shortcutSchema(ctx, nil, nil))
	v := shortcutValues{t, c}
	state := v.obj("a", "d", true)
	for name, edit := range map[string]func(*tfprotov6.PlanResourceChangeRequest){
		"no prior state":        func(r *tfprotov6.PlanResourceChangeRequest) { r.PriorState = nil },
		"no proposed new state": func(r *tfprotov6.PlanResourceChangeRequest) { r.ProposedNewState = nil },
		"no config":             func(r *tfprotov6.PlanResourceChangeRequest) { r.Config = nil },
		"empty msgpack": func(r *tfprotov6.PlanResourceChangeRequest) {
			r.PriorState = &tfprotov6.DynamicValue{}
			r.ProposedNewState = &tfprotov6.DynamicValue{}
		},
		"JSON instead of msgpack": func(r *tfprotov6.PlanResourceChangeRequest) {
			r.PriorState = &tfprotov6.DynamicValue{JSON: []byte(`{}`)}
			r.ProposedNewState = &tfprotov6.DynamicValue{JSON: []byte(`{}`)}
		},
		"undecodable msgpack": func(r *tfprotov6.PlanResourceChangeRequest) {
			r.PriorState = &tfprotov6.DynamicValue{MsgPack: []byte{0xc1}}
			r.ProposedNewState = &tfprotov6.DynamicValue{MsgPack: []byte{0xc1}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := v.req(state, state, state)
			if _, _, ok := c.Unchanged(ctx, r); !ok {
				t.Fatal("the unedited request is refused")
			}
			edit(r)
			if _, _, ok := c.Unchanged(ctx, r); ok {
				t.Error("Unchanged = true")
			}
		})
	}
}

func TestUnchangedRunsPlanModifiers(t *testing.T) {
	ctx := t.Context()
	for name, tc := range map[string]struct {
		mods     []planmodifier.String
		boolMods []planmodifier.Bool
		want     bool
	}{
		"sets the plan value to another":       {mods: []planmodifier.String{setPlan{"other"}}},
		"sets the plan value to the same":      {mods: []planmodifier.String{setPlan{"d"}}, want: true},
		"requires replacement":                 {mods: []planmodifier.String{requireReplace{}}},
		"warns":                                {mods: []planmodifier.String{warn{}}},
		"a later modifier changes the plan":    {mods: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), setPlan{"other"}}},
		"framework modifiers, nothing changed": {mods: []planmodifier.String{stringplanmodifier.RequiresReplace(), stringplanmodifier.UseStateForUnknown()}, want: true},
		"bool modifier changes the plan":       {boolMods: []planmodifier.Bool{flipBool{}}},
	} {
		t.Run(name, func(t *testing.T) {
			c := NewShortcut(ctx, shortcutSchema(ctx, tc.mods, tc.boolMods))
			if c.Why != "" {
				t.Fatalf("refused: %s", c.Why)
			}
			v := shortcutValues{t, c}
			state := v.obj("a", "d", true)
			if _, _, ok := c.Unchanged(ctx, v.req(state, state, state)); ok != tc.want {
				t.Errorf("Unchanged = %v, want %v", ok, tc.want)
			}
		})
	}
}

func TestUnchangedPlanModifierRequest(t *testing.T) {
	ctx := t.Context()
	var got []planmodifier.StringRequest
	c := NewShortcut(ctx, shortcutSchema(ctx, []planmodifier.String{recordString{&got}}, nil))
	v := shortcutValues{t, c}
	state := v.obj("a", "d", true)
	if _, _, ok := c.Unchanged(ctx, v.req(state, state, v.obj("a", "d", nil))); !ok {
		t.Fatal("Unchanged = false")
	}
	if len(got) != 1 {
		t.Fatalf("the modifier ran %d times, want once", len(got))
	}
	r := got[0]
	want := types.StringValue("d")
	if !r.ConfigValue.Equal(want) || !r.PlanValue.Equal(want) || !r.StateValue.Equal(want) {
		t.Errorf("config/plan/state values = %s/%s/%s, want %s", r.ConfigValue, r.PlanValue, r.StateValue, want)
	}
	if r.Path.String() != "description" {
		t.Errorf("Path = %s, want description", r.Path)
	}
	if !r.State.Raw.Equal(state) || !r.Plan.Raw.Equal(state) {
		t.Errorf("State/Plan = %s/%s, want the prior state %s", r.State.Raw, r.Plan.Raw, state)
	}
	if cfg := v.obj("a", "d", nil); !r.Config.Raw.Equal(cfg) {
		t.Errorf("Config = %s, want %s", r.Config.Raw, cfg)
	}
}

func TestUnchangedRefusedShortcut(t *testing.T) {
	ctx := t.Context()
	refused := shortcutSchema(ctx, nil, nil)
	refused.Attributes["secret"] = schema.StringAttribute{Optional: true, WriteOnly: true}
	for name, c := range map[string]*Shortcut{
		"refused schema": NewShortcut(ctx, refused),
		"Why set":        func() *Shortcut { c := NewShortcut(ctx, shortcutSchema(ctx, nil, nil)); c.Why = "refused"; return c }(),
	} {
		t.Run(name, func(t *testing.T) {
			if c.Why == "" {
				t.Fatal("Why is empty")
			}
			v := shortcutValues{t, c}
			vals := map[string]tftypes.Value{}
			for n, typ := range c.Type.AttributeTypes {
				vals[n] = tftypes.NewValue(typ, nil)
			}
			vals["name"] = tftypes.NewValue(tftypes.String, "a")
			vals["enabled"] = tftypes.NewValue(tftypes.Bool, true)
			state := tftypes.NewValue(c.Type, vals)
			r := v.req(state, state, state)
			if _, _, ok := c.Unchanged(ctx, r); ok {
				t.Error("Unchanged = true")
			}
			// The same Shortcut without Why takes the request: Why alone
			// refused it.
			accepting := *c
			accepting.Why = ""
			if _, _, ok := accepting.Unchanged(ctx, r); !ok {
				t.Error("without Why: Unchanged = false")
			}
		})
	}
}

// semanticList is a list type with semantic equality, which Shortcut does
// not model (only top-level strings).
type semanticList struct{ types.ListType }

func (semanticList) ValueType(context.Context) attr.Value { return semanticListValue{} }

type semanticListValue struct{ types.List }

func (semanticListValue) ListSemanticEquals(context.Context, basetypes.ListValuable) (bool, diag.Diagnostics) {
	return true, nil
}

// TestSemanticEqualKeepsThePriorText: a top-level string with semantic
// equality keeps its prior value after a refresh that reads an equal one,
// as the framework's ReadResource does, and takes a different one.
func TestSemanticEqualKeepsThePriorText(t *testing.T) {
	ctx := t.Context()
	s := shortcutSchema(ctx, nil, nil)
	s.Attributes["doc"] = schema.StringAttribute{Optional: true, CustomType: jsontypes.NormalizedType{}}
	c := NewShortcut(ctx, s)
	if c.Why != "" {
		t.Fatalf("refused: %s", c.Why)
	}
	value := func(doc string) tftypes.Value {
		attrs := map[string]tftypes.Value{}
		for name, typ := range c.Type.AttributeTypes {
			attrs[name] = tftypes.NewValue(typ, nil)
		}
		attrs["doc"] = tftypes.NewValue(tftypes.String, doc)
		return tftypes.NewValue(c.Type, attrs)
	}
	prior := value(`{"a": 1}`)
	for next, want := range map[string]tftypes.Value{`{"a":1}`: prior, `{"a":2}`: value(`{"a":2}`)} {
		got, ok := c.SemanticEqual(ctx, prior, value(next))
		if !ok || !got.Equal(want) {
			t.Errorf("SemanticEqual(%s) = %s, %v; want %s", next, got, ok, want)
		}
	}
}
