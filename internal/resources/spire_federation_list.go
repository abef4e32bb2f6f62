package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
)

// NewSpireFederationListResource lists the clusters whose SpireServer
// `cluster` has spec.federation: exactly what zerotrust_spire_federation can
// import.
func NewSpireFederationListResource() list.ListResource {
	return newListShell(spireFederationType,
		"The federation settings (`spec.federation` of the SpireServer `cluster`) of the "+
			"provider's clusters, one result per cluster that has them. A SpireServer without `spec.federation` is "+
			"not listed: there is nothing to adopt.",
		map[string]listschema.Attribute{"trust_domain": listschema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Only the cluster whose own trust domain (the resource's `trust_domain`) is this. " +
				"Unset lists every cluster whose SpireServer `cluster` has `spec.federation`.",
		}},
		func(cfg spireFederationListConfig) listConverter { return cfg.convert })
}

type spireFederationListConfig struct {
	listScope
	TrustDomain types.String `tfsdk:"trust_domain"`
}

// convert makes a list result of the SpireServer `cluster` that has
// spec.federation: the identity, a display name with the cluster's trust
// domain, and the state ImportState would store.
func (cfg spireFederationListConfig) convert(ctx context.Context, t listTarget, obj *unstructured.Unstructured, includeResource bool) (listedObject, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	if obj.GetName() != spirefacts.ObjectName {
		return listedObject{}, true, diags
	}
	if _, found := specFromObject(obj); !found {
		return listedObject{}, true, diags
	}
	ztwim, err := spirefacts.GetIfServed(ctx, t.client, kube.ZeroTrustWorkloadIdentityManager)
	if err != nil {
		diags.Append(kube.Diagnostic(err, "read the trust domain of cluster "+t.client.DisplayName()))
		return listedObject{}, true, diags
	}
	facts := &spirefacts.Facts{ZTWIM: ztwim, SpireServer: obj}
	td, _ := facts.TrustDomain()
	if !cfg.TrustDomain.IsNull() && cfg.TrustDomain.ValueString() != td {
		return listedObject{}, true, diags
	}
	cluster := clusterValue(t.key)
	lo := listedObject{id: spireFederationObjectIdentity(cluster), display: federationDisplayName(t.key, td)}
	if includeResource {
		state, d := spireFederationStateFromObject(ctx, t.client, cluster, facts)
		diags.Append(d...)
		lo.state = &state
	}
	return lo, false, diags
}

// federationDisplayName is the import ID, with the trust domain when the
// cluster has one.
func federationDisplayName(key, trustDomain string) string {
	name := resourceID(clusterValue(key), spirefacts.ObjectName)
	if trustDomain == "" {
		return name
	}
	return fmt.Sprintf("%s (trust domain %s)", name, trustDomain)
}
