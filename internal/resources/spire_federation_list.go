package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// STUB: replaced by the real list resource.
type spireFederationListResource struct{}

// NewSpireFederationListResource lists zerotrust_spire_federation objects.
func NewSpireFederationListResource() list.ListResource { return &spireFederationListResource{} }

func (*spireFederationListResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "zerotrust_spire_federation"
}

func (*spireFederationListResource) ListResourceConfigSchema(context.Context, list.ListResourceSchemaRequest, *list.ListResourceSchemaResponse) {
}

func (*spireFederationListResource) List(context.Context, list.ListRequest, *list.ListResultsStream) {
}

func (*spireFederationListResource) stub() {}
