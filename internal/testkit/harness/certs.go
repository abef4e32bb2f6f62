package harness

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
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
	ca, err := newTestCA("zerotrust-harness-ca-" + name)
	if err != nil {
		return f, nil, err
	}
	caPEM := ca.certPEM
	// The apiserver sends the whole file as its chain; the CA is the root the
	// client already has, so the leaf alone is enough. 10.0.0.1 and the
	// kubernetes names are the addresses in-cluster clients use for the API.
	srvPEM, srvKeyPEM, err := ca.issueServing("kube-apiserver", "10.0.0.1",
		"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")
	if err != nil {
		return f, nil, err
	}

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
