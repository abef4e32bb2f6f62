package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

var _ list.ListResourceWithConfigure = (*meshServiceIdentitiesListResource)(nil)

// NewMeshServiceIdentitiesListResource lists the MeshServices that have
// SpiffeID identities, for `terraform query` to import.
func NewMeshServiceIdentitiesListResource() list.ListResource {
	return &meshServiceIdentitiesListResource{}
}

type meshServiceIdentitiesListResource struct {
	providerdata.ResourceBase
}

type meshServiceIdentitiesListConfig struct {
	listScope
	Namespace   types.String `tfsdk:"namespace"`
	TrustDomain types.String `tfsdk:"trust_domain"`
}

func (*meshServiceIdentitiesListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_mesh_service_identities"
}

func (*meshServiceIdentitiesListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	attrs := listScopeAttributes()
	attrs["namespace"] = listschema.StringAttribute{
		Optional:            true,
		MarkdownDescription: "Only MeshServices of this namespace. Unset lists every namespace.",
		Validators:          []validator.String{validate.DNSLabel()},
	}
	attrs["trust_domain"] = listschema.StringAttribute{
		Optional:            true,
		MarkdownDescription: "Only MeshServices with at least one SpiffeID identity in this trust domain.",
		Validators:          []validator.String{validate.TrustDomain()},
	}
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The Kuma MeshServices that have SpiffeID identities (`spec.identities`), on one " +
			"cluster or all of them. MeshServices without any are left out: there is nothing to adopt.",
		Attributes: attrs,
	}
}

func (l *meshServiceIdentitiesListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var config meshServiceIdentitiesListConfig
	if d := req.Config.Get(ctx, &config); d.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(d)
		return
	}
	streamObjects(ctx, req, stream, l.Data, meshServiceIdentitiesIdentity, config.listScope, []kube.Kind{kube.KumaMeshService},
		func(ctx context.Context, t listTarget, obj *unstructured.Unstructured, includeResource bool) (listedObject, bool, diag.Diagnostics) {
			if !config.Namespace.IsNull() && obj.GetNamespace() != config.Namespace.ValueString() {
				return listedObject{}, true, nil
			}
			ids := meshServiceSpiffeIDs(obj)
			if len(ids) == 0 || (!config.TrustDomain.IsNull() && !meshServiceInTrustDomain(ids, config.TrustDomain.ValueString())) {
				return listedObject{}, true, nil
			}
			cluster := clusterValue(t.key)
			lo := listedObject{
				id:      objectIdentity{Cluster: t.key, Namespace: obj.GetNamespace(), Name: obj.GetName()},
				display: resourceID(cluster, obj.GetNamespace()+"/"+obj.GetName()),
			}
			if !includeResource {
				return lo, false, nil
			}
			state, diags := meshServiceIdentitiesStateFromObject(ctx, cluster, obj)
			lo.state = &state
			return lo, false, diags
		})
}

// meshServiceInTrustDomain reports whether any of the SPIFFE IDs is in trust domain td.
func meshServiceInTrustDomain(ids []string, td string) bool {
	for _, id := range ids {
		parsed, err := validate.ParseSPIFFEID(id)
		if err == nil && parsed.TrustDomain().Name() == td {
			return true
		}
	}
	return false
}
