package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

var _ function.Function = (*trustDomainFunction)(nil)

// NewTrustDomainFunction returns the trust_domain function, which takes the
// trust domain from a trust domain name or a SPIFFE ID.
func NewTrustDomainFunction() function.Function {
	return &trustDomainFunction{}
}

type trustDomainFunction struct{}

func (f *trustDomainFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "trust_domain"
}

func (f *trustDomainFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Get the trust domain of a SPIFFE ID or trust domain name",
		MarkdownDescription: "Returns the trust domain name of `name_or_id`: `example.org` for both `example.org` and " +
			"`spiffe://example.org/any/path`. Useful to key maps by trust domain when only a SPIFFE ID is at hand, " +
			"and to check a trust domain name (the call fails on an invalid one).",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name: "name_or_id",
				MarkdownDescription: "A trust domain name such as `example.org` (lowercase letters, digits, dots, " +
					"dashes and underscores) or a SPIFFE ID such as `spiffe://example.org/spire/server`.",
			},
		},
		Return: function.StringReturn{},
	}
}

func (f *trustDomainFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var nameOrID string
	resp.Error = req.Arguments.Get(ctx, &nameOrID)
	if resp.Error != nil {
		return
	}

	var td spiffeid.TrustDomain
	var err error
	rules := validate.TrustDomainRules
	// The same test go-spiffe's TrustDomainFromString makes: ":/" marks a
	// URI, which must then be a whole valid SPIFFE ID.
	if strings.Contains(nameOrID, ":/") {
		var id spiffeid.ID
		id, err = validate.ParseSPIFFEID(nameOrID)
		td = id.TrustDomain()
		rules = validate.SPIFFEIDRules
	} else {
		td, err = validate.ParseTrustDomain(nameOrID)
	}
	if err != nil {
		resp.Error = function.NewArgumentFuncError(0, fmt.Sprintf(
			"%s. The value must be a trust domain name or a SPIFFE ID. %s", capitalize(err.Error()), rules))
		return
	}
	resp.Error = resp.Result.Set(ctx, td.Name())
}
