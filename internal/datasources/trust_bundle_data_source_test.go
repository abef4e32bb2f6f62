package datasources_test

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

// tbShown is what `spire-server bundle show -format spiffe` says about s, read
// directly from its admin socket: the reference the data source must match.
type tbShown struct {
	json       string // as printed
	normalized string
	// withRefreshHint is the normalised bundle as the bundle endpoint serves
	// it: the same authorities, plus the endpoint's refresh hint (300 s).
	withRefreshHint string
	pem             string
	fingerprints    []string
}

const tbEndpointRefreshHint = 300

func tbShow(t *testing.T, s *harness.Spire) tbShown {
	t.Helper()
	out, err := s.BundleShow(context.Background(), "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	td := spiffeid.RequireTrustDomainFromString(s.TrustDomain)
	b, err := trustbundle.Parse(td, out)
	if err != nil {
		t.Fatal(err)
	}
	normalized, err := trustbundle.Normalize(b)
	if err != nil {
		t.Fatal(err)
	}
	b.SetRefreshHint(tbEndpointRefreshHint * time.Second)
	withHint, err := trustbundle.Normalize(b)
	if err != nil {
		t.Fatal(err)
	}
	return tbShown{json: string(out), normalized: normalized, withRefreshHint: withHint,
		pem: trustbundle.X509AuthoritiesPEM(b), fingerprints: trustbundle.FingerprintsSHA256(b)}
}

// tbStandalone starts a SPIRE server of its own for one test (only its bundle
// endpoint), so the test may stop and restart it.
func tbStandalone(t *testing.T, prefix string, web bool) *harness.Spire {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := harness.StartSpire(ctx, nil, harness.SpireOptions{
		TrustDomain: acctest.UniqueName(prefix) + ".zt.test", Standalone: true, WebProfile: web,
	})
	if err != nil {
		t.Fatalf("starting a standalone SPIRE server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping SPIRE %s: %v", s.TrustDomain, err)
		}
	})
	return s
}

// tbBundleJSON is a SPIFFE bundle for td with one fresh test CA.
func tbBundleJSON(t *testing.T, td string, now time.Time) string {
	t.Helper()
	id := spiffeid.RequireTrustDomainFromString(td)
	return bundletest.BundleJSON(t, id, bundletest.NewCA(t, id, now.Add(-time.Hour), now.Add(24*time.Hour)))
}

// tbCheck runs a Go check as a state check.
type tbCheck func() error

func (c tbCheck) CheckState(_ context.Context, _ statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = c()
}

func tbStrings(values []string) knownvalue.Check {
	checks := make([]knownvalue.Check, len(values))
	for i, v := range values {
		checks[i] = knownvalue.StringExact(v)
	}
	return knownvalue.ListExact(checks)
}

// TestAccTrustBundleDataSource_sources reads east's real SPIRE server through
// every source. Each gives the authorities `bundle show` prints; pod exec and
// a JSON ConfigMap key give the identical normalised bundle, the endpoint the
// same plus its refresh hint, a PEM key only the X.509 authorities. A second
// plan is empty: reading again changes nothing.
func TestAccTrustBundleDataSource_sources(t *testing.T) {
	east := acctest.Spire(t, acctest.East)
	shown := tbShow(t, east)

	// An installation that publishes the SPIFFE JSON in its ConfigMap, with
	// the PEM key a notifier left behind: the two agree, so the JSON (which
	// also carries the JWT authorities) is read.
	jsonCM := acctest.UniqueName("bundle-json")
	cs, err := kubernetes.NewForConfig(east.Cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: jsonCM, Namespace: east.Namespace},
		Data:       map[string]string{"bundle.spiffe": shown.json, "bundle.crt": shown.pem},
	}
	// One whose two keys disagree: a PEM key of another CA left behind.
	mixedCM := acctest.UniqueName("bundle-mixed")
	other := bundletest.NewCA(t, spiffeid.RequireTrustDomainFromString(east.TrustDomain), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	mixed := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: mixedCM, Namespace: east.Namespace},
		Data:       map[string]string{"bundle.spiffe": shown.json, "bundle.crt": string(bundletest.PEM(other))},
	}
	for _, c := range []*corev1.ConfigMap{cm, mixed} {
		if _, err := cs.CoreV1().ConfigMaps(east.Namespace).Create(context.Background(), c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cs.CoreV1().ConfigMaps(east.Namespace).Delete(context.Background(), c.Name, metav1.DeleteOptions{})
		})
	}

	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
