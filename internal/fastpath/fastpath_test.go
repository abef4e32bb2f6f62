package fastpath

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func TestPrivate(t *testing.T) {
	ctx := context.Background()
	empty, ok := ParsePrivate(nil)
	if !ok {
		t.Fatal("empty private state refused")
	}
	if v, _ := empty.GetKey(ctx, "k"); v != nil {
		t.Errorf("GetKey on empty = %q", v)
	}
	if same, _ := empty.With("k", nil); same != nil {
		t.Errorf("removing from empty = %q, want nil", same)
	}

	raw, err := empty.With("class_name_written", []byte("true"))
	if err != nil {
		t.Fatal(err)
	}
	// The framework's encoding: a JSON object of base64 values.
	var m map[string][]byte
	if err := json.Unmarshal(raw, &m); err != nil || string(m["class_name_written"]) != "true" {
		t.Fatalf("With wrote %s (%v)", raw, err)
	}
	p, ok := ParsePrivate(raw)
	if !ok {
		t.Fatalf("ParsePrivate(%s) refused", raw)
	}
	if v, _ := p.GetKey(ctx, "class_name_written"); string(v) != "true" {
		t.Errorf("GetKey after round trip = %q", v)
	}
	if same, _ := p.With("class_name_written", []byte("true")); string(same) != string(raw) {
		t.Errorf("an unchanged value re-encoded: %s, want the input %s", same, raw)
	}
	if gone, _ := p.With("class_name_written", nil); gone != nil {
		t.Errorf("removing the last key = %q, want nil", gone)
	}
	// No data is encoded as none, as the framework does.
	for _, in := range []string{`{}`, `null`} {
		p, ok := ParsePrivate([]byte(in))
		if same, _ := p.With("k", nil); !ok || same != nil {
			t.Errorf("ParsePrivate(%s).With unchanged = %q (ok %v), want nil", in, same, ok)
		}
	}

	for name, in := range map[string]string{
		"framework key":            `{".import_before_read":"dHJ1ZQ=="}`,
		"not JSON":                 `{`,
		"a value that is no JSON":  `{"k":"YWJj"}`, // "abc": the framework refuses it
		"a value that is no UTF-8": `{"k":"/w=="}`,
	} {
		if _, ok := ParsePrivate([]byte(in)); ok {
			t.Errorf("%s: ParsePrivate(%s) accepted", name, in)
		}
	}
}

// toNull is a plan modifier that changes the plan, replaceAlways one that
// asks for replacement: an unchanged plan is not unchanged with either.
type toNull struct{}

func (toNull) Description(context.Context) string         { return "sets null" }
func (toNull) MarkdownDescription(context.Context) string { return "sets null" }
func (toNull) PlanModifyString(_ context.Context, _ planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	resp.PlanValue = types.StringNull()
}

type replaceAlways struct{}

func (replaceAlways) Description(context.Context) string         { return "replaces" }
func (replaceAlways) MarkdownDescription(context.Context) string { return "replaces" }
func (replaceAlways) PlanModifyString(_ context.Context, _ planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	resp.RequiresReplace = true
}

func plainSchema(ctx context.Context, extra ...planmodifier.String) schema.Schema {
	return schema.Schema{
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{Required: true,
				PlanModifiers: append([]planmodifier.String{stringplanmodifier.RequiresReplace(), stringplanmodifier.UseStateForUnknown()}, extra...)},
			"flag": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(true)},
			"profile": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
				"type": schema.StringAttribute{Optional: true},
			}},
		},
		Blocks: map[string]schema.Block{"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true})},
	}
}

