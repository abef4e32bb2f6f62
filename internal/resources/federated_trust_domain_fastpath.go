package resources

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// federatedTrustDomainFast serves zerotrust_federated_trust_domain, the
// resource a configuration holds by the hundred (one per peer per cluster),
// through internal/fastpath: its Read, ModifyPlan and ValidateConfig, and
// NewFederatedTrustDomainFastPath. The hooks below are its own part.
var federatedTrustDomainFast = sync.OnceValue(func() *fastpath.For[federatedTrustDomainResourceModel] {
	return fastpath.New[federatedTrustDomainResourceModel](context.Background(), federatedTrustDomainSchemaOnce(), federatedTrustDomainType.shape.schema())
})

// NewFederatedTrustDomainFastPath answers from the provider data data
// returns (nil while the provider is not configured or defers).
func NewFederatedTrustDomainFastPath(data func() *providerdata.Data) fastpath.Resource {
	return servedFast(federatedTrustDomainFast(), data, func(d *providerdata.Data) fastpath.Hooks[federatedTrustDomainResourceModel] {
		r := &federatedTrustDomainResource{kubeResource[federatedTrustDomainResourceModel]{kubeType: federatedTrustDomainType}}
		r.Data = d
		return r.hooks()
	}, NewFederatedTrustDomainResource)
}

// hooks is r as its fastpath.Hooks, nil until the provider is configured.
func (r *federatedTrustDomainResource) hooks() fastpath.Hooks[federatedTrustDomainResourceModel] {
	if r.Data == nil {
		return nil
	}
	return r
}

func (r *federatedTrustDomainResource) Identity(ctx context.Context, m federatedTrustDomainResourceModel, typ tftypes.Type) (tftypes.Value, error) {
	return federatedTrustDomainType.identityOf(m).terraformValue(ctx, federatedTrustDomainType.shape, typ)
}

// Refresh is Read's work (refreshFederatedTrustDomain); SPIRE's silence is
// said once per cluster (spireUnreachable).
func (r *federatedTrustDomainResource) Refresh(ctx context.Context, state *federatedTrustDomainResourceModel, fast bool) (fastpath.Refresh, diag.Diagnostics) {
	var diags diag.Diagnostics
	client := r.Data.ReadClient(ctx, state.Cluster, r.object(state.ID), &diags)
	if client == nil {
		return fastpath.Refresh{}, diags
	}
	found, written, unreachable, d := refreshFederatedTrustDomain(ctx, client, r.Data, state)
	diags.Append(d...)
	if fast && found && len(diags) == 0 && unreachable.claimWarning(client) {
		return fastpath.Refresh{}, nil
	} else if !fast {
		unreachable.addTo(client, &diags)
	}
	return fastpath.Refresh{Found: found, Gone: !found, PrivateKey: ownershipKey, Private: classNameOwnership(written).value()}, diags
}
