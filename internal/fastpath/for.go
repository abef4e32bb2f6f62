package fastpath

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// For is what a resource type whose model is M needs to be served fast: its
// schemas, read once. It runs the type's Hooks in both ways a request can
// take, so the type writes them once: through the framework (For's Read,
// ModifyPlan and ValidateConfig, which the resource's methods call, with
// the model converted by Codec instead of the framework's reflection), and
// around it (Resource, whose answers protoserver tries first). Create,
// Update and the other requests stay the framework's and the resource's
// own: they are not run per instance of every plan.
type For[M any] struct {
	codec      *Codec[M]
	shortcut   *Shortcut
	validation *Validation
	// recent decodes the values of the schema's type that the fast path
	// reads, once per distinct encoding (recent.go).
	recent   *Recent
	identity tftypes.Type
}

// New reads a resource type's schema and identity schema once. It panics
// when M does not match the schema (see NewCodec).
func New[M any](ctx context.Context, s schema.Schema, identity identityschema.Schema) *For[M] {
	f := &For[M]{
		codec:      NewCodec[M](ctx, s.Type()),
		shortcut:   NewShortcut(ctx, s),
		validation: NewValidation(ctx, s),
		identity:   identity.Type().TerraformType(ctx),
	}
	f.recent = NewRecent(f.shortcut.Type)
	f.shortcut.recent, f.validation.recent = f.recent, f.recent
	return f
}

// Refuses says why the fast path refuses every request of this type (a
// schema feature Shortcut does not model), or "" when it does not.
func (f *For[M]) Refuses() string { return f.shortcut.Why }

// Hooks are the parts of a resource's Read and ModifyPlan that are its own,
// on the model. They run with the provider configured.
type Hooks[M any] interface {
	// Identity is the resource identity of the object m names, a value of
	// typ (the identity schema's type).
	Identity(ctx context.Context, m M, typ tftypes.Type) (tftypes.Value, error)
	// Refresh reads the object state names and updates state from it. fast
	// is true when the answer would go around the framework, which happens
	// only for Found with no diagnostics: something a refresh says only once
	// (a warning per cluster) is then claimed and reported as not Found, so
	// that the framework's Read, asked next, says it.
	Refresh(ctx context.Context, state *M, fast bool) (Refresh, diag.Diagnostics)
	// Plan completes plan (the framework's plan after defaults and attribute
	// plan modifiers) from config, the prior state (nil when creating) and
	// the private state. The fast path answers only when it changes nothing
	// and says nothing.
	Plan(ctx context.Context, plan *M, config M, state *M, private PrivateGetter) diag.Diagnostics
}

type attemptKey struct{}

// Attempt marks ctx as the fast path's (Attempting): For's fast path does
// it for its Plan hook, and a hook's own tests may.
func Attempt(ctx context.Context) context.Context { return context.WithValue(ctx, attemptKey{}, true) }

// Attempting reports whether a Plan hook runs for the fast path, whose
// answer is dropped when the hook says anything. Something a plan says only
// once (a warning per cluster and walk) must then not be claimed: the hook
// adds a diagnostic of its own instead, so that the fast path declines and
// the framework's ModifyPlan, asked next, says it.
func Attempting(ctx context.Context) bool { return ctx.Value(attemptKey{}) != nil }

// Refresh is what a Refresh hook found. Neither Found nor Gone: the object
// was not read (its cluster's connection is not known yet), and the state
// stays as it was.
type Refresh struct {
	// Found: the object exists, and the state was updated from it.
	Found bool
	// Gone: the object no longer exists; Read removes the resource.
	Gone bool
	// PrivateKey and Private: what a found object's refresh keeps in private
	// state (nothing when PrivateKey is "").
	PrivateKey string
	Private    []byte
}

