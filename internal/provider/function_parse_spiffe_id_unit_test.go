package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestParseSpiffeIDFunctionDefinition(t *testing.T) {
	d := assertDefinition(t, NewParseSpiffeIDFunction(), "parse_spiffe_id")
	if len(d.Parameters) != 1 || d.VariadicParameter != nil {
		t.Error("parse_spiffe_id must take exactly one argument")
	}
}

func TestParseSpiffeIDFunction(t *testing.T) {
	parsed := func(trustDomain, path string, segments ...string) attr.Value {
		elements := make([]attr.Value, len(segments))
		for i, segment := range segments {
			elements[i] = types.StringValue(segment)
		}
		return types.ObjectValueMust(parsedSpiffeIDAttributeTypes, map[string]attr.Value{
			"trust_domain": types.StringValue(trustDomain),
			"path":         types.StringValue(path),
			"segments":     types.ListValueMust(types.StringType, elements),
		})
	}
	arg := func(value string) []attr.Value { return []attr.Value{types.StringValue(value)} }

	runFunctionCases(t, NewParseSpiffeIDFunction(), types.ObjectUnknown(parsedSpiffeIDAttributeTypes), map[string]functionCase{
		"server": {
			arguments: arg("spiffe://example.org/spire/server"),
			want:      parsed("example.org", "/spire/server", "spire", "server"),
		},
		"workload": {
			arguments: arg("spiffe://apps.east.example.com/ns/Default/sa/app"),
			want:      parsed("apps.east.example.com", "/ns/Default/sa/app", "ns", "Default", "sa", "app"),
		},
		"trust domain id": {
			arguments: arg("spiffe://example.org"),
			want:      parsed("example.org", ""),
		},
		"missing scheme": {arguments: arg("example.org/spire/server"), wantArgument: 0, wantError: []string{"scheme is missing or invalid", "spiffe://<trust-domain>/<path>"}},
		"uppercase td":   {arguments: arg("spiffe://EXAMPLE.org/x"), wantArgument: 0, wantError: []string{"limited to lowercase letters"}},
		"empty segment":  {arguments: arg("spiffe://example.org/a//b"), wantArgument: 0, wantError: []string{"empty segments"}},
		"dot dot":        {arguments: arg("spiffe://example.org/.."), wantArgument: 0, wantError: []string{"dot segments"}},
		"trailing slash": {arguments: arg("spiffe://example.org/a/"), wantArgument: 0, wantError: []string{"trailing slash"}},
		"empty":          {arguments: arg(""), wantArgument: 0, wantError: []string{"cannot be empty"}},
		"missing domain": {arguments: arg("spiffe:///a"), wantArgument: 0, wantError: []string{"trust domain is missing"}},
	})
}
