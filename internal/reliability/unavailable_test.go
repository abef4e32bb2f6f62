package reliability

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// TestAccApplyThroughUnavailable puts a TLS proxy in front of a real apiserver
// that answers every third request for ClusterFederatedTrustDomains with
// 503 Service Unavailable (no Retry-After, so client-go does not retry it
// itself): apply, plan and destroy of 20 objects must succeed through the
// provider's retries, with no error or warning shown.
func TestAccApplyThroughUnavailable(t *testing.T) {
	const objects = 20
	c := cluster(t, north)
	who := newIdentity(t, c, "unavailable")
	upstream, err := url.Parse(c.Host)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.CACertPEM)
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	proxy.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}
	var requests, refused atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/clusterfederatedtrustdomains") && requests.Add(1)%3 == 0 {
			refused.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
				`"message":"injected by the test proxy","reason":"ServiceUnavailable","code":503}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	proxyCA := strings.TrimSpace(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))

	d := newTFDir(t, "unavailable")
	d.write(fmt.Sprintf(`
provider "zerotrust" {
  clusters = {
    flaky = {
      host                   = %q
      token                  = %q
      cluster_ca_certificate = <<-EOT
%s
EOT
    }
  }
}
`, srv.URL, who.Token, proxyCA) + ftdsConfig("flaky", "flaky", objects))
	out := d.mustApply(nil, "-parallelism=10")
	checkQuietApply(t, out)
	d.expectEmptyPlan()
	checkStateMatchesCluster(t, d, c, "flaky", objects)
	code, destroyOut := d.run(nil, "destroy", "-auto-approve", "-input=false", "-parallelism=10")
	if code != 0 {
		t.Fatalf("destroy failed:\n%s", tail(destroyOut, 40))
	}
	checkQuietApply(t, destroyOut)
	if refused.Load() == 0 {
		t.Fatal("the proxy never answered 503: the test proves nothing")
	}
	if !t.Failed() {
		unavailableOK.Store(objects)
		unavailable503s.Store(refused.Load())
	}
	t.Logf("%d objects applied, planned and destroyed through %d responses 503 (of %d requests)", objects, refused.Load(), requests.Load())
}
