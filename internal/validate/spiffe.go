// Package validate holds the provider's own attribute validators, for checks
// the terraform-plugin-framework-validators library does not have: SPIFFE
// trust domains, IDs and bundles (through go-spiffe), HTTPS endpoint URLs and
// Kubernetes names. Every validator skips null and unknown values.
//
// ParseTrustDomain and ParseSPIFFEID are shared with the provider functions so
// that a value the functions accept is one the validators accept, with the
// same explanation when it is not.
package validate

import (
	"fmt"
	"strings"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
)

const (
	// MaxTrustDomainLength is the SPIFFE specification's limit on a trust
	// domain name, in bytes.
	MaxTrustDomainLength = 255
	// MaxSPIFFEIDLength is the SPIFFE specification's limit on a SPIFFE ID as
	// a URI, in bytes.
	MaxSPIFFEIDLength = 2048

	// TrustDomainRules says what a valid trust domain name is.
	TrustDomainRules = `A trust domain name has 1 to 255 characters, each a lowercase letter, a digit, ` +
		`a dot (.), a dash (-) or an underscore (_), with no "spiffe://" scheme and no path, for example "example.org".`
	// SPIFFEIDRules says what a valid SPIFFE ID is.
	SPIFFEIDRules = `A SPIFFE ID has the form spiffe://<trust-domain>/<path>, for example "spiffe://example.org/spire/server": ` +
		`the trust domain uses lowercase letters, digits, dots, dashes and underscores; ` +
		`each path segment is non-empty, is not "." or "..", and uses letters, digits, dots, dashes and underscores; ` +
		`there is no trailing slash, query or fragment, and the whole ID has at most 2048 characters.`
)

// ParseTrustDomain parses a bare trust domain name such as "example.org". A
// SPIFFE ID is refused, even though go-spiffe would take its trust domain,
// because a field that holds a trust domain must not hide a path. The error
// says what is wrong in a sentence a user can act on.
func ParseTrustDomain(name string) (spiffeid.TrustDomain, error) {
	if strings.Contains(name, ":/") {
		if id, err := spiffeid.FromString(name); err == nil {
			return spiffeid.TrustDomain{}, fmt.Errorf("%q is a SPIFFE ID, not a trust domain name: use %q", name, id.TrustDomain().Name())
		}
		return spiffeid.TrustDomain{}, fmt.Errorf("%q has a URI scheme; a trust domain name has none", name)
	}
	if strings.Contains(name, "/") {
		return spiffeid.TrustDomain{}, fmt.Errorf("%q has a path; a trust domain name has none", name)
	}
	if len(name) > MaxTrustDomainLength {
		return spiffeid.TrustDomain{}, fmt.Errorf("the trust domain name has %d characters, more than the limit of %d", len(name), MaxTrustDomainLength)
	}
	td, err := spiffeid.TrustDomainFromString(name)
	if err != nil {
		return spiffeid.TrustDomain{}, fmt.Errorf("%q is not a valid trust domain name: %w", name, err)
	}
	return td, nil
}

// ParseSPIFFEID parses a SPIFFE ID such as "spiffe://example.org/spire/server"
// and also enforces the SPIFFE specification's length limits, which go-spiffe
// leaves to its callers.
func ParseSPIFFEID(value string) (spiffeid.ID, error) {
	if len(value) > MaxSPIFFEIDLength {
		return spiffeid.ID{}, fmt.Errorf("the SPIFFE ID has %d characters, more than the limit of %d", len(value), MaxSPIFFEIDLength)
	}
	id, err := spiffeid.FromString(value)
	if err != nil {
		return spiffeid.ID{}, fmt.Errorf("%q is not a valid SPIFFE ID: %w", value, err)
	}
	if length := len(id.TrustDomain().Name()); length > MaxTrustDomainLength {
		return spiffeid.ID{}, fmt.Errorf("the trust domain of the SPIFFE ID has %d characters, more than the limit of %d", length, MaxTrustDomainLength)
	}
	return id, nil
}