locals {
  trust_domain = %[1]q
}

data "zerotrust_trust_bundle" "exec" {
  cluster      = "east"
  trust_domain = local.trust_domain
  spire_server = {}
}

data "zerotrust_trust_bundle" "pem" {
  cluster      = "east"
  trust_domain = local.trust_domain
  config_map   = {}
}

data "zerotrust_trust_bundle" "json" {
  cluster      = "east"
  trust_domain = local.trust_domain
  config_map   = { name = %[2]q }
}

data "zerotrust_trust_bundle" "endpoint" {
  trust_domain = local.trust_domain
  endpoint = {
    url                = %[3]q
    endpoint_spiffe_id = provider::zerotrust::spiffe_id(local.trust_domain, "spire", "server")
    bootstrap_bundle   = data.zerotrust_trust_bundle.exec.spiffe_bundle
  }
}

resource "terraform_data" "bundles" {
  input = [for b in [
    data.zerotrust_trust_bundle.exec,
    data.zerotrust_trust_bundle.pem,
    data.zerotrust_trust_bundle.json,
    data.zerotrust_trust_bundle.endpoint,
  ] : b.spiffe_bundle]
}
`, east.TrustDomain, jsonCM, east.BundleEndpointURL)

	const (
		exec     = "data.zerotrust_trust_bundle.exec"
		pem      = "data.zerotrust_trust_bundle.pem"
		json     = "data.zerotrust_trust_bundle.json"
		endpoint = "data.zerotrust_trust_bundle.endpoint"
	)
	same := func(a, b, attr string) statecheck.StateCheck {
		return statecheck.CompareValuePairs(a, tfjsonpath.New(attr), b, tfjsonpath.New(attr), compare.ValuesSame())
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(exec, tfjsonpath.New("spiffe_bundle"), knownvalue.StringExact(shown.normalized)),
					statecheck.ExpectKnownValue(json, tfjsonpath.New("spiffe_bundle"), knownvalue.StringExact(shown.normalized)),
					statecheck.ExpectKnownValue(endpoint, tfjsonpath.New("spiffe_bundle"), knownvalue.StringExact(shown.withRefreshHint)),
					statecheck.ExpectKnownValue(endpoint, tfjsonpath.New("refresh_hint"), knownvalue.Int64Exact(tbEndpointRefreshHint)),
					statecheck.ExpectKnownValue(exec, tfjsonpath.New("refresh_hint"), knownvalue.Null()),
					statecheck.ExpectKnownValue(exec, tfjsonpath.New("x509_authorities_pem"), knownvalue.StringExact(shown.pem)),
					statecheck.ExpectKnownValue(exec, tfjsonpath.New("x509_fingerprints_sha256"), tbStrings(shown.fingerprints)),
					statecheck.ExpectKnownValue(exec, tfjsonpath.New("jwt_authorities"), knownvalue.MapSizeExact(1)),
					statecheck.ExpectKnownValue(exec, tfjsonpath.New("expires_at"),
						knownvalue.StringRegexp(regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`))),
					same(exec, json, "sequence_number"),
					same(exec, endpoint, "sequence_number"),
					same(exec, endpoint, "jwt_authorities"),
					same(exec, endpoint, "expires_at"),
					// The PEM key has the X.509 authorities and nothing else.
					same(exec, pem, "x509_authorities_pem"),
					same(exec, pem, "x509_fingerprints_sha256"),
					same(exec, pem, "expires_at"),
					statecheck.ExpectKnownValue(pem, tfjsonpath.New("jwt_authorities"), knownvalue.MapSizeExact(0)),
					statecheck.ExpectKnownValue(pem, tfjsonpath.New("sequence_number"), knownvalue.Null()),
				},
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// Read everything again: byte-identical outputs, so no change.
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// Two keys that disagree: which one SPIRE keeps cannot be
				// told, and the error names the ConfigMap, its keys and
				// which plugin writes which.
				Config: acctest.ProviderConfig(t) + fmt.Sprintf(`
data "zerotrust_trust_bundle" "mixed" {
  cluster      = "east"
  trust_domain = %q
  config_map   = { name = %q }
}
`, east.TrustDomain, mixedCM),
				ExpectError: regexp.MustCompile(`(?s)Cannot Read the Trust Bundle.*` + mixedCM + `.*bundle\.spiffe.*bundle\.crt.*different\s+X\.509.*` +
					`BundlePublisher\s+"k8s_configmap".*Notifier\s+"k8sbundle"`),
			},
		},
	})
}

