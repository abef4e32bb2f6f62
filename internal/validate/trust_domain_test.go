package validate_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func TestTrustDomain(t *testing.T) {
	const summary = "Invalid Trust Domain"
	const rules = "lowercase letter, a digit, a dot (.), a dash (-) or an underscore (_)"
	runValidatorCases(t, validate.TrustDomain(), map[string]validatorCase{
		"null":                {value: types.StringNull()},
		"unknown":             {value: types.StringUnknown()},
		"simple":              {value: types.StringValue("example.org")},
		"all allowed":         {value: types.StringValue("apps.east-1.example_org.local")},
		"single label":        {value: types.StringValue("cluster.local")},
		"255 characters":      {value: types.StringValue(strings.Repeat("a", 255))},
		"256 characters":      {value: types.StringValue(strings.Repeat("a", 256)), wantSummary: summary, wantDetail: []string{"256 characters, more than the limit of 255"}},
		"empty":               {value: types.StringValue(""), wantSummary: summary, wantDetail: []string{rules, "trust domain is missing"}},
		"uppercase":           {value: types.StringValue("Example.org"), wantSummary: summary, wantDetail: []string{rules, `"Example.org" is not a valid trust domain name`, "limited to lowercase letters"}},
		"port":                {value: types.StringValue("example.org:8443"), wantSummary: summary, wantDetail: []string{"limited to lowercase letters"}},
		"spiffe id":           {value: types.StringValue("spiffe://example.org"), wantSummary: summary, wantDetail: []string{`is a SPIFFE ID, not a trust domain name: use "example.org"`}},
		"spiffe id with path": {value: types.StringValue("spiffe://example.org/spire/server"), wantSummary: summary, wantDetail: []string{`use "example.org"`}},
		"other scheme":        {value: types.StringValue("https://example.org"), wantSummary: summary, wantDetail: []string{"has a URI scheme"}},
		"path":                {value: types.StringValue("example.org/ns"), wantSummary: summary, wantDetail: []string{"has a path"}},
		"space":               {value: types.StringValue("example .org"), wantSummary: summary, wantDetail: []string{"limited to lowercase letters"}},
	})
}

func TestParseTrustDomain(t *testing.T) {
	td, err := validate.ParseTrustDomain("example.org")
	if err != nil || td.Name() != "example.org" {
		t.Fatalf("ParseTrustDomain = %q, %v", td, err)
	}
}
