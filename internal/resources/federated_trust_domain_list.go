package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// STUB: replaced by the real list resource.
type federatedTrustDomainListResource struct{}

// NewFederatedTrustDomainListResource lists zerotrust_federated_trust_domain objects.
func NewFederatedTrustDomainListResource() list.ListResource {
	return &federatedTrustDomainListResource{}
}

func (*federatedTrustDomainListResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "zerotrust_federated_trust_domain"
}

func (*federatedTrustDomainListResource) ListResourceConfigSchema(context.Context, list.ListResourceSchemaRequest, *list.ListResourceSchemaResponse) {
}

func (*federatedTrustDomainListResource) List(context.Context, list.ListRequest, *list.ListResultsStream) {
}

func (*federatedTrustDomainListResource) stub() {}
