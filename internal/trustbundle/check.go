package trustbundle

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
)

// Check reports whether b can serve as td's trust bundle at now.
//
// It fails when the bundle belongs to another trust domain (its own trust
// domain differs from td, or an authority carries a SPIFFE ID of another trust
// domain as URI SAN, as SPIRE server CAs carry spiffe://<trust domain>), when
// it has no X.509 authority or none valid at now, or when a JWT authority has
// a key that is not an asymmetric public key. It warns about each expired
// X.509 authority when others remain valid.
func Check(td spiffeid.TrustDomain, b *spiffebundle.Bundle, now time.Time) (warnings []string, err error) {
	if b == nil {
		return nil, errors.New("the SPIFFE bundle is missing")
	}
	if b.TrustDomain() != td {
		return nil, fmt.Errorf("the bundle was read for trust domain %q, not %q", b.TrustDomain(), td)
	}

	var errs []error
	authorities := b.X509Authorities()
	if len(authorities) == 0 {
		errs = append(errs, errors.New("the bundle has no X.509 authority (no key with use x509-svid); "+
			"peers could not verify any X.509-SVID of this trust domain"))
	}

	var expired, notYetValid []string
	for _, cert := range authorities {
		if other, ok := foreignTrustDomain(td, cert); ok {
			errs = append(errs, fmt.Errorf("X.509 authority %s belongs to trust domain %q, not %q: "+
				"this is the bundle of another trust domain", describe(cert), other, td))
		}
		switch {
		case now.After(cert.NotAfter):
			expired = append(expired, fmt.Sprintf("X.509 authority %s expired at %s",
				describe(cert), cert.NotAfter.UTC().Format(time.RFC3339)))
		case now.Before(cert.NotBefore):
			notYetValid = append(notYetValid, fmt.Sprintf("X.509 authority %s is not valid before %s",
				describe(cert), cert.NotBefore.UTC().Format(time.RFC3339)))
		}
	}
	if len(authorities) > 0 && len(expired)+len(notYetValid) == len(authorities) {
		errs = append(errs, fmt.Errorf("no X.509 authority of the bundle is valid at %s: %s",
			now.UTC().Format(time.RFC3339), strings.Join(append(expired, notYetValid...), "; ")))
	} else {
		warnings = expired
	}

	jwtAuthorities := b.JWTAuthorities()
	keyIDs := make([]string, 0, len(jwtAuthorities))
	for keyID := range jwtAuthorities {
		keyIDs = append(keyIDs, keyID)
	}
	sort.Strings(keyIDs)
	for _, keyID := range keyIDs {
		if _, err := x509.MarshalPKIXPublicKey(jwtAuthorities[keyID]); err != nil {
			errs = append(errs, fmt.Errorf("JWT authority %q is not an RSA, ECDSA or Ed25519 public key (%T)",
				keyID, jwtAuthorities[keyID]))
		}
	}

	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return warnings, nil
}

// foreignTrustDomain returns the trust domain of the first SPIFFE ID URI SAN
// of cert that is not a member of td. URI SANs of other schemes are no claim
// about the trust domain and are ignored.
func foreignTrustDomain(td spiffeid.TrustDomain, cert *x509.Certificate) (spiffeid.TrustDomain, bool) {
	for _, uri := range cert.URIs {
		if !strings.EqualFold(uri.Scheme, "spiffe") {
			continue
		}
		id, err := spiffeid.FromURI(uri)
		if err != nil {
			// Not a well-formed SPIFFE ID, so it names no trust domain.
			continue
		}
		if !id.MemberOf(td) {
			return id.TrustDomain(), true
		}
	}
	return spiffeid.TrustDomain{}, false
}

// describe names an authority the way users can find it again: its subject
// and the SHA-256 fingerprint that FingerprintsSHA256 lists.
func describe(cert *x509.Certificate) string {
	return fmt.Sprintf("%q (SHA-256 %s)", cert.Subject.String(), fingerprint(cert))
}

func fingerprint(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.Raw)
	return hex.EncodeToString(sum[:])
}