// PrivateGetter is the part of the framework's private state (whose type is
// internal to it) and of Private that a plan reads.
type PrivateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// Read is the resource's Read: the state through the codec, the identity
// when the response holds none yet (state written by clients without
// identities; every way out of Read must return one, and Read never changes
// one), then h.Refresh.
func (f *For[M]) Read(ctx context.Context, h Hooks[M], req resource.ReadRequest, resp *resource.ReadResponse) {
	var state M
	resp.Diagnostics.Append(f.codec.Get(ctx, req.State.Raw, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if resp.Identity != nil && resp.Identity.Raw.IsFullyNull() {
		v, err := h.Identity(ctx, state, resp.Identity.Schema.Type().TerraformType(ctx))
		if err != nil {
			resp.Diagnostics.AddError("Provider Error", "Building the resource identity: "+err.Error()+"; please report this to the provider developers.")
			return
		}
		resp.Identity.Raw = v
	}
	found, diags := h.Refresh(ctx, &state, false)
	resp.Diagnostics.Append(diags...)
	switch {
	case resp.Diagnostics.HasError() || !found.Found && !found.Gone:
		return
	case found.Gone:
		resp.State.RemoveResource(ctx)
		return
	case found.PrivateKey != "":
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, found.PrivateKey, found.Private)...)
	}
	raw, diags := f.codec.Value(ctx, &state)
	resp.Diagnostics.Append(diags...)
	if !resp.Diagnostics.HasError() {
		resp.State.Raw = raw
	}
}

// ModifyPlan is the resource's ModifyPlan: plan, config and prior state
// through the codec, then h.Plan; h is nil while the provider is not
// configured, when the plan stays the framework's. ok reports a plan that
// h completed without error, returned for what the resource checks next.
func (f *For[M]) ModifyPlan(ctx context.Context, h Hooks[M], req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) (plan, config M, ok bool) {
	if req.Plan.Raw.IsNull() || h == nil {
		return plan, config, false
	}
	resp.Diagnostics.Append(f.codec.Get(ctx, req.Plan.Raw, &plan)...)
	resp.Diagnostics.Append(f.codec.Get(ctx, req.Config.Raw, &config)...)
	if resp.Diagnostics.HasError() {
		return plan, config, false
	}
	var state *M
	if !req.State.Raw.IsNull() {
		state = new(M)
		resp.Diagnostics.Append(f.codec.Get(ctx, req.State.Raw, state)...)
		if resp.Diagnostics.HasError() {
			return plan, config, false
		}
	}
	resp.Diagnostics.Append(h.Plan(ctx, &plan, config, state, req.Private)...)
	if resp.Diagnostics.HasError() {
		return plan, config, false
	}
	raw, diags := f.codec.Value(ctx, &plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return plan, config, false
	}
	resp.Plan.Raw = raw
	return plan, config, true
}

// ValidateConfig is the resource's ValidateConfig: the configuration through
// the codec, then check, which needs no configured provider.
func (f *For[M]) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse,
	check func(ctx context.Context, config M, diags *diag.Diagnostics)) {
	var config M
	resp.Diagnostics.Append(f.codec.Get(ctx, req.Config.Raw, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	check(ctx, config, &resp.Diagnostics)
}

// Resource is the fast path of the type, by the package's rules: it answers
// a refresh and an unchanged plan from hooks, which returns nil while the
// provider is not configured or defers (then the framework answers
// everything), and leaves every other case to the framework: an object gone
// or unreadable, a diagnostic, a plan that changes anything, framework keys
// in private state. It answers a configuration check that finds nothing to
// say (Validation) with a new instance newResource returns, configured with
// the provider data it returns with it (nil before the provider is
// configured), as the framework's ValidateResourceConfig does.
func (f *For[M]) Resource(hooks func() Hooks[M], newResource func() (resource.Resource, any)) Resource {
	return served[M]{For: f, hooks: hooks, newResource: newResource}
}

type served[M any] struct {
	*For[M]
	hooks       func() Hooks[M]
	newResource func() (resource.Resource, any)
}

// ValidateResourceConfig answers the first RPC a plan sends for every
// resource block, when Validation finds nothing to say: the framework's
// answer then holds no diagnostics.
func (s served[M]) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, bool) {
	if s.newResource == nil {
		return nil, false
	}
	r, providerData := s.newResource()
	if !s.validation.Valid(ctx, req, r, providerData) {
		return nil, false
	}
	return &tfprotov6.ValidateResourceConfigResponse{}, true
}

func (s served[M]) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, bool) {
	h := s.hooks()
	if h == nil || s.shortcut.Why != "" || req.CurrentState == nil {
		return nil, false
	}
	private, ok := ParsePrivate(req.Private)
	if !ok {
		return nil, false
	}
	raw, err := s.recent.Unmarshal(req.CurrentState, s.shortcut.Type)
	if err != nil || raw.IsNull() || !raw.IsFullyKnown() {
		return nil, false
	}
	var state M
	if d := s.codec.Get(ctx, raw, &state); d.HasError() {
		return nil, false
	}
	identity, ok := s.readIdentity(ctx, h, req.CurrentIdentity, state)
	if !ok {
		return nil, false
	}
	before := state
	found, diags := h.Refresh(ctx, &state, true)
	if !found.Found || len(diags) > 0 {
		return nil, false
	}
	newPrivate := private.raw
	if found.PrivateKey != "" {
		if newPrivate, err = private.With(found.PrivateKey, found.Private); err != nil {
			return nil, false
		}
	}
	// A refresh that changed nothing answers with the state as it came:
	// Codec.Get and Value move every attribute as it is, so the value is
	// the same, and its bytes are the ones Terraform already holds (and
	// sends back as the plan's prior state, which Recent then knows).
	if s.codec.Equal(&before, &state) {
		return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: newPrivate, NewIdentity: identity}, true
	}
	newRaw, d := s.codec.Value(ctx, &state)
	if d.HasError() {
		return nil, false
	}
	if newRaw, ok = s.shortcut.SemanticEqual(ctx, raw, newRaw); !ok {
		return nil, false
	}
	newState, err := s.recent.Marshal(newRaw)
	if err != nil {
		return nil, false
	}
	return &tfprotov6.ReadResourceResponse{NewState: &newState, Private: newPrivate, NewIdentity: identity}, true
}

