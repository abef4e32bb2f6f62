package acctest

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// ObjectStore serves objects over TLS on 127.0.0.1, as an object store
// serves a published trust bundle at a path-style URL (<url>/<bucket>/<key>):
// serve answers every request. It returns the store's URL and its CA as PEM
// (what ca_certificates and a peer's trust store take), and stops when t
// ends. The lab's S3-compatible server stands in for a real store where
// SPIRE itself must write the object; this one serves what a test chooses,
// failures included.
func ObjectStore(t *testing.T, serve http.HandlerFunc) (url, caPEM string) {
	t.Helper()
	srv := httptest.NewTLSServer(serve)
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return srv.URL, strings.TrimSpace(string(ca))
}
