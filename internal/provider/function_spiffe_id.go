package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

var _ function.Function = (*spiffeIDFunction)(nil)

// NewSpiffeIDFunction returns the spiffe_id function, which builds a SPIFFE
// ID from a trust domain and path segments.
func NewSpiffeIDFunction() function.Function {
	return &spiffeIDFunction{}
}

type spiffeIDFunction struct{}

func (f *spiffeIDFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "spiffe_id"
}

func (f *spiffeIDFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Build a SPIFFE ID from a trust domain and path segments",
		MarkdownDescription: "Returns the SPIFFE ID `spiffe://<trust_domain>/<segment>/<segment>...`, " +
			"for example `provider::zerotrust::spiffe_id(\"example.org\", \"spire\", \"server\")` returns " +
			"`spiffe://example.org/spire/server`, the ID of a SPIRE server's federation bundle endpoint. " +
			"With no segments it returns the trust domain's own ID, `spiffe://example.org`. " +
			"Every part is checked against the SPIFFE specification with go-spiffe, so a plan fails at the call " +
			"instead of at the cluster.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name: "trust_domain",
				MarkdownDescription: "Trust domain name, such as `example.org`: 1 to 255 lowercase letters, digits, " +
					"dots, dashes and underscores, without `spiffe://`. Use `trust_domain()` to take it from a SPIFFE ID.",
			},
		},
		VariadicParameter: function.StringParameter{
			Name: "path",
			MarkdownDescription: "Path segments, one argument each, such as `\"ns\", \"default\", \"sa\", \"app\"`. " +
				"A segment is non-empty, is not `.` or `..`, contains no `/`, and uses letters, digits, dots, " +
				"dashes and underscores.",
		},
		Return: function.StringReturn{},
	}
}

func (f *spiffeIDFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var trustDomain string
	var segments []string
	resp.Error = req.Arguments.Get(ctx, &trustDomain, &segments)
	if resp.Error != nil {
		return
	}

	td, err := validate.ParseTrustDomain(trustDomain)
	if err != nil {
		resp.Error = function.NewArgumentFuncError(0, fmt.Sprintf("%s. %s", capitalize(err.Error()), validate.TrustDomainRules))
		return
	}
	for index, segment := range segments {
		if err := spiffeid.ValidatePathSegment(segment); err != nil {
			resp.Error = function.NewArgumentFuncError(int64(1+index), fmt.Sprintf(
				"Path segment %d (%q) is not valid: %s. %s", index+1, segment, err, pathSegmentRules))
			return
		}
	}
	id, err := spiffeid.FromSegments(td, segments...)
	if err != nil {
		resp.Error = function.NewFuncError(fmt.Sprintf("Cannot build a SPIFFE ID: %s.", err))
		return
	}
	if length := len(id.String()); length > validate.MaxSPIFFEIDLength {
		resp.Error = function.NewFuncError(fmt.Sprintf(
			"The SPIFFE ID would have %d characters, more than the limit of %d: use fewer or shorter path segments.",
			length, validate.MaxSPIFFEIDLength))
		return
	}
	resp.Error = resp.Result.Set(ctx, id.String())
}

const pathSegmentRules = `A path segment is non-empty, is not "." or "..", and uses only letters, digits, dots, dashes ` +
	`and underscores; pass each segment as its own argument instead of joining them with "/".`

// capitalize turns an error text, which Go writes in lower case, into the
// start of a sentence.
func capitalize(text string) string {
	if text == "" {
		return text
	}
	return strings.ToUpper(text[:1]) + text[1:]
}
