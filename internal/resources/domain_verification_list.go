package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// STUB: replaced by the real list resource.
type domainVerificationListResource struct{}

// NewDomainVerificationListResource lists zerotrust_domain_verification objects.
func NewDomainVerificationListResource() list.ListResource { return &domainVerificationListResource{} }

func (*domainVerificationListResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "zerotrust_domain_verification"
}

func (*domainVerificationListResource) ListResourceConfigSchema(context.Context, list.ListResourceSchemaRequest, *list.ListResourceSchemaResponse) {
}

func (*domainVerificationListResource) List(context.Context, list.ListRequest, *list.ListResultsStream) {
}

func (*domainVerificationListResource) stub() {}
