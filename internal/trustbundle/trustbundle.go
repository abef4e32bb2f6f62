// Package trustbundle reads, checks, normalises and summarises SPIFFE trust
// bundles, the documents that carry one trust domain's X.509 and JWT
// authorities to the peers that federate with it.
package trustbundle

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
)

var pemPrefix = []byte("-----BEGIN ")

// Parse reads a SPIFFE bundle JSON document (a JWK set with x509-svid and
// jwt-svid keys, as printed by `spire-server bundle show -format spiffe`)
// for the trust domain td.
func Parse(td spiffeid.TrustDomain, data []byte) (*spiffebundle.Bundle, error) {
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return nil, errors.New("the SPIFFE bundle is empty")
	case bytes.HasPrefix(trimmed, pemPrefix):
		// A PEM bundle.crt pasted where the JSON document belongs is a common
		// mix-up; say so instead of reporting a JSON syntax error.
		return nil, errors.New("the value is PEM, not a SPIFFE bundle JSON document; " +
			"use the output of `spire-server bundle show -format spiffe` or the bundle.spiffe key of the bundle ConfigMap")
	}
	bundle, err := spiffebundle.Parse(td, trimmed)
	if err != nil {
		return nil, err
	}
	return bundle, nil
}

// ParsePEM builds a bundle for td whose X.509 authorities are the
// certificates in data, a sequence of PEM CERTIFICATE blocks such as the
// bundle.crt key of a SPIRE bundle ConfigMap. Duplicate certificates are
// kept once.
func ParsePEM(td spiffeid.TrustDomain, data []byte) (*spiffebundle.Bundle, error) {
	bundle := spiffebundle.New(td)
	rest := data
	for index := 0; ; index++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("PEM block %d is a %q block; only CERTIFICATE blocks are allowed", index, block.Type)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d is not a valid X.509 certificate: %w", index, err)
		}
		bundle.AddX509Authority(cert)
	}
	// pem.Decode skips text between blocks, which CA files often carry, but
	// it also skips a truncated or corrupted block: refuse rather than drop a
	// certificate without a word.
	if bytes.Contains(rest, pemPrefix) {
		return nil, errors.New("the PEM data has a malformed or truncated block after the last complete one")
	}
	if len(bundle.X509Authorities()) == 0 {
		return nil, errors.New("the PEM data holds no CERTIFICATE block")
	}
	return bundle, nil
}
