package validate

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// TrustDomain accepts a bare SPIFFE trust domain name such as "example.org",
// as go-spiffe parses it, of at most 255 characters. A SPIFFE ID is refused.
func TrustDomain() validator.String {
	return trustDomainValidator{}
}

type trustDomainValidator struct{}

func (trustDomainValidator) Description(context.Context) string {
	return "value must be a SPIFFE trust domain name such as example.org: 1 to 255 lowercase letters, digits, dots, dashes and underscores, without spiffe:// or a path"
}

func (trustDomainValidator) MarkdownDescription(context.Context) string {
	return "value must be a SPIFFE trust domain name such as `example.org`: 1 to 255 lowercase letters, digits, dots, dashes and underscores, without `spiffe://` or a path"
}

func (trustDomainValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := ParseTrustDomain(req.ConfigValue.ValueString()); err != nil {
		AttributeError(&resp.Diagnostics, req.Path, "Invalid Trust Domain", TrustDomainRules+"\n\n"+capitalize(err.Error())+".")
	}
}
