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

var _ list.ListResourceWithConfigure = (*istioCSRListResource)(nil)

// istioCSRListResource lists the IstioCSRs of every namespace of the scope's
// clusters, for `terraform query` to import.
type istioCSRListResource struct {
	providerdata.ResourceBase
}

// NewIstioCSRListResource lists zerotrust_istio_csr objects.
func NewIstioCSRListResource() list.ListResource { return &istioCSRListResource{} }

type istioCSRListModel struct {
	listScope
	Namespace types.String `tfsdk:"namespace"`
}

func (*istioCSRListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_istio_csr"
}

func (*istioCSRListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	attrs := listScopeAttributes()
	attrs["namespace"] = listschema.StringAttribute{
		Optional:            true,
		MarkdownDescription: "Only the IstioCSR of this namespace. Unset lists every namespace.",
		Validators:          []validator.String{validate.DNSLabel()},
	}
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The IstioCSRs (always named `default`, one per namespace) of the provider's clusters.",
		Attributes:          attrs,
	}
}

func (l *istioCSRListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var config istioCSRListModel
	if d := req.Config.Get(ctx, &config); d.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(d)
		return
	}
	streamObjects(ctx, req, stream, l.Data, istioCSRIdentity, config.listScope, []kube.Kind{kube.IstioCSR},
		func(ctx context.Context, t listTarget, obj *unstructured.Unstructured, includeResource bool) (listedObject, bool, diag.Diagnostics) {
			// The CRD accepts no other name; another object is nothing this
			// resource could manage.
			if obj.GetName() != istioCSRName ||
				(!config.Namespace.IsNull() && obj.GetNamespace() != config.Namespace.ValueString()) {
				return listedObject{}, true, nil
			}
			cluster := clusterValue(t.key)
			lo := listedObject{
				id:      istioCSRObjectIdentity(cluster, obj.GetNamespace()),
				display: resourceID(cluster, obj.GetNamespace()),
			}
			if !includeResource {
				return lo, false, nil
			}
			state, diags := istioCSRStateFromObject(ctx, cluster, obj)
			lo.state = &state
			return lo, false, diags
		})
}
