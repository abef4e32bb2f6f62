package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Quantity accepts a Kubernetes resource quantity such as "100m", "64Mi" or
// "2", as the API server parses it.
func Quantity() validator.String {
	return funcValidator{
		summary: "Invalid Resource Quantity",
		rule:    `a Kubernetes resource quantity such as "100m", "64Mi" or "2"`,
		check: func(v string) []string {
			if _, err := resource.ParseQuantity(v); err != nil {
				return []string{err.Error()}
			}
			return nil
		},
	}
}

// LabelKey accepts a Kubernetes label key: an optional DNS subdomain prefix
// and "/", then a name of at most 63 alphanumerics, "-", "_" and ".".
func LabelKey() validator.String {
	return funcValidator{
		summary: "Invalid Label Key",
		rule:    `a Kubernetes label key: an optional DNS subdomain prefix and "/", then at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit`,
		check:   validation.IsQualifiedName,
	}
}

// LabelValue accepts a Kubernetes label value: empty, or at most 63
// alphanumerics, "-", "_" and ".", starting and ending alphanumeric.
func LabelValue() validator.String {
	return funcValidator{
		summary: "Invalid Label Value",
		rule:    `a Kubernetes label value: empty, or at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit`,
		check:   validation.IsValidLabelValue,
	}
}

// LabelSelector accepts a Kubernetes label selector in its string form, such
// as "istio-injection=enabled" or "env in (prod,staging),!legacy".
func LabelSelector() validator.String {
	return funcValidator{
		summary: "Invalid Label Selector",
		rule:    `a Kubernetes label selector such as "istio-injection=enabled" or "env in (prod,staging),!legacy"`,
		check: func(v string) []string {
			if _, err := labels.Parse(v); err != nil {
				return []string{err.Error()}
			}
			return nil
		},
	}
}

// Duration accepts a positive Go duration such as "1h", "90m" or "1h30m", the
// format of metav1.Duration fields (cert-manager certificate durations).
func Duration() validator.String {
	return funcValidator{
		summary: "Invalid Duration",
		rule:    `a positive duration such as "1h", "90m" or "1h30m" (units ns, us, ms, s, m, h)`,
		check: func(v string) []string {
			d, err := time.ParseDuration(v)
			switch {
			case err != nil:
				return []string{strings.TrimPrefix(err.Error(), "time: ")}
			case d <= 0:
				return []string{"the duration is not positive"}
			}
			return nil
		},
	}
}

// StrictJSON accepts a JSON object that decodes into the value newValue
// returns without unknown fields, so a misspelt field of a Kubernetes
// structure (what is one of "an Affinity") fails the plan instead of being
// dropped by the API server or the operator.
func StrictJSON(what string, newValue func() any) validator.String {
	return funcValidator{
		summary: "Invalid JSON",
		rule:    "a JSON object (jsonencode(...)) describing " + what,
		check: func(v string) []string {
			dec := json.NewDecoder(bytes.NewReader([]byte(v)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(newValue()); err != nil {
				return []string{strings.TrimPrefix(err.Error(), "json: ")}
			}
			if dec.More() {
				return []string{"there is more than one JSON value"}
			}
			return nil
		},
	}
}

// funcValidator reports what check says is wrong with a string.
type funcValidator struct {
	summary string
	rule    string
	check   func(string) []string
}

func (v funcValidator) Description(context.Context) string { return "value must be " + v.rule }

func (v funcValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v funcValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	value := req.ConfigValue.ValueString()
	if problems := v.check(value); len(problems) > 0 {
		AttributeError(&resp.Diagnostics, req.Path, v.summary, fmt.Sprintf(
			"The value must be %s.\n\n%q: %s.", v.rule, value, strings.TrimSuffix(strings.Join(problems, "; "), ".")))
	}
}

// HostPort accepts "<host>:<port>" with a port from 1 to 65535, such as the
// gRPC address "cert-manager-istio-csr.cert-manager.svc:443".
func HostPort() validator.String {
	return funcValidator{
		summary: "Invalid Address",
		rule:    `an address "<host>:<port>" with a port from 1 to 65535, such as "cert-manager-istio-csr.cert-manager.svc:443"`,
		check: func(v string) []string {
			host, port, err := net.SplitHostPort(v)
			if err != nil {
				return []string{strings.TrimPrefix(err.Error(), "address "+v+": ")}
			}
			var problems []string
			if host == "" {
				problems = append(problems, "the host is empty")
			}
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				problems = append(problems, fmt.Sprintf("the port %q is not a number from 1 to 65535", port))
			}
			return problems
		},
	}
}
