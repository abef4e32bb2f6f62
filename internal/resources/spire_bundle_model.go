package resources

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

type spireBundleResourceModel struct {
	ID          types.String `tfsdk:"id"`
	Cluster     types.String `tfsdk:"cluster"`
	TrustDomain types.String `tfsdk:"trust_domain"`
	Bundle      types.String `tfsdk:"bundle"`
	SpireServer types.Object `tfsdk:"spire_server"`
	OnDestroy   types.String `tfsdk:"on_destroy"`
}

func spireBundleObjectIdentity(m spireBundleResourceModel) objectIdentity {
	return objectIdentity{Cluster: m.Cluster.ValueString(), Name: m.TrustDomain.ValueString()}
}

// parsedBundle is m's bundle document, nil when it is unknown, null or not
// a bundle of m's trust domain (the validator says why).
func (m spireBundleResourceModel) parsedBundle() *spiffebundle.Bundle {
	if m.Bundle.IsNull() || m.Bundle.IsUnknown() || m.TrustDomain.IsUnknown() {
		return nil
	}
	td, err := spiffeid.TrustDomainFromString(m.TrustDomain.ValueString())
	if err != nil {
		return nil
	}
	b, err := trustbundle.Parse(td, []byte(m.Bundle.ValueString()))
	if err != nil {
		return nil
	}
	return b
}

// setSpireBundleFromView reads what SPIRE holds of m's trust domain into
// m.Bundle. A bundle with the authorities m holds keeps m's text, so a
// sequence number SPIRE set or a key order plans nothing; another bundle
// (someone set one by hand) becomes the state, so the plan shows it replaced
// by the configured one; none (SPIRE lost it, or someone deleted it) is
// null, so the plan sets it again.
func setSpireBundleFromView(m *spireBundleResourceModel, view spireexec.View) {
	held := view.Bundles[m.TrustDomain.ValueString()]
	switch {
	case held == nil:
		m.Bundle = types.StringNull()
	case trustbundle.SameAuthorities(held, m.parsedBundle()):
	default:
		if text, err := trustbundle.Normalize(held); err == nil {
			m.Bundle = types.StringValue(text)
		} else {
			m.Bundle = types.StringNull()
		}
	}
}

// spireBundleStateFromBundle is the state import and list both store for a
// bundle SPIRE holds: the bundle as normalised JSON, the defaults elsewhere.
func spireBundleStateFromBundle(cluster types.String, held *spiffebundle.Bundle) (spireBundleResourceModel, error) {
	text, err := trustbundle.Normalize(held)
	if err != nil {
		return spireBundleResourceModel{}, err
	}
	td := held.TrustDomain().Name()
	return spireBundleResourceModel{
		ID:          types.StringValue(resourceID(cluster, td)),
		Cluster:     cluster,
		TrustDomain: types.StringValue(td),
		Bundle:      types.StringValue(text),
		SpireServer: types.ObjectNull(spireBundleObjectAttrTypes("spire_server")),
		OnDestroy:   types.StringValue(spireexec.BundleDeleteDissociate),
	}, nil
}

var spireBundleObjectAttrTypes = schemaTypesOf(func() attr.Type {
	return spireBundleSchema().Type()
})
