package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

// TestAccUntrustedBundleEndpointRefused fetches a real SPIRE server's bundle
// over https_spiffe with credentials that must not be accepted: a bootstrap
// bundle of the right trust domain whose CA did not sign the server's
// certificate, the wrong endpoint SPIFFE ID, and a bootstrap bundle whose
// only CA has expired. Each apply must fail naming the cause, and the state
// must hold no trust bundle afterwards. The control (the server's own
// bundle) succeeds. Wrong-trust-domain bundles, an untrusted https_web CA and
// an endpoint that is down or comes back mid-wait are covered in
// internal/datasources (TestAccTrustBundleDataSource_endpointFailures,
// _webProfile, _endpointComesBack).
func TestAccUntrustedBundleEndpointRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := harness.StartSpire(ctx, nil, harness.SpireOptions{
		TrustDomain: fmt.Sprintf("trust-%d.zt.test", time.Now().UnixNano()%1_000_000), Standalone: true,
	})
	if err != nil {
		t.Fatalf("starting a standalone SPIRE server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping SPIRE: %v", err)
		}
	})
	shown, err := s.BundleShow(ctx, "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	td := spiffeid.RequireTrustDomainFromString(s.TrustDomain)
	now := time.Now()
	impostor := bundletest.BundleJSON(t, td, bundletest.NewCA(t, td, now.Add(-time.Hour), now.Add(24*time.Hour)))
	expired := bundletest.BundleJSON(t, td, bundletest.NewCA(t, td, now.Add(-48*time.Hour), now.Add(-24*time.Hour)))

	config := func(id, bootstrap string) string {
		return fmt.Sprintf(`
data "zerotrust_trust_bundle" "peer" {
  trust_domain = %q
  timeout      = "2s"
  endpoint = {
    url                = %q
    endpoint_spiffe_id = %q
    bootstrap_bundle   = %q
  }
}

output "bundle" {
  value = data.zerotrust_trust_bundle.peer.spiffe_bundle
}
`, s.TrustDomain, s.BundleEndpointURL, id, bootstrap)
	}
	cases := []struct {
		name, id, bootstrap, want string
	}{
		{"bootstrap CA did not sign the server", s.EndpointSPIFFEID, impostor, `(?s)Trust Bundle Not Available.*(x509|certificate|unknown authority)`},
		{"wrong endpoint SPIFFE ID", "spiffe://" + s.TrustDomain + "/not/the/server", string(shown), `(?s)Trust Bundle Not Available.*unexpected ID`},
		{"bootstrap CA expired", s.EndpointSPIFFEID, expired, `(?s)(Unusable Bootstrap Bundle|Trust Bundle Not Available).*(?i:expired|not valid)`},
	}
	d := newTFDir(t, "trust")
	for _, tc := range cases {
		d.write(config(tc.id, tc.bootstrap))
		code, out := d.run(nil, "apply", "-auto-approve", "-input=false")
		if code == 0 {
			t.Errorf("%s: apply succeeded:\n%s", tc.name, tail(out, 30))
			continue
		}
		if m := regexp.MustCompile(`Error: .*`).FindString(out); m != "" {
			t.Logf("%s: refused: %s", tc.name, m)
		}
		if !regexp.MustCompile(tc.want).MatchString(out) {
			t.Errorf("%s: the error does not match %s:\n%s", tc.name, tc.want, tail(out, 30))
		}
		if st := stateFile(t, d); strings.Contains(st, "zerotrust_trust_bundle") || strings.Contains(st, `"bundle"`) {
			t.Errorf("%s: the state holds a trust bundle after a refused fetch:\n%s", tc.name, st)
		}
	}

	// The control: the server's own bundle is accepted and stored.
	d.write(config(s.EndpointSPIFFEID, string(shown)))
	d.mustApply(nil)
	var st struct {
		Outputs map[string]struct {
			Value string `json:"value"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(stateFile(t, d)), &st); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Outputs["bundle"].Value, `"x509_authorities"`) && !strings.Contains(st.Outputs["bundle"].Value, `"keys"`) {
		t.Errorf("the control fetch stored no bundle: %q", st.Outputs["bundle"].Value)
	}
	if !t.Failed() {
		trustRefusals.Store(int64(len(cases)))
	}
}

func stateFile(t *testing.T, d *tfDir) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(d.dir, "terraform.tfstate"))
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
