package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
)

var _ list.ListResourceWithConfigure = (*spireFederationListResource)(nil)

// spireFederationListResource lists the clusters whose SpireServer `cluster`
// has spec.federation: exactly what zerotrust_spire_federation can import.
type spireFederationListResource struct {
	providerdata.ResourceBase
}

// NewSpireFederationListResource lists zerotrust_spire_federation objects.
func NewSpireFederationListResource() list.ListResource { return &spireFederationListResource{} }

type spireFederationListConfig struct {
	listScope
	TrustDomain types.String `tfsdk:"trust_domain"`
}

func (*spireFederationListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_spire_federation"
}

func (*spireFederationListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	attrs := listScopeAttributes()
	attrs["trust_domain"] = listschema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Only the cluster whose own trust domain (the resource's `trust_domain`) is this. " +
			"Unset lists every cluster whose SpireServer `cluster` has `spec.federation`.",
	}
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The federation settings (`spec.federation` of the SpireServer `cluster`) of the " +
			"provider's clusters, one result per cluster that has them. A SpireServer without `spec.federation` is " +
			"not listed: there is nothing to adopt.",
		Attributes: attrs,
	}
}

func (r *spireFederationListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var cfg spireFederationListConfig
	if d := req.Config.Get(ctx, &cfg); d.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(d)
		return
	}
	convert := func(ctx context.Context, t listTarget, obj *unstructured.Unstructured, includeResource bool) (listedObject, bool, diag.Diagnostics) {
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
	streamObjects(ctx, req, stream, r.Data, spireFederationIdentity, cfg.listScope, []kube.Kind{kube.SpireServer}, convert)
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
