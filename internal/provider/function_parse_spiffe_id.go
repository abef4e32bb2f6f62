package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

var _ function.Function = (*parseSpiffeIDFunction)(nil)

// NewParseSpiffeIDFunction returns the parse_spiffe_id function, which splits
// a SPIFFE ID into its trust domain and path.
func NewParseSpiffeIDFunction() function.Function {
	return &parseSpiffeIDFunction{}
}

type parseSpiffeIDFunction struct{}

var parsedSpiffeIDAttributeTypes = map[string]attr.Type{
	"trust_domain": types.StringType,
	"path":         types.StringType,
	"segments":     types.ListType{ElemType: types.StringType},
}

type parsedSpiffeID struct {
	TrustDomain string   `tfsdk:"trust_domain"`
	Path        string   `tfsdk:"path"`
	Segments    []string `tfsdk:"segments"`
}

func (f *parseSpiffeIDFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "parse_spiffe_id"
}

func (f *parseSpiffeIDFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Split a SPIFFE ID into its trust domain and path",
		MarkdownDescription: "Parses a SPIFFE ID with go-spiffe and returns an object with `trust_domain` " +
			"(`example.org`), `path` (`/ns/default/sa/app`, or `\"\"` for the trust domain's own ID " +
			"`spiffe://example.org`) and `segments` (`[\"ns\", \"default\", \"sa\", \"app\"]`). " +
			"The call fails on an ID that is not valid under the SPIFFE specification.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "id",
				MarkdownDescription: "SPIFFE ID of the form `spiffe://<trust-domain>/<path>`, such as `spiffe://example.org/spire/server`.",
			},
		},
		Return: function.ObjectReturn{AttributeTypes: parsedSpiffeIDAttributeTypes},
	}
}

func (f *parseSpiffeIDFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var value string
	resp.Error = req.Arguments.Get(ctx, &value)
	if resp.Error != nil {
		return
	}

	id, err := validate.ParseSPIFFEID(value)
	if err != nil {
		resp.Error = function.NewArgumentFuncError(0, fmt.Sprintf("%s. %s", capitalize(err.Error()), validate.SPIFFEIDRules))
		return
	}
	parsed := parsedSpiffeID{
		TrustDomain: id.TrustDomain().Name(),
		Path:        id.Path(),
		// An empty list, not null, for the trust domain's own ID, so
		// length() and for expressions work without a null check.
		Segments: []string{},
	}
	if id.Path() != "" {
		parsed.Segments = strings.Split(strings.TrimPrefix(id.Path(), "/"), "/")
	}
	resp.Error = resp.Result.Set(ctx, parsed)
}
