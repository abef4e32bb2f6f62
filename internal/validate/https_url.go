package validate

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// HTTPSURL accepts an absolute https URL with a host, such as a SPIFFE
// federation bundle endpoint "https://spire.example.org:8443". User
// credentials are refused because they would end up in the cluster's
// objects in clear text, a fragment because it never reaches the server, and
// a scheme spelled other than "https" because the CRDs' `^https://` patterns
// and the operators' checks are case-sensitive.
func HTTPSURL() validator.String {
	return httpsURLValidator{}
}

type httpsURLValidator struct{}

func (httpsURLValidator) Description(context.Context) string {
	return "value must be an https URL (lower-case https://) with a host, without user credentials or a fragment"
}

func (httpsURLValidator) MarkdownDescription(context.Context) string {
	return "value must be an `https://` URL (lower-case) with a host, without user credentials or a fragment"
}

func (httpsURLValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	value := req.ConfigValue.ValueString()
	if problems := httpsURLProblems(value); len(problems) > 0 {
		AttributeError(&resp.Diagnostics, req.Path, "Invalid HTTPS URL", fmt.Sprintf(
			"The value must be an absolute https:// URL with a host, without user credentials or a fragment, "+
				"for example \"https://spire.example.org:8443\".\n\n%q: %s.", value, strings.Join(problems, "; ")))
	}
}

// httpsURLProblems lists everything wrong with value, so one plan reports
// all of it.
func httpsURLProblems(value string) []string {
	parsed, err := url.Parse(value)
	if err != nil {
		return []string{fmt.Sprintf("it cannot be parsed as a URL: %v", err)}
	}
	var problems []string
	// url.Parse lower-cases the scheme, so "HTTPS://" would pass as https;
	// the CRDs' patterns (^https://) and the operators' prefix checks are
	// case-sensitive and refuse it.
	if scheme, _, found := strings.Cut(value, ":"); found && parsed.Scheme == "https" && scheme != "https" {
		problems = append(problems, fmt.Sprintf("the scheme is spelled %q, it must be lower-case \"https://\" "+
			"(the CRDs' patterns and the operators compare case-sensitively)", scheme))
	}
	if parsed.Scheme != "https" {
		if parsed.Scheme == "" {
			problems = append(problems, "the scheme is missing, it must be https")
		} else {
			problems = append(problems, fmt.Sprintf("the scheme is %q, it must be https", parsed.Scheme))
		}
	}
	if parsed.Opaque != "" || parsed.Hostname() == "" {
		problems = append(problems, "the host is missing")
	}
	if parsed.User != nil {
		problems = append(problems, "it has user credentials (user@ or user:password@ before the host)")
	}
	// A bare "#" leaves Fragment empty, so look at the text itself: an
	// unescaped "#" can only start a fragment.
	if strings.Contains(value, "#") {
		problems = append(problems, "it has a fragment (#...)")
	}
	return problems
}
