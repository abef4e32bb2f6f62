package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// NewFederatedTrustDomainFastPath serves zerotrust_federated_trust_domain,
// the resource a configuration holds by the hundred (one per peer per
// cluster), through internal/fastpath, from the provider data data returns
// (nil while the provider is not configured or defers). Its hooks are the
// skeleton's, with the descriptor's plan (planFederatedTrustDomain) and
// refreshing below, which its Read, ModifyPlan and ValidateConfig run too.
func NewFederatedTrustDomainFastPath(data func() *providerdata.Data) fastpath.Resource {
	return servedFast(federatedTrustDomainType.fast(), data, func(d *providerdata.Data) fastpath.Hooks[federatedTrustDomainResourceModel] {
		r := &federatedTrustDomainResource{kubeResource[federatedTrustDomainResourceModel]{kubeType: federatedTrustDomainType}}
		r.Data = d
		return r.hooks()
	}, NewFederatedTrustDomainResource)
}

// refreshFederatedTrustDomainFast is the descriptor's refreshing, Read's
// work (refreshFederatedTrustDomain); SPIRE's silence is said once per
// cluster (spireUnreachable).
func refreshFederatedTrustDomainFast(ctx context.Context, r *kubeResource[federatedTrustDomainResourceModel],
	state *federatedTrustDomainResourceModel, fast bool,
) (fastpath.Refresh, diag.Diagnostics) {
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