// readIdentity is the identity Read returns: the prior one when state has
// it (Read never changes it), else the one state names.
func (s served[M]) readIdentity(ctx context.Context, h Hooks[M], prior *tfprotov6.ResourceIdentityData, state M) (*tfprotov6.ResourceIdentityData, bool) {
	if prior != nil && prior.IdentityData != nil {
		v, err := prior.IdentityData.Unmarshal(s.identity)
		if err != nil {
			return nil, false
		}
		if !v.IsFullyNull() {
			return prior, true
		}
	}
	v, err := h.Identity(ctx, state, s.identity)
	if err != nil {
		return nil, false
	}
	dv, err := tfprotov6.NewDynamicValue(s.identity, v)
	if err != nil {
		return nil, false
	}
	return &tfprotov6.ResourceIdentityData{IdentityData: &dv}, true
}

func (s served[M]) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, bool) {
	h := s.hooks()
	if h == nil {
		return nil, false
	}
	prior, config, ok := s.shortcut.Unchanged(ctx, req)
	if !ok {
		return nil, false
	}
	private, ok := ParsePrivate(req.PriorPrivate)
	if !ok {
		return nil, false
	}
	var state, cfg M
	if d := s.codec.Get(ctx, prior, &state); d.HasError() {
		return nil, false
	}
	if d := s.codec.Get(ctx, config, &cfg); d.HasError() {
		return nil, false
	}
	plan, priorModel := state, state
	if diags := h.Plan(Attempt(ctx), &plan, cfg, &state, private); len(diags) > 0 {
		return nil, false
	}
	// The plan holds the prior state's values (which the codec moved from
	// prior as they are) exactly when it equals their model.
	if !s.codec.Equal(&plan, &priorModel) {
		return nil, false
	}
	// The framework's answer to an unchanged plan: the prior state, private
	// state and identity as they came (a null identity when the client sent
	// none: it pre-fills one for resources with identity).
	identity := req.PriorIdentity
	if identity == nil || identity.IdentityData == nil {
		dv, err := tfprotov6.NewDynamicValue(s.identity, tftypes.NewValue(s.identity, nil))
		if err != nil {
			return nil, false
		}
		identity = &tfprotov6.ResourceIdentityData{IdentityData: &dv}
	}
	return &tfprotov6.PlanResourceChangeResponse{PlannedState: req.PriorState, PlannedPrivate: req.PriorPrivate, PlannedIdentity: identity}, true
}
