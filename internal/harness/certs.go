package harness

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// clusterFiles are the credentials one cluster's apiserver is started with.
type clusterFiles struct {
	caCert, servingCert, servingKey, saKey, tokens, auditPolicy string
}

func newKey() (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writeCredentials generates, under dir, a CA, a serving certificate for
// 127.0.0.1/localhost signed by it, a service-account signing key, the token
// auth file (admin in system:masters, viewer without groups) and, if audit is
// set, an audit policy logging everything at Metadata level.
func writeCredentials(dir, name, adminToken, viewerToken string, audit bool) (clusterFiles, []byte, error) {
	f := clusterFiles{
		caCert:      filepath.Join(dir, "ca.crt"),
		servingCert: filepath.Join(dir, "apiserver.crt"),
		servingKey:  filepath.Join(dir, "apiserver.key"),
		saKey:       filepath.Join(dir, "service-account.key"),
		tokens:      filepath.Join(dir, "tokens.csv"),
	}
	now := time.Now()
	caKey, _, err := newKey()
	if err != nil {
		return f, nil, err
	}
	sn, err := serial()
	if err != nil {
		return f, nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: "zerotrust-harness-ca-" + name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return f, nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return f, nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	srvKey, srvKeyPEM, err := newKey()
	if err != nil {
		return f, nil, err
	}
	if sn, err = serial(); err != nil {
		return f, nil, err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		return f, nil, fmt.Errorf("creating serving certificate: %w", err)
	}
	srvPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER})
	// The apiserver sends the whole file as its chain; the CA is the root the
	// client already has, so the leaf alone is enough.

	_, saKeyPEM, err := newKey()
	if err != nil {
		return f, nil, err
	}

	tokens := fmt.Sprintf("%s,admin,uid-admin,\"system:masters\"\n%s,viewer,uid-viewer\n", adminToken, viewerToken)

	files := []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{f.caCert, caPEM, 0o644},
		{f.servingCert, srvPEM, 0o644},
		{f.servingKey, srvKeyPEM, 0o600},
		{f.saKey, saKeyPEM, 0o600},
		{f.tokens, []byte(tokens), 0o600},
	}
	if audit {
		f.auditPolicy = filepath.Join(dir, "audit-policy.yaml")
		files = append(files, struct {
			path string
			data []byte
			mode os.FileMode
		}{f.auditPolicy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n"), 0o644})
	}
	for _, w := range files {
		if err := os.WriteFile(w.path, w.data, w.mode); err != nil {
			return f, nil, err
		}
	}
	return f, caPEM, nil
}
