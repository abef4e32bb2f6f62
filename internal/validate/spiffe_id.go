package validate

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// SPIFFEID accepts a SPIFFE ID such as "spiffe://example.org/spire/server",
// as go-spiffe parses it, within the SPIFFE specification's length limits.
func SPIFFEID() validator.String {
	return spiffeIDValidator{}
}

type spiffeIDValidator struct{}

func (spiffeIDValidator) Description(context.Context) string {
	return "value must be a SPIFFE ID of the form spiffe://<trust-domain>/<path>"
}

func (spiffeIDValidator) MarkdownDescription(context.Context) string {
	return "value must be a SPIFFE ID of the form `spiffe://<trust-domain>/<path>`"
}

func (spiffeIDValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := ParseSPIFFEID(req.ConfigValue.ValueString()); err != nil {
		AttributeError(&resp.Diagnostics, req.Path, "Invalid SPIFFE ID", SPIFFEIDRules+"\n\n"+capitalize(err.Error())+".")
	}
}
