package resources

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// federatedTrustDomainShortcut is the schema's unchanged-plan check, read once.
var federatedTrustDomainShortcut = sync.OnceValue(func() *fastpath.Shortcut {
	return fastpath.NewShortcut(context.Background(), federatedTrustDomainSchemaOnce())
})

var federatedTrustDomainIdentityType = sync.OnceValue(func() tftypes.Type {
	ctx := context.Background()
	return federatedTrustDomainType.shape.schema().Type().TerraformType(ctx)
})

// NewFederatedTrustDomainFastPath serves the refreshes and unchanged plans of
// zerotrust_federated_trust_domain, the resource a configuration holds by the
// hundred (one per peer per cluster), without the framework's per-request
// work (see internal/fastpath); data returns the configured provider's data,
// nil while the provider is not configured or defers, when every request
// goes to the framework. It runs Read's and ModifyPlan's own code
// (refreshFederatedTrustDomain, planModel) and leaves every other case to
// the framework: an object gone or unreadable, a diagnostic, a plan that
// changes anything, framework keys in private state.
func NewFederatedTrustDomainFastPath(data func() *providerdata.Data) fastpath.Resource {
	return federatedTrustDomainFastPath{data: data}
}

type federatedTrustDomainFastPath struct {
	data func() *providerdata.Data
}

func (f federatedTrustDomainFastPath) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, bool) {
	data := f.data()
	shortcut := federatedTrustDomainShortcut()
	if data == nil || shortcut.Why != "" || req.CurrentState == nil {
		return nil, false
	}
	private, ok := fastpath.ParsePrivate(req.Private)
	if !ok {
		return nil, false
	}
	raw, err := req.CurrentState.Unmarshal(shortcut.Type)
	if err != nil || raw.IsNull() || !raw.IsFullyKnown() {
		return nil, false
	}
	codec := federatedTrustDomainCodec()
	var state federatedTrustDomainResourceModel
	if d := codec.Get(ctx, raw, &state); d.HasError() {
		return nil, false
	}
	identity, ok := federatedTrustDomainReadIdentity(ctx, req.CurrentIdentity, state)
	if !ok {
		return nil, false
	}
	var diags diag.Diagnostics
	client := data.ReadClient(state.Cluster, &diags)
	if client == nil {
		return nil, false
	}
	found, written, unreachable, diags := refreshFederatedTrustDomain(ctx, client, data, &state)
	if !found || len(diags) > 0 || unreachable.claimWarning(client) {
		// The framework's Read asks again and says what happened (SPIRE's
		// silence once per cluster, see spireUnreachable).
		return nil, false
	}
	newPrivate, err := private.With(ownershipKey, classNameOwnership(written).value())
	if err != nil {
		return nil, false
	}
	newRaw, d := codec.Value(ctx, &state)
	if d.HasError() {
		return nil, false
	}
	newState, err := tfprotov6.NewDynamicValue(shortcut.Type, newRaw)
	if err != nil {
		return nil, false
	}
	return &tfprotov6.ReadResourceResponse{NewState: &newState, Private: newPrivate, NewIdentity: identity}, true
}

// federatedTrustDomainReadIdentity is the identity Read returns: the prior
// one when state has it (Read never changes it: cluster and name replace
// the resource), else the one state names (setIfMissing).
func federatedTrustDomainReadIdentity(ctx context.Context, prior *tfprotov6.ResourceIdentityData, state federatedTrustDomainResourceModel) (*tfprotov6.ResourceIdentityData, bool) {
	typ := federatedTrustDomainIdentityType()
	if prior != nil && prior.IdentityData != nil {
		v, err := prior.IdentityData.Unmarshal(typ)
		if err != nil {
			return nil, false
		}
		if !v.IsFullyNull() {
			return prior, true
		}
	}
	v, err := federatedTrustDomainObjectIdentity(state).terraformValue(ctx, federatedTrustDomainType.shape, typ)
	if err != nil {
		return nil, false
	}
	dv, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		return nil, false
	}
	return &tfprotov6.ResourceIdentityData{IdentityData: &dv}, true
}

func (f federatedTrustDomainFastPath) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, bool) {
	data := f.data()
	if data == nil {
		return nil, false
	}
	prior, config, ok := federatedTrustDomainShortcut().Unchanged(ctx, req)
	if !ok {
		return nil, false
	}
	private, ok := fastpath.ParsePrivate(req.PriorPrivate)
	if !ok {
		return nil, false
	}
	codec := federatedTrustDomainCodec()
	var state, cfg federatedTrustDomainResourceModel
	if d := codec.Get(ctx, prior, &state); d.HasError() {
		return nil, false
	}
	if d := codec.Get(ctx, config, &cfg); d.HasError() {
		return nil, false
	}
	plan := state
	r := federatedTrustDomainResource{}
	r.Data = data
	if diags := r.planModel(ctx, &plan, cfg, &state, private); len(diags) > 0 {
		return nil, false
	}
	planned, d := codec.Value(ctx, &plan)
	if d.HasError() || !planned.Equal(prior) {
		return nil, false
	}
	// The framework's answer to an unchanged plan: the prior state, private
	// state and identity as they came (a null identity when the client sent
	// none: it pre-fills one for resources with identity).
	identity := req.PriorIdentity
	if identity == nil || identity.IdentityData == nil {
		typ := federatedTrustDomainIdentityType()
		dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
		if err != nil {
			return nil, false
		}
		identity = &tfprotov6.ResourceIdentityData{IdentityData: &dv}
	}
	return &tfprotov6.PlanResourceChangeResponse{PlannedState: req.PriorState, PlannedPrivate: req.PriorPrivate, PlannedIdentity: identity}, true
}
