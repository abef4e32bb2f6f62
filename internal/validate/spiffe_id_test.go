package validate_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func TestSPIFFEID(t *testing.T) {
	const summary = "Invalid SPIFFE ID"
	const form = "spiffe://<trust-domain>/<path>"
	longPath := "spiffe://example.org/" + strings.Repeat("a", validate.MaxSPIFFEIDLength-len("spiffe://example.org/"))
	runValidatorCases(t, validate.SPIFFEID(), map[string]validatorCase{
		"null":              {value: types.StringNull()},
		"unknown":           {value: types.StringUnknown()},
		"server":            {value: types.StringValue("spiffe://example.org/spire/server")},
		"trust domain id":   {value: types.StringValue("spiffe://example.org")},
		"mixed case path":   {value: types.StringValue("spiffe://example.org/ns/Default/sa/My_App-1.0")},
		"2048 characters":   {value: types.StringValue(longPath)},
		"2049 characters":   {value: types.StringValue(longPath + "a"), wantSummary: summary, wantDetail: []string{"2049 characters, more than the limit of 2048"}},
		"long trust domain": {value: types.StringValue("spiffe://" + strings.Repeat("a", 256) + "/x"), wantSummary: summary, wantDetail: []string{"trust domain of the SPIFFE ID has 256 characters"}},
		"missing scheme":    {value: types.StringValue("example.org/spire/server"), wantSummary: summary, wantDetail: []string{form, "scheme is missing or invalid"}},
		"wrong scheme":      {value: types.StringValue("https://example.org/spire"), wantSummary: summary, wantDetail: []string{"scheme is missing or invalid"}},
		"uppercase td":      {value: types.StringValue("spiffe://Example.org/x"), wantSummary: summary, wantDetail: []string{"limited to lowercase letters"}},
		"empty":             {value: types.StringValue(""), wantSummary: summary, wantDetail: []string{form, "cannot be empty"}},
		"missing td":        {value: types.StringValue("spiffe:///x"), wantSummary: summary, wantDetail: []string{"trust domain is missing"}},
		"empty segment":     {value: types.StringValue("spiffe://example.org/a//b"), wantSummary: summary, wantDetail: []string{"empty segments"}},
		"dot dot":           {value: types.StringValue("spiffe://example.org/a/../b"), wantSummary: summary, wantDetail: []string{"dot segments"}},
		"trailing slash":    {value: types.StringValue("spiffe://example.org/a/"), wantSummary: summary, wantDetail: []string{"trailing slash"}},
		"query":             {value: types.StringValue("spiffe://example.org/a?b=c"), wantSummary: summary, wantDetail: []string{"path segment characters"}},
	})
}

func TestParseSPIFFEID(t *testing.T) {
	id, err := validate.ParseSPIFFEID("spiffe://example.org/spire/server")
	if err != nil || id.TrustDomain().Name() != "example.org" || id.Path() != "/spire/server" {
		t.Fatalf("ParseSPIFFEID = %q, %v", id, err)
	}
}