func TestNewShortcutRefusesWhatItDoesNotModel(t *testing.T) {
	ctx := context.Background()
	if why := NewShortcut(ctx, plainSchema(ctx)).Why; why != "" {
		t.Fatalf("plain schema refused: %s", why)
	}
	for name, c := range map[string]struct {
		attr schema.Attribute
		want string
	}{
		"nested default": {schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"x": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("d")}}}, "without defaults or plan modifiers"},
		"write-only":                         {schema.StringAttribute{Optional: true, WriteOnly: true}, "write-only"},
		"semantic equality":                  {schema.StringAttribute{Optional: true, CustomType: jsontypes.NormalizedType{}}, "semantic equality"},
		"semantic equality of list elements": {schema.ListAttribute{Optional: true, ElementType: jsontypes.NormalizedType{}}, "semantic equality"},
		"plain list":                         {schema.ListAttribute{Optional: true, ElementType: types.StringType}, ""},
		"list with a default": {schema.ListAttribute{Optional: true, Computed: true, ElementType: types.StringType,
			Default: listdefault.StaticValue(types.ListValueMust(types.StringType, nil))}, "defaults and plan modifiers"},
	} {
		s := plainSchema(ctx)
		s.Attributes["odd"] = c.attr
		why := NewShortcut(ctx, s).Why
		if c.want == "" {
			if why != "" {
				t.Errorf("%s: refused: %s", name, why)
			}
			continue
		}
		if !strings.Contains(why, `"odd"`) || !strings.Contains(why, c.want) {
			t.Errorf("%s: Why = %q, want it to name the attribute and %q", name, why, c.want)
		}
	}
	s := plainSchema(ctx)
	s.Blocks["rules"] = schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
		"x": schema.StringAttribute{Optional: true}}}}
	if why := NewShortcut(ctx, s).Why; !strings.Contains(why, `"rules"`) {
		t.Errorf("list block: Why = %q, want it refused by name", why)
	}
}

func TestShortcutUnchanged(t *testing.T) {
	ctx := context.Background()
	c := NewShortcut(ctx, plainSchema(ctx))
	obj := func(name any, flag any) tftypes.Value {
		return tftypes.NewValue(c.Type, map[string]tftypes.Value{
			"name":     tftypes.NewValue(tftypes.String, name),
			"flag":     tftypes.NewValue(tftypes.Bool, flag),
			"profile":  tftypes.NewValue(c.Type.AttributeTypes["profile"], nil),
			"timeouts": tftypes.NewValue(c.Type.AttributeTypes["timeouts"], nil),
		})
	}
	dv := func(v tftypes.Value) *tfprotov6.DynamicValue {
		d, err := tfprotov6.NewDynamicValue(c.Type, v)
		if err != nil {
			t.Fatal(err)
		}
		return &d
	}
	req := func(prior, proposed, config tftypes.Value) *tfprotov6.PlanResourceChangeRequest {
		return &tfprotov6.PlanResourceChangeRequest{PriorState: dv(prior), ProposedNewState: dv(proposed), Config: dv(config)}
	}
	state := obj("a", true)
	for name, tc := range map[string]struct {
		req  *tfprotov6.PlanResourceChangeRequest
		want bool
	}{
		"unchanged":                          {req(state, state, obj("a", true)), true},
		"unchanged, default from config":     {req(state, state, obj("a", nil)), true},
		"explicit non-default":               {req(obj("a", false), obj("a", false), obj("a", false)), true},
		"changed":                            {req(state, obj("b", true), obj("b", true)), false},
		"default differs from prior":         {req(obj("a", false), obj("a", false), obj("a", nil)), false},
		"creation":                           {req(tftypes.NewValue(c.Type, nil), state, state), false},
		"unknown in config":                  {req(state, state, obj(tftypes.UnknownValue, true)), false},
		"destroy (null proposed and config)": {req(state, tftypes.NewValue(c.Type, nil), tftypes.NewValue(c.Type, nil)), false},
	} {
		prior, config, ok := c.Unchanged(ctx, tc.req)
		if ok != tc.want {
			t.Errorf("%s: Unchanged = %v, want %v", name, ok, tc.want)
			continue
		}
		if ok {
			wantPrior, _ := tc.req.PriorState.Unmarshal(c.Type)
			wantConfig, _ := tc.req.Config.Unmarshal(c.Type)
			if !prior.Equal(wantPrior) || !config.Equal(wantConfig) {
				t.Errorf("%s: returned %s / %s, want the request's values", name, prior, config)
			}
		}
	}

	for name, m := range map[string]planmodifier.String{"changes the plan": toNull{}, "replaces": replaceAlways{}} {
		c := NewShortcut(ctx, plainSchema(ctx, m))
		if _, _, ok := c.Unchanged(ctx, req(state, state, state)); ok {
			t.Errorf("a plan modifier that %s: Unchanged = true", name)
		}
	}

	refused := NewShortcut(ctx, plainSchema(ctx))
	refused.Why = "refused for the test"
	if _, _, ok := refused.Unchanged(ctx, req(state, state, state)); ok {
		t.Error("a refusing Shortcut answered")
	}
}
