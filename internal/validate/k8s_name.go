package validate

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"k8s.io/apimachinery/pkg/util/validation"
)

// K8sName accepts a Kubernetes object name that is a DNS-1123 subdomain, the
// rule for most kinds (ConfigMaps, custom resources): at most 253 lowercase
// alphanumerics, dashes and dots, starting and ending alphanumeric.
func K8sName() validator.String {
	return dnsNameValidator{
		summary: "Invalid Kubernetes Name",
		rule:    "a Kubernetes object name (DNS-1123 subdomain): at most 253 lowercase letters, digits, dashes and dots, starting and ending with a letter or digit",
		check:   validation.IsDNS1123Subdomain,
	}
}

// DNSLabel accepts a DNS-1123 label, the rule for Kubernetes namespace,
// Service and container names: at most 63 lowercase alphanumerics and
// dashes, starting and ending alphanumeric.
func DNSLabel() validator.String {
	return dnsNameValidator{
		summary: "Invalid DNS Label",
		rule:    "a DNS-1123 label: at most 63 lowercase letters, digits and dashes, starting and ending with a letter or digit",
		check:   validation.IsDNS1123Label,
	}
}

// dnsNameValidator reports the messages of an apimachinery check, so the
// plan says exactly what the API server would.
type dnsNameValidator struct {
	summary string
	rule    string
	check   func(string) []string
}

func (v dnsNameValidator) Description(context.Context) string {
	return "value must be " + v.rule
}

func (v dnsNameValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (v dnsNameValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	value := req.ConfigValue.ValueString()
	if messages := v.check(value); len(messages) > 0 {
		AttributeError(&resp.Diagnostics, req.Path, v.summary, fmt.Sprintf(
			"The value must be %s.\n\n%q: %s.", v.rule, value, strings.Join(messages, "; ")))
	}
}
