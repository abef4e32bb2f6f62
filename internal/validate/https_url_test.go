package validate_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func TestHTTPSURL(t *testing.T) {
	const summary = "Invalid HTTPS URL"
	runValidatorCases(t, validate.HTTPSURL(), map[string]validatorCase{
		"null":              {value: types.StringNull()},
		"unknown":           {value: types.StringUnknown()},
		"host":              {value: types.StringValue("https://spire.example.org")},
		"host and port":     {value: types.StringValue("https://spire.example.org:8443")},
		"ip and path":       {value: types.StringValue("https://127.0.0.1:8443/bundle?x=1")},
		"ipv6":              {value: types.StringValue("https://[::1]:8443")},
		"http":              {value: types.StringValue("http://spire.example.org"), wantSummary: summary, wantDetail: []string{`the scheme is "http", it must be https`}},
		"no scheme":         {value: types.StringValue("spire.example.org:8443"), wantSummary: summary, wantDetail: []string{`the scheme is "spire.example.org"`, "the host is missing"}},
		"no scheme path":    {value: types.StringValue("spire.example.org/bundle"), wantSummary: summary, wantDetail: []string{"the scheme is missing", "the host is missing"}},
		"no host":           {value: types.StringValue("https:///bundle"), wantSummary: summary, wantDetail: []string{"the host is missing"}},
		"port only":         {value: types.StringValue("https://:8443"), wantSummary: summary, wantDetail: []string{"the host is missing"}},
		"opaque":            {value: types.StringValue("https:spire.example.org"), wantSummary: summary, wantDetail: []string{"the host is missing"}},
		"user":              {value: types.StringValue("https://admin@spire.example.org"), wantSummary: summary, wantDetail: []string{"user credentials"}},
		"user and secret":   {value: types.StringValue("https://admin:secret@spire.example.org"), wantSummary: summary, wantDetail: []string{"user credentials"}},
		"fragment":          {value: types.StringValue("https://spire.example.org/#frag"), wantSummary: summary, wantDetail: []string{"fragment"}},
		"empty fragment":    {value: types.StringValue("https://spire.example.org#"), wantSummary: summary, wantDetail: []string{"fragment"}},
		"several":           {value: types.StringValue("http://u@h#f"), wantSummary: summary, wantDetail: []string{`"http"`, "user credentials", "fragment"}},
		"upper-case scheme": {value: types.StringValue("HTTPS://spire.example.org"), wantSummary: summary, wantDetail: []string{`the scheme is spelled "HTTPS", it must be lower-case "https://"`}},
		"mixed-case scheme": {value: types.StringValue("Https://spire.example.org"), wantSummary: summary, wantDetail: []string{`spelled "Https"`}},
		"unparsable":        {value: types.StringValue("https://spire example.org"), wantSummary: summary, wantDetail: []string{"cannot be parsed as a URL"}},
		"empty":             {value: types.StringValue(""), wantSummary: summary, wantDetail: []string{"the scheme is missing", "the host is missing"}},
	})
}
