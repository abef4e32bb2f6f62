package trustbundle

import (
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
