package trustbundle

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"strings"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
)

// X509AuthoritiesPEM returns the X.509 authorities of b as concatenated PEM
// CERTIFICATE blocks, oldest first (by NotBefore, then NotAfter, then DER), so
// the text does not depend on the order the bundle listed them in.
func X509AuthoritiesPEM(b *spiffebundle.Bundle) string {
	authorities := b.X509Authorities()
	slices.SortFunc(authorities, func(x, y *x509.Certificate) int {
		if c := x.NotBefore.Compare(y.NotBefore); c != 0 {
			return c
		}
		if c := x.NotAfter.Compare(y.NotAfter); c != 0 {
			return c
		}
		return bytes.Compare(x.Raw, y.Raw)
	})
	var out strings.Builder
	for _, cert := range authorities {
		out.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}))
	}
	return out.String()
}

// FingerprintsSHA256 returns the lowercase hex SHA-256 fingerprints of the DER
// encoding of b's X.509 authorities, sorted.
func FingerprintsSHA256(b *spiffebundle.Bundle) []string {
	authorities := b.X509Authorities()
	fingerprints := make([]string, 0, len(authorities))
	for _, cert := range authorities {
		fingerprints = append(fingerprints, fingerprint(cert))
	}
	slices.Sort(fingerprints)
	return fingerprints
}

// EarliestExpiry returns the earliest NotAfter among b's X.509 authorities,
// expired ones included, and false when b has none.
func EarliestExpiry(b *spiffebundle.Bundle) (time.Time, bool) {
	var earliest time.Time
	found := false
	for _, cert := range b.X509Authorities() {
		if !found || cert.NotAfter.Before(earliest) {
			earliest = cert.NotAfter
			found = true
		}
	}
	return earliest, found
}

// JWTAuthorities returns b's JWT authorities as PEM PUBLIC KEY blocks keyed by
// key ID. A key that has no PKIX encoding (a symmetric key, which Check
// rejects) is left out.
func JWTAuthorities(b *spiffebundle.Bundle) map[string]string {
	authorities := b.JWTAuthorities()
	encoded := make(map[string]string, len(authorities))
	for keyID, key := range authorities {
		der, err := x509.MarshalPKIXPublicKey(key)
		if err != nil {
			continue
		}
		encoded[keyID] = string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	}
	return encoded
}
