package fastpath

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

type forModel struct {
	Name  types.String `tfsdk:"name"`
	Found types.String `tfsdk:"found"`
}

var forSchema = schema.Schema{Attributes: map[string]schema.Attribute{
	"name":  schema.StringAttribute{Required: true},
	"found": schema.StringAttribute{Computed: true},
}}

var forIdentity = identityschema.Schema{Attributes: map[string]identityschema.Attribute{
	"name": identityschema.StringAttribute{RequiredForImport: true},
}}

// forHooks refreshes found to "yes" (or what refresh says) and plans
// found = name when planChanges.
type forHooks struct {
	refresh     Refresh
	diags       diag.Diagnostics
	planChanges bool
	fastSeen    []bool
	// attempting is what Attempting said in each Plan call.
	attempting []bool
}

func (h *forHooks) Identity(_ context.Context, m forModel, typ tftypes.Type) (tftypes.Value, error) {
	return tftypes.NewValue(typ, map[string]tftypes.Value{"name": tftypes.NewValue(tftypes.String, m.Name.ValueString())}), nil
}

func (h *forHooks) Refresh(_ context.Context, state *forModel, fast bool) (Refresh, diag.Diagnostics) {
	h.fastSeen = append(h.fastSeen, fast)
	if h.refresh.Found {
		state.Found = types.StringValue("yes")
	}
	return h.refresh, h.diags
}

func (h *forHooks) Plan(ctx context.Context, plan *forModel, _ forModel, _ *forModel, _ PrivateGetter) diag.Diagnostics {
	h.attempting = append(h.attempting, Attempting(ctx))
	if h.planChanges {
		plan.Found = plan.Name
	}
	return h.diags
}

type forValues struct {
	t     *testing.T
	state tftypes.Object
	id    tftypes.Object
}

func newForValues(t *testing.T) forValues {
	ctx := t.Context()
	state, _ := forSchema.Type().TerraformType(ctx).(tftypes.Object)
	id, _ := forIdentity.Type().TerraformType(ctx).(tftypes.Object)
	return forValues{t, state, id}
}

func (v forValues) obj(found any) tftypes.Value {
	return tftypes.NewValue(v.state, map[string]tftypes.Value{
		"name": tftypes.NewValue(tftypes.String, "a"), "found": tftypes.NewValue(tftypes.String, found)})
}

func (v forValues) dv(typ tftypes.Type, val tftypes.Value) *tfprotov6.DynamicValue {
	v.t.Helper()
	d, err := tfprotov6.NewDynamicValue(typ, val)
	if err != nil {
		v.t.Fatal(err)
	}
	return &d
}

func (v forValues) identity(name any) *tfprotov6.ResourceIdentityData {
	return &tfprotov6.ResourceIdentityData{IdentityData: v.dv(v.id, tftypes.NewValue(v.id, map[string]tftypes.Value{
		"name": tftypes.NewValue(tftypes.String, name)}))}
}

