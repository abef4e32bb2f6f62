package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestTrustDomainFunctionDefinition(t *testing.T) {
	d := assertDefinition(t, NewTrustDomainFunction(), "trust_domain")
	if len(d.Parameters) != 1 || d.VariadicParameter != nil {
		t.Error("trust_domain must take exactly one argument")
	}
}

func TestTrustDomainFunction(t *testing.T) {
	arg := func(value string) []attr.Value { return []attr.Value{types.StringValue(value)} }
	runFunctionCases(t, NewTrustDomainFunction(), types.StringUnknown(), map[string]functionCase{
		"name":            {arguments: arg("example.org"), want: types.StringValue("example.org")},
		"trust domain id": {arguments: arg("spiffe://example.org"), want: types.StringValue("example.org")},
		"id with path":    {arguments: arg("spiffe://example.org/any/path"), want: types.StringValue("example.org")},
		"uppercase name":  {arguments: arg("Example.org"), wantArgument: 0, wantError: []string{"not a valid trust domain name", "trust domain name or a SPIFFE ID"}},
		"uppercase in id": {arguments: arg("spiffe://Example.org/x"), wantArgument: 0, wantError: []string{"not a valid SPIFFE ID", "limited to lowercase letters"}},
		"other scheme":    {arguments: arg("https://example.org/x"), wantArgument: 0, wantError: []string{"scheme is missing or invalid"}},
		"name with path":  {arguments: arg("example.org/x"), wantArgument: 0, wantError: []string{"has a path"}},
		"empty":           {arguments: arg(""), wantArgument: 0, wantError: []string{"trust domain is missing"}},
		"bad id path":     {arguments: arg("spiffe://example.org/a/../b"), wantArgument: 0, wantError: []string{"dot segments"}},
		"long name":       {arguments: arg(strings.Repeat("a", 256)), wantArgument: 0, wantError: []string{"more than the limit of 255"}},
	})
}