// TestAccTrustBundleDataSource_webProfile reads an https_web bundle endpoint
// whose certificate comes from a test CA given in ca_certificates.
func TestAccTrustBundleDataSource_webProfile(t *testing.T) {
	web := tbStandalone(t, "web", true)
	shown := tbShow(t, web)
	config := func(caLine string) string {
		return acctest.ProviderConfig(t) + fmt.Sprintf(`
data "zerotrust_trust_bundle" "web" {
  trust_domain = %q
  timeout      = "3s"
  endpoint = {
    url     = %q
    profile = "https_web"
%s
  }
}
`, web.TrustDomain, web.BundleEndpointURL, caLine)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(fmt.Sprintf("    ca_certificates = <<-EOT\n%s\nEOT", strings.TrimSpace(string(web.WebCACertPEM)))),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.zerotrust_trust_bundle.web", tfjsonpath.New("x509_authorities_pem"),
						knownvalue.StringExact(shown.pem)),
					statecheck.ExpectKnownValue("data.zerotrust_trust_bundle.web", tfjsonpath.New("spiffe_bundle"),
						knownvalue.StringExact(shown.withRefreshHint)),
				},
			},
			{
				// The system roots do not know the test CA.
				Config:      config(""),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Trust Bundle Not Available.*https_web.*certificate`),
			},
		},
	})
}

// TestAccTrustBundleDataSource_endpointFailures: a wrong endpoint SPIFFE ID
// and a stopped endpoint fail after the timeout naming the source and the
// last error; a bundle that belongs to another trust domain is refused.
func TestAccTrustBundleDataSource_endpointFailures(t *testing.T) {
	east := acctest.Spire(t, acctest.East)
	shown := tbShow(t, east)
	down := tbStandalone(t, "down", false)
	downShown := tbShow(t, down)
	if err := down.StopServer(); err != nil {
		t.Fatal(err)
	}
	endpoint := func(td, url, id, bootstrap string) string {
		return acctest.ProviderConfig(t) + fmt.Sprintf(`
data "zerotrust_trust_bundle" "this" {
  trust_domain = %q
  timeout      = "2s"
  endpoint = {
    url                = %q
    endpoint_spiffe_id = %q
    bootstrap_bundle   = %q
  }
}
`, td, url, id, bootstrap)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:   endpoint(east.TrustDomain, east.BundleEndpointURL, "spiffe://"+east.TrustDomain+"/not/the/server", shown.json),
				PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Trust Bundle Not Available.*` + regexp.QuoteMeta(east.BundleEndpointURL) +
					`.*not/the/server.*Last error:.*unexpected ID`),
			},
			{
				// The stopped server's port is free again: usually nothing
				// answers (connection refused), but a server another test
				// starts may take it (seen: an HTTP server, "server gave HTTP
				// response to HTTPS client"). Either way no bundle comes back.
				Config:   endpoint(down.TrustDomain, down.BundleEndpointURL, down.EndpointSPIFFEID, downShown.json),
				PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Trust Bundle Not Available.*within 2s.*Last error:.*` +
					`(connection refused|HTTP response to HTTPS client|tls: |EOF|connection reset)`),
			},
			{
				// East's bundle ConfigMap read as west's bundle.
				Config: acctest.ProviderConfig(t) + `
data "zerotrust_trust_bundle" "this" {
  cluster      = "east"
  trust_domain = "west.zt.test"
  config_map   = {}
}
`,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Unusable Trust Bundle.*nothing\s+was\s+stored.*belongs\s+to\s+trust\s+domain\s+"east.zt.test",\s+not\s+"west.zt.test"`),
			},
			{
				Config: acctest.ProviderConfig(t) + `
data "zerotrust_trust_bundle" "this" {
  cluster      = "east"
  trust_domain = "east.zt.test"
  timeout      = "1s"
  config_map   = { name = "no-such-bundle" }
}
`,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Trust Bundle Not Available.*ConfigMap\s+zero-trust-workload-identity-manager/no-such-bundle.*not\s+found`),
			},
		},
	})
}

// TestAccTrustBundleDataSource_endpointComesBack: the endpoint is down when
// the read starts and comes back while the data source retries. While the
// server is stopped the test holds its port and waits for the first attempt
// (which it refuses), so the restart provably happens mid-wait.
func TestAccTrustBundleDataSource_endpointComesBack(t *testing.T) {
	s := tbStandalone(t, "back", false)
	shown := tbShow(t, s)
	var (
		wg        sync.WaitGroup
		restarted error
	)
	t.Cleanup(wg.Wait)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					if err := s.StopServer(); err != nil {
						t.Fatal(err)
					}
					ln, err := net.Listen("tcp", strings.TrimPrefix(s.BundleEndpointURL, "https://"))
					if err != nil {
						t.Fatalf("holding the stopped endpoint's port: %v", err)
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						restarted = tbRestartAfterFirstAttempt(s, ln)
					}()
				},
				Config: acctest.ProviderConfig(t) + fmt.Sprintf(`
data "zerotrust_trust_bundle" "this" {
  trust_domain = %q
  timeout      = "90s"
  endpoint = {
    url                = %q
    endpoint_spiffe_id = %q
    bootstrap_bundle   = %q
  }
}
`, s.TrustDomain, s.BundleEndpointURL, s.EndpointSPIFFEID, shown.json),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.zerotrust_trust_bundle.this", tfjsonpath.New("spiffe_bundle"),
						knownvalue.StringExact(shown.withRefreshHint)),
					tbCheck(func() error {
						wg.Wait()
						return restarted
					}),
				},
			},
		},
	})
}

// tbRestartAfterFirstAttempt refuses the first connection to the stopped
// endpoint's port, waits a little more, then starts the server again.
func tbRestartAfterFirstAttempt(s *harness.Spire, ln net.Listener) error {
	accepted := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			conn.Close()
		}
		accepted <- err
	}()
	select {
	case err := <-accepted:
		ln.Close()
		if err != nil {
			return fmt.Errorf("waiting for a fetch attempt: %w", err)
		}
	case <-time.After(60 * time.Second):
		ln.Close()
		return errors.New("the data source made no fetch attempt within 60s")
	}
	time.Sleep(2 * time.Second)
	if err := s.StartServer(context.Background()); err != nil {
		return fmt.Errorf("restarting SPIRE: %w", err)
	}
	return nil
}

// TestAccTrustBundleDataSource_planErrors: what can be checked offline fails
// the plan, naming the attribute.
func TestAccTrustBundleDataSource_planErrors(t *testing.T) {
	const td = "west.zt.test"
	now := time.Now()
	westCA := tbBundleJSON(t, td, now)
	eastBundle := tbBundleJSON(t, "east.zt.test", now)
	cases := []struct {
		name, body string
		want       string
	}{
		{"two sources", `config_map = {}
  spire_server = {}`, `(?s)Invalid Attribute Combination.*endpoint.*config_map.*spire_server`},
		{"no source", ``, `(?s)Missing Attribute Configuration.*endpoint,published,config_map,spire_server`},
		{"https_spiffe without bootstrap bundle", `endpoint = {
    url                = "https://spire.west.zt.test:8443"
    endpoint_spiffe_id = "spiffe://west.zt.test/spire/server"
  }`, `(?s)Missing Bootstrap Bundle.*endpoint.bootstrap_bundle`},
		{"https_spiffe without endpoint SPIFFE ID", fmt.Sprintf(`endpoint = {
    url              = "https://spire.west.zt.test:8443"
    bootstrap_bundle = %q
  }`, westCA), `(?s)Missing Endpoint SPIFFE ID.*endpoint.endpoint_spiffe_id`},
		{"bad URL", fmt.Sprintf(`endpoint = {
    url                = "http://spire.west.zt.test:8443"
    endpoint_spiffe_id = "spiffe://west.zt.test/spire/server"
    bootstrap_bundle   = %q
  }`, westCA), `(?s)Invalid HTTPS URL.*endpoint.url.*scheme is "http"`},
		{"bad endpoint SPIFFE ID", fmt.Sprintf(`endpoint = {
    url                = "https://spire.west.zt.test:8443"
    endpoint_spiffe_id = "west.zt.test/spire/server"
    bootstrap_bundle   = %q
  }`, westCA), `(?s)endpoint.endpoint_spiffe_id`},
		{"bootstrap bundle of another trust domain", fmt.Sprintf(`endpoint = {
    url                = "https://spire.west.zt.test:8443"
    endpoint_spiffe_id = "spiffe://west.zt.test/spire/server"
    bootstrap_bundle   = %q
  }`, eastBundle), `(?s)Unusable Bootstrap Bundle.*endpoint.bootstrap_bundle.*"east.zt.test"`},
		{"https_web with SPIFFE settings", fmt.Sprintf(`endpoint = {
    url                = "https://bundle.west.zt.test"
    profile            = "https_web"
    endpoint_spiffe_id = "spiffe://west.zt.test/spire/server"
    bootstrap_bundle   = %q
  }`, westCA), `(?s)Endpoint SPIFFE ID Not Applicable.*Bootstrap Bundle Not Applicable`},
		{"https_spiffe with CA certificates", fmt.Sprintf(`endpoint = {
    url                = "https://spire.west.zt.test:8443"
    endpoint_spiffe_id = "spiffe://west.zt.test/spire/server"
    bootstrap_bundle   = %q
    ca_certificates    = "-----BEGIN CERTIFICATE-----"
  }`, westCA), `(?s)endpoint.ca_certificates`},
		{"unknown profile", `endpoint = {
    url     = "https://bundle.west.zt.test"
    profile = "https"
  }`, `(?s)endpoint.profile.*https_spiffe.*https_web`},
		{"bad timeout", `timeout = "2 minutes"
  config_map = {}`, `(?s)Invalid Duration.*timeout`},
		{"bad ConfigMap key", `config_map = { key = "a/b" }`, `(?s)Invalid ConfigMap Key.*config_map.key`},
		{"bad trust domain", `config_map = {}`, `(?s)Invalid Trust Domain.*trust_domain`},
		{"on_unreachable with an endpoint", `on_unreachable = "warn"
  endpoint = {
    url     = "https://bundle.west.zt.test"
    profile = "https_web"
  }`, `(?s)Invalid Attribute Combination.*on_unreachable.*endpoint`},
		{"unknown on_unreachable", `on_unreachable = "skip"
  spire_server = {}`, `(?s)on_unreachable.*"error".*"warn"`},
	}
	var steps []resource.TestStep
	for _, tc := range cases {
		trustDomain := td
		if tc.name == "bad trust domain" {
			trustDomain = "spiffe://west.zt.test"
		}
		steps = append(steps, resource.TestStep{
			Config: acctest.ProviderConfig(t) + fmt.Sprintf(`
data "zerotrust_trust_bundle" "this" {
  trust_domain = %q
  %s
}
`, trustDomain, tc.body),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(tc.want),
		})
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps:                    steps,
	})
}

// TestAccTrustBundleDataSource_extraCluster reads the bundle of a SPIRE
// server on a cluster started beyond the shared lab, through a provider
// whose clusters map holds only that cluster.
func TestAccTrustBundleDataSource_extraCluster(t *testing.T) {
	north := acctest.OwnCluster(t, "north")
	spire := acctest.Spire(t, "north")
	shown := tbShow(t, spire)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: acctest.ProviderConfigFor(t, north) + `
data "zerotrust_trust_bundle" "north" {
  cluster      = "north"
  trust_domain = "north.zt.test"
  spire_server = {}
}
`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.zerotrust_trust_bundle.north", tfjsonpath.New("spiffe_bundle"),
						knownvalue.StringExact(shown.normalized)),
				},
			},
		},
	})
}

// TestAccTrustBundleDataSource_unreachableCluster reads from a cluster whose
// address nobody listens on: with on_unreachable = "warn" the read succeeds
// with every output null (a zerotrust_spire_bundle given it keeps its last
// bundle; the warning is asserted through the CLI in examplestest); unset, it
// follows the cluster's on_unreachable, here "error": it fails naming the
// cluster.
func TestAccTrustBundleDataSource_unreachableCluster(t *testing.T) {
	host := "https://" + acctest.ClosedAddress(t)
	config := func(onUnreachable string) string {
		return strings.Replace(acctest.ProviderConfig(t), "  clusters = {\n",
			fmt.Sprintf("  clusters = {\n    dead = { host = %q, token = \"x\", insecure = true, on_unreachable = \"error\" }\n", host), 1) + fmt.Sprintf(`
data "zerotrust_trust_bundle" "dead" {
  cluster        = "dead"
  trust_domain   = "dead.zt.test"
  timeout        = "5s"
  spire_server   = {}
  on_unreachable = %s
}
`, onUnreachable)
	}
	null := func(attr string) statecheck.StateCheck {
		return statecheck.ExpectKnownValue("data.zerotrust_trust_bundle.dead", tfjsonpath.New(attr), knownvalue.Null())
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(`"warn"`),
				ConfigStateChecks: []statecheck.StateCheck{
					null("spiffe_bundle"), null("x509_authorities_pem"), null("jwt_authorities"),
					null("x509_fingerprints_sha256"), null("expires_at"),
				},
			},
			{Config: config("null"), ExpectError: regexp.MustCompile(`(?s)dead.zt.test`)},
		},
	})
}

// TestAccTrustBundleDataSource_leftOut: a bundle ConfigMap may hold an
// authority its SPIRE server does not, for two reasons the warnings name
// apart. A real SPIRE server of the test's own rotates its X.509 authority
// and revokes the previous one; a ConfigMap written before the revoke
// (SPIRE does not rewrite it on revoke) holds that authority: "Revoked
// Authorities Left Out". A ConfigMap holding SPIRE's bundle plus a CA
// certificate someone appended holds one SPIRE never held: "Authorities
// SPIRE Never Held Left Out", saying the ConfigMap may have been altered.
// Both are left out of the outputs.
func TestAccTrustBundleDataSource_leftOut(t *testing.T) {
	t.Parallel()
	c := acctest.OwnCluster(t, "tbleft")
	s := acctest.Spire(t, "tbleft")
	ctx := context.Background()
	oldPEM := tbPEM(t, s)
	prepared, err := s.PrepareX509Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ActivateX509Authority(ctx, prepared); err != nil {
		t.Fatal(err)
	}
	beforeRevoke := tbPEM(t, s) // the old authority and the active one
	old := tbOnlyIn(t, s.TrustDomain, oldPEM, prepared)
	if err := s.TaintX509Authority(ctx, old.id); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeX509Authority(ctx, old.id); err != nil {
		t.Fatal(err)
	}
	current := tbPEM(t, s)
	appended := acctest.TestCertificatePEM(t, true)
	foreign, err := trustbundle.ParsePEM(spiffeid.RequireTrustDomainFromString(s.TrustDomain), []byte(appended))
	if err != nil {
		t.Fatal(err)
	}
	foreignName := trustbundle.Describe(foreign.X509Authorities())[0]
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	for name, pem := range map[string]string{"tb-revoked": beforeRevoke, "tb-altered": current + appended} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace}, Data: map[string]string{"bundle.crt": pem}}
		if _, err := cs.CoreV1().ConfigMaps(s.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	dir, reattach := t.TempDir(), acctest.ServeProvider(t)
	read := func(cm string) (warnings string, fingerprints []string) {
		t.Helper()
		config := acctest.RequiredProviders + acctest.ProviderConfigFor(t, c) + fmt.Sprintf(`
data "zerotrust_trust_bundle" "this" {
  trust_domain = %q
  config_map   = { name = %q }
}

output "fingerprints" {
  value = data.zerotrust_trust_bundle.this.x509_fingerprints_sha256
}
`, s.TrustDomain, cm)
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		out := strings.Join(strings.Fields(acctest.MustTerraform(t, "terraform", dir, reattach, "apply", "-auto-approve")), " ")
		t.Logf("apply reading %s:\n%s", cm, out)
		if err := json.Unmarshal([]byte(acctest.MustTerraform(t, "terraform", dir, reattach, "output", "-json", "fingerprints")), &fingerprints); err != nil {
			t.Fatal(err)
		}
		return out, fingerprints
	}
	contains := func(what, out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: want %q in:\n%s", what, w, out)
			}
		}
	}

	out, fps := read("tb-revoked")
	contains("the ConfigMap written before the revoke", out, "Warning: Revoked Authorities Left Out",
		"its SPIRE server held and revoked since it last wrote the ConfigMap", old.name)
	if strings.Contains(out, "Never Held") || strings.Contains(out, "may have been altered") {
		t.Errorf("the revoked authority is reported as one SPIRE never held:\n%s", out)
	}
	if slices.Contains(fps, old.fingerprint) || len(fps) != 1 {
		t.Errorf("fingerprints of tb-revoked: %v, want only the active authority's, not the revoked %s", fps, old.fingerprint)
	}

	out, fps = read("tb-altered")
	contains("the ConfigMap with an appended CA certificate", out, "Warning: Authorities SPIRE Never Held Left Out",
		"its SPIRE server never held: "+foreignName, "the ConfigMap may have been altered")
	if strings.Contains(out, "Revoked Authorities Left Out") || strings.Contains(out, "revoked since") {
		t.Errorf("the appended authority is reported as revoked:\n%s", out)
	}
	if want := trustbundle.FingerprintsSHA256(foreign)[0]; slices.Contains(fps, want) || len(fps) != 1 {
		t.Errorf("fingerprints of tb-altered: %v, want only the active authority's, not the appended %s", fps, want)
	}
}

// tbAuthority is an X.509 authority as the test names it.
type tbAuthority struct{ id, name, fingerprint string }

// tbPEM is s's bundle as PEM, asked of its admin socket.
func tbPEM(t *testing.T, s *harness.Spire) string {
	t.Helper()
	out, err := s.BundleShow(context.Background(), "pem")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// tbOnlyIn is the one authority of pem whose ID is not except.
func tbOnlyIn(t *testing.T, td, pem, except string) tbAuthority {
	t.Helper()
	b, err := trustbundle.ParsePEM(spiffeid.RequireTrustDomainFromString(td), []byte(pem))
	if err != nil {
		t.Fatal(err)
	}
	var found []tbAuthority
	for _, cert := range b.X509Authorities() {
		if id := hex.EncodeToString(cert.SubjectKeyId); !strings.EqualFold(id, except) {
			found = append(found, tbAuthority{id: id, name: trustbundle.Describe([]*x509.Certificate{cert})[0],
				fingerprint: fmt.Sprintf("%x", sha256.Sum256(cert.Raw))})
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one authority other than %s in the bundle, found %v", except, found)
	}
	return found[0]
}
