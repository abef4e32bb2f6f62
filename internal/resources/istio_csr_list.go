package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// STUB: replaced by the real list resource.
type istioCSRListResource struct{}

// NewIstioCSRListResource lists zerotrust_istio_csr objects.
func NewIstioCSRListResource() list.ListResource { return &istioCSRListResource{} }

func (*istioCSRListResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "zerotrust_istio_csr"
}

func (*istioCSRListResource) ListResourceConfigSchema(context.Context, list.ListResourceSchemaRequest, *list.ListResourceSchemaResponse) {
}

func (*istioCSRListResource) List(context.Context, list.ListRequest, *list.ListResultsStream) {}

func (*istioCSRListResource) stub() {}