func TestForReadResource(t *testing.T) {
	ctx := t.Context()
	f := New[forModel](ctx, forSchema, forIdentity)
	if why := f.Refuses(); why != "" {
		t.Fatalf("plain schema refused: %s", why)
	}
	v := newForValues(t)
	found := Refresh{Found: true, PrivateKey: "k", Private: []byte(`{"held":[]}`)}
	for name, tc := range map[string]struct {
		hooks  *forHooks
		req    *tfprotov6.ReadResourceRequest
		answer bool
	}{
		"found":                 {&forHooks{refresh: found}, &tfprotov6.ReadResourceRequest{CurrentState: v.dv(v.state, v.obj("no"))}, true},
		"found, prior identity": {&forHooks{refresh: found}, &tfprotov6.ReadResourceRequest{CurrentState: v.dv(v.state, v.obj(nil)), CurrentIdentity: v.identity("kept")}, true},
		"gone":                  {&forHooks{refresh: Refresh{Gone: true}}, &tfprotov6.ReadResourceRequest{CurrentState: v.dv(v.state, v.obj("no"))}, false},
		"not read":              {&forHooks{}, &tfprotov6.ReadResourceRequest{CurrentState: v.dv(v.state, v.obj("no"))}, false},
		"a warning":             {&forHooks{refresh: found, diags: diag.Diagnostics{diag.NewWarningDiagnostic("w", "w")}}, &tfprotov6.ReadResourceRequest{CurrentState: v.dv(v.state, v.obj("no"))}, false},
		"framework private key": {&forHooks{refresh: found}, &tfprotov6.ReadResourceRequest{CurrentState: v.dv(v.state, v.obj("no")), Private: []byte(`{".import_before_read":"dHJ1ZQ=="}`)}, false},
		"no state":              {&forHooks{refresh: found}, &tfprotov6.ReadResourceRequest{}, false},
		"state with an unknown": {&forHooks{refresh: found}, &tfprotov6.ReadResourceRequest{CurrentState: v.dv(v.state, v.obj(tftypes.UnknownValue))}, false},
	} {
		t.Run(name, func(t *testing.T) {
			resp, ok := f.Resource(func() Hooks[forModel] { return tc.hooks }, nil).ReadResource(ctx, tc.req)
			if ok != tc.answer {
				t.Fatalf("answered = %v, want %v", ok, tc.answer)
			}
			if tc.req.CurrentState != nil && tc.req.CurrentState.MsgPack != nil && len(tc.hooks.fastSeen) > 0 && !tc.hooks.fastSeen[0] {
				t.Error("Refresh was not told that the answer goes around the framework")
			}
			if !ok {
				return
			}
			if got, err := resp.NewState.Unmarshal(v.state); err != nil || !got.Equal(v.obj("yes")) {
				t.Errorf("new state = %v (%v), want the refreshed model", got, err)
			}
			wantID := v.identity("a")
			if tc.req.CurrentIdentity != nil {
				wantID = tc.req.CurrentIdentity
			}
			gotID, err := resp.NewIdentity.IdentityData.Unmarshal(v.id)
			wantIDValue, _ := wantID.IdentityData.Unmarshal(v.id)
			if err != nil || !gotID.Equal(wantIDValue) {
				t.Errorf("identity = %v (%v), want %v", gotID, err, wantIDValue)
			}
			if got := string(resp.Private); got != `{"k":"eyJoZWxkIjpbXX0="}` {
				t.Errorf("private = %s, want the refresh's key", got)
			}
		})
	}
	if _, ok := f.Resource(func() Hooks[forModel] { return nil }, nil).ReadResource(ctx,
		&tfprotov6.ReadResourceRequest{CurrentState: v.dv(v.state, v.obj("no"))}); ok {
		t.Error("answered without hooks (provider not configured)")
	}
}

