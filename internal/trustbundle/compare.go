package trustbundle

import (
	"crypto"
	"crypto/x509"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
)

// X509Difference is how one copy of a trust domain's bundle differs from
// another (the reference, what its SPIRE server publishes now) in X.509
// authorities.
type X509Difference struct {
	// Missing are the reference's authorities the copy lacks: new ones it
	// has not picked up yet (a prepared or activated CA).
	Missing []*x509.Certificate
	// Dropped are unexpired authorities the copy holds but the reference
	// no longer does: revoked by `localauthority x509 revoke` (SPIRE removes
	// an authority from its bundle only on revocation or after expiry).
	Dropped []*x509.Certificate
}

// CompareX509 compares the X.509 authorities of held, a copy, with
// reference's. An authority of held that expired by now is not Dropped: SPIRE prunes
// expired authorities on its own schedule, and they verify nothing anyway.
func CompareX509(held, reference *spiffebundle.Bundle, now time.Time) X509Difference {
	var d X509Difference
	for _, cert := range reference.X509Authorities() {
		if !held.HasX509Authority(cert) {
			d.Missing = append(d.Missing, cert)
		}
	}
	for _, cert := range held.X509Authorities() {
		if !reference.HasX509Authority(cert) && now.Before(cert.NotAfter) {
			d.Dropped = append(d.Dropped, cert)
		}
	}
	return d
}

// Describe names authorities for a message: the subject and SHA-256
// fingerprint of each, as FingerprintsSHA256 lists them.
func Describe(certs []*x509.Certificate) []string {
	out := make([]string, len(certs))
	for i, c := range certs {
		out[i] = describe(c)
	}
	return out
}

// SameAuthorities reports whether a and b hold the same X.509 and JWT
// authorities, in any order. Their sequence numbers and refresh hints play
// no part: SPIRE renumbers a bundle it stores, and two copies of one bundle
// that trust the same keys verify the same SVIDs.
func SameAuthorities(a, b *spiffebundle.Bundle) bool {
	if a == nil || b == nil {
		return a == b
	}
	if len(a.X509Authorities()) != len(b.X509Authorities()) {
		return false
	}
	for _, cert := range a.X509Authorities() {
		if !b.HasX509Authority(cert) {
			return false
		}
	}
	aJWT, bJWT := a.JWTAuthorities(), b.JWTAuthorities()
	if len(aJWT) != len(bJWT) {
		return false
	}
	for id, key := range aJWT {
		other, ok := bJWT[id]
		k, equatable := key.(interface{ Equal(crypto.PublicKey) bool })
		if !ok || !equatable || !k.Equal(other) {
			return false
		}
	}
	return true
}
