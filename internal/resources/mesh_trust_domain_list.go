package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// STUB: replaced by the real list resource.
type meshTrustDomainListResource struct{}

// NewMeshTrustDomainListResource lists zerotrust_mesh_trust_domain objects.
func NewMeshTrustDomainListResource() list.ListResource { return &meshTrustDomainListResource{} }

func (*meshTrustDomainListResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "zerotrust_mesh_trust_domain"
}

func (*meshTrustDomainListResource) ListResourceConfigSchema(context.Context, list.ListResourceSchemaRequest, *list.ListResourceSchemaResponse) {
}

func (*meshTrustDomainListResource) List(context.Context, list.ListRequest, *list.ListResultsStream) {
}

func (*meshTrustDomainListResource) stub() {}