func TestForPlanResourceChange(t *testing.T) {
	ctx := t.Context()
	f := New[forModel](ctx, forSchema, forIdentity)
	v := newForValues(t)
	state := v.obj("a")
	config := tftypes.NewValue(v.state, map[string]tftypes.Value{
		"name": tftypes.NewValue(tftypes.String, "a"), "found": tftypes.NewValue(tftypes.String, nil)})
	req := func(id *tfprotov6.ResourceIdentityData) *tfprotov6.PlanResourceChangeRequest {
		return &tfprotov6.PlanResourceChangeRequest{PriorState: v.dv(v.state, state), ProposedNewState: v.dv(v.state, state),
			Config: v.dv(v.state, config), PriorPrivate: []byte(`{"k":"eyJoZWxkIjpbXX0="}`), PriorIdentity: id}
	}
	for name, tc := range map[string]struct {
		hooks  *forHooks
		req    *tfprotov6.PlanResourceChangeRequest
		answer bool
	}{
		"unchanged":              {&forHooks{planChanges: true}, req(v.identity("a")), true},
		"unchanged, no identity": {&forHooks{}, req(nil), true},
		"the hook changes the plan": {&forHooks{planChanges: true, diags: nil}, func() *tfprotov6.PlanResourceChangeRequest {
			r := req(nil)
			other := v.obj("b")
			r.PriorState, r.ProposedNewState = v.dv(v.state, other), v.dv(v.state, other)
			return r
		}(), false},
		"the hook says something": {&forHooks{diags: diag.Diagnostics{diag.NewWarningDiagnostic("w", "w")}}, req(nil), false},
	} {
		t.Run(name, func(t *testing.T) {
			resp, ok := f.Resource(func() Hooks[forModel] { return tc.hooks }, nil).PlanResourceChange(ctx, tc.req)
			if ok != tc.answer {
				t.Fatalf("answered = %v, want %v", ok, tc.answer)
			}
			if len(tc.hooks.attempting) != 1 || !tc.hooks.attempting[0] {
				t.Errorf("Attempting in Plan calls = %v, want one, true", tc.hooks.attempting)
			}
			if !ok {
				return
			}
			if resp.PlannedState != tc.req.PriorState || string(resp.PlannedPrivate) != string(tc.req.PriorPrivate) {
				t.Error("an unchanged plan must return the prior state and private state as they came")
			}
			got, err := resp.PlannedIdentity.IdentityData.Unmarshal(v.id)
			if err != nil {
				t.Fatal(err)
			}
			if tc.req.PriorIdentity == nil && !got.IsNull() {
				t.Errorf("planned identity = %v, want null when the client sent none", got)
			}
		})
	}
}

func TestForRead(t *testing.T) {
	ctx := t.Context()
	f := New[forModel](ctx, forSchema, forIdentity)
	v := newForValues(t)
	read := func(h *forHooks, identity tftypes.Value) *resource.ReadResponse {
		state := tfsdk.State{Schema: forSchema, Raw: v.obj("no")}
		resp := &resource.ReadResponse{State: state,
			Identity: &tfsdk.ResourceIdentity{Schema: forIdentity, Raw: identity}}
		f.Read(ctx, h, resource.ReadRequest{State: state}, resp)
		if len(h.fastSeen) != 1 || h.fastSeen[0] {
			t.Errorf("Refresh calls (fast or not) = %v, want one, not fast", h.fastSeen)
		}
		return resp
	}
	nullID := tftypes.NewValue(v.id, nil)

	resp := read(&forHooks{refresh: Refresh{Found: true}}, nullID)
	if resp.Diagnostics.HasError() || !resp.State.Raw.Equal(v.obj("yes")) {
		t.Errorf("found: state = %v, diagnostics %v; want the refreshed model", resp.State.Raw, resp.Diagnostics)
	}
	if want, _ := (&forHooks{}).Identity(ctx, forModel{Name: types.StringValue("a")}, v.id); !resp.Identity.Raw.Equal(want) {
		t.Errorf("identity = %v, want the one state names when the response holds none", resp.Identity.Raw)
	}
	kept := tftypes.NewValue(v.id, map[string]tftypes.Value{"name": tftypes.NewValue(tftypes.String, "kept")})
	if resp := read(&forHooks{refresh: Refresh{Found: true}}, kept); !resp.Identity.Raw.Equal(kept) {
		t.Errorf("identity = %v, want the prior one kept", resp.Identity.Raw)
	}
	if resp := read(&forHooks{refresh: Refresh{Gone: true}}, nullID); !resp.State.Raw.IsNull() {
		t.Errorf("gone: state = %v, want the resource removed", resp.State.Raw)
	}
	if resp := read(&forHooks{}, nullID); !resp.State.Raw.Equal(v.obj("no")) {
		t.Errorf("not read: state = %v, want it as it was", resp.State.Raw)
	}
	failed := diag.Diagnostics{diag.NewErrorDiagnostic("e", "e")}
	if resp := read(&forHooks{refresh: Refresh{Gone: true}, diags: failed}, nullID); !resp.State.Raw.Equal(v.obj("no")) || !resp.Diagnostics.HasError() {
		t.Errorf("error: state = %v, diagnostics %v; want the error and the state as it was", resp.State.Raw, resp.Diagnostics)
	}
}
