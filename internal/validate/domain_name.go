package validate

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// DomainNameRules says what DomainName accepts, for descriptions.
const DomainNameRules = "a lowercase DNS host name such as `apps.example.com`: at least two labels of letters, digits and " +
	"dashes (1 to 63 characters each, not starting or ending with a dash), at most 253 characters, without a trailing " +
	"dot, a wildcard, a scheme, a port or a path"

// DomainName accepts a domain whose control is proven with a TXT record at
// that exact name (domain verification): a lowercase host name without a
// trailing dot or a wildcard.
func DomainName() validator.String { return domainNameValidator{} }

// DomainNameProblems returns why name is not accepted by DomainName, or nil.
func DomainNameProblems(name string) []string {
	switch {
	case name == "":
		return []string{"the name is empty"}
	case strings.Contains(name, "://") || strings.ContainsAny(name, "/:@ "):
		return []string{"write the bare domain name, without a scheme, port, path or spaces"}
	case strings.Contains(name, "*"):
		return []string{"a wildcard cannot be verified: a TXT record proves control of one name, so verify the name " +
			"itself (for *.apps.example.com, verify apps.example.com)"}
	case strings.HasSuffix(name, "."):
		return []string{fmt.Sprintf("remove the trailing dot: write %q (the name is always read as fully qualified)", strings.TrimSuffix(name, "."))}
	case strings.ToLower(name) != name:
		return []string{fmt.Sprintf("use lowercase: write %q (DNS names are case-insensitive, and the API stores the name as written)", strings.ToLower(name))}
	case len(name) > 253:
		return []string{fmt.Sprintf("the name is %d characters long; at most 253 are allowed", len(name))}
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return []string{"a single label is not a domain that can be verified; write the full name, such as apps.example.com"}
	}
	if net.ParseIP(name) != nil {
		return []string{"this is an IP address; a domain name is needed"}
	}
	var problems []string
	for _, l := range labels {
		switch {
		case l == "":
			problems = append(problems, "the name has an empty label (two dots in a row, or a leading dot)")
		case len(l) > 63:
			problems = append(problems, fmt.Sprintf("label %q is %d characters long; at most 63 are allowed", l, len(l)))
		case strings.Contains(l, "_"):
			problems = append(problems, fmt.Sprintf("label %q has an underscore, which host names may not contain", l))
		case strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "":
			problems = append(problems, fmt.Sprintf("label %q may contain only letters, digits and dashes", l))
		case l[0] == '-' || l[len(l)-1] == '-':
			problems = append(problems, fmt.Sprintf("label %q must not start or end with a dash", l))
		}
	}
	if last := labels[len(labels)-1]; len(problems) == 0 && strings.Trim(last, "0123456789") == "" {
		problems = append(problems, fmt.Sprintf("the last label %q is all digits; a top-level domain never is", last))
	}
	return problems
}

type domainNameValidator struct{}

func (domainNameValidator) Description(context.Context) string {
	return "value must be " + strings.ReplaceAll(DomainNameRules, "`", "")
}

func (domainNameValidator) MarkdownDescription(context.Context) string {
	return "value must be " + DomainNameRules
}

func (domainNameValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	value := req.ConfigValue.ValueString()
	if problems := DomainNameProblems(value); len(problems) > 0 {
		AttributeError(&resp.Diagnostics, req.Path, "Invalid Domain Name", fmt.Sprintf(
			"The value must be %s.\n\n%q: %s.", strings.ReplaceAll(DomainNameRules, "`", ""), value, strings.Join(problems, "; ")))
	}
}

// NameserverAddress accepts a DNS server address: "host:port", "[ipv6]:port",
// or a host alone (port 53), where host is an IP address or a host name.
func NameserverAddress() validator.String { return nameserverAddressValidator{} }

// NameserverAddressProblems returns why addr is not accepted by
// NameserverAddress, or nil.
func NameserverAddressProblems(addr string) []string {
	host, port := addr, ""
	if h, p, err := net.SplitHostPort(addr); err == nil {
		host, port = h, p
	} else if strings.Count(addr, ":") == 1 || strings.HasPrefix(addr, "[") {
		return []string{strings.TrimPrefix(err.Error(), "address ")}
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	var problems []string
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			problems = append(problems, fmt.Sprintf("port %q is not a number from 1 to 65535", port))
		}
	}
	if net.ParseIP(host) == nil {
		if strings.Contains(host, ":") {
			problems = append(problems, "an IPv6 address with a port must be written in brackets, as [2001:db8::1]:53")
		} else if p := DomainNameProblems(strings.ToLower(strings.TrimSuffix(host, "."))); len(p) > 0 {
			problems = append(problems, fmt.Sprintf("host %q is neither an IP address nor a host name (%s)", host, strings.Join(p, "; ")))
		}
	}
	return problems
}

type nameserverAddressValidator struct{}

const nameserverAddressRule = `a DNS server address: "host:port", "[ipv6]:port", or a host alone for port 53`

func (nameserverAddressValidator) Description(context.Context) string {
	return "value must be " + nameserverAddressRule
}

func (v nameserverAddressValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (nameserverAddressValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	value := req.ConfigValue.ValueString()
	if problems := NameserverAddressProblems(value); len(problems) > 0 {
		AttributeError(&resp.Diagnostics, req.Path, "Invalid Nameserver Address", fmt.Sprintf(
			"The value must be %s.\n\n%q: %s.", nameserverAddressRule, value, strings.Join(problems, "; ")))
	}
}
