// Package bundletest makes SPIFFE trust bundles from freshly generated CA
// certificates, for tests of any package that handles trust bundles.
package bundletest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
)

// CA is a self-signed certificate authority shaped like a SPIRE server CA:
// an ECDSA P-256 key and the trust domain's SPIFFE ID as URI SAN.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// NewCA creates a self-signed CA for td valid from notBefore to notAfter.
func NewCA(t testing.TB, td spiffeid.TrustDomain, notBefore, notAfter time.Time) *CA {
	t.Helper()

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generate CA key: %v", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		t.Fatalf("generate CA serial number: %v", err)
	}
	template := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"SPIFFE"}, CommonName: td.Name() + " test CA " + serial.Text(16)[:8]},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		URIs:                  []*url.URL{td.ID().URL()},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		t.Fatalf("create CA certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("parse CA certificate: %v", err)
	}
	return &CA{Cert: cert, Key: key}
}

// BundleJSON returns the SPIFFE bundle JSON document for td holding the
// certificates of cas as X.509 authorities.
func BundleJSON(t testing.TB, td spiffeid.TrustDomain, cas ...*CA) string {
	t.Helper()

	bundle := spiffebundle.New(td)
	for _, ca := range cas {
		bundle.AddX509Authority(ca.Cert)
	}
	data, err := bundle.Marshal()
	if err != nil {
		t.Fatalf("marshal SPIFFE bundle: %v", err)
	}
	return string(data)
}

// PEM returns the certificates of cas as concatenated PEM blocks, the
// format of a SPIRE bundle ConfigMap's bundle.crt key.
func PEM(cas ...*CA) []byte {
	var out []byte
	for _, ca := range cas {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})...)
	}
	return out
}
