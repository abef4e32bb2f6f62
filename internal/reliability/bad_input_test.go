package reliability

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

// badInput is one invalid configuration: a single resource or data source
// block that `terraform plan` must refuse, naming path.
type badInput struct {
	name   string
	config string
	path   string // attribute path the diagnostic must name (literal)
	want   string // regexp that must appear in the diagnostic
}

// ownTrustDomain is east's trust domain (its ZeroTrustWorkloadIdentityManager).
const ownTrustDomain = "east.reliability.test"

func badInputCorpus(t *testing.T) []badInput {
	now := time.Now()
	peer := spiffeid.RequireTrustDomainFromString("peer.test")
	other := spiffeid.RequireTrustDomainFromString("other.test")
	expiredBundle := bundletest.BundleJSON(t, peer, bundletest.NewCA(t, peer, now.Add(-48*time.Hour), now.Add(-24*time.Hour)))
	foreignBundle := bundletest.BundleJSON(t, peer, bundletest.NewCA(t, other, now.Add(-time.Hour), now.Add(time.Hour)))
	otherBundle := bundletest.BundleJSON(t, other, bundletest.NewCA(t, other, now.Add(-time.Hour), now.Add(time.Hour)))
	peerBundle := bundletest.BundleJSON(t, peer, bundletest.NewCA(t, peer, now.Add(-time.Hour), now.Add(time.Hour)))
	otherPEM := string(bundletest.PEM(bundletest.NewCA(t, other, now.Add(-time.Hour), now.Add(time.Hour))))
	long := func(n int) string { return strings.Repeat("a", n) }

	ftd := func(overrides map[string]string) string {
		attrs := map[string]string{
			"cluster":                 `"west"`,
			"trust_domain":            `"peer.test"`,
			"bundle_endpoint_url":     `"https://spire.peer.test:8443"`,
			"bundle_endpoint_profile": `{ type = "https_spiffe", endpoint_spiffe_id = "spiffe://peer.test/spire/server" }`,
		}
		return block("resource", "zerotrust_federated_trust_domain", attrs, overrides)
	}
	federation := func(body string) string {
		return "resource \"zerotrust_spire_federation\" \"this\" {\n  cluster = \"east\"\n" + body + "}\n"
	}
	peerEntry := func(td, body string) string {
		return fmt.Sprintf("  federates_with = {\n    %q = %s\n  }\n", td, body)
	}
	spiffePeer := func(url, id string) string {
		return fmt.Sprintf(`{ bundle_endpoint_url = %q, bundle_endpoint_profile = "https_spiffe", endpoint_spiffe_id = %q }`, url, id)
	}
	var peers strings.Builder
	peers.WriteString("  federates_with = {\n")
	for i := range 51 {
		fmt.Fprintf(&peers, "    \"peer%d.test\" = { bundle_endpoint_url = \"https://bundles.peer%d.test\", bundle_endpoint_profile = \"https_web\" }\n", i, i)
	}
	peers.WriteString("  }\n")
	web := func(inner string) string {
		return fmt.Sprintf("  bundle_endpoint = {\n    profile = \"https_web\"\n    https_web = %s\n  }\n", inner)
	}
	csr := func(overrides map[string]string) string {
		attrs := map[string]string{
			"cluster":      `"east"`,
			"namespace":    `"cert-manager"`,
			"cert_manager": `{ issuer_ref = { name = "istio-ca", kind = "Issuer" } }`,
			"istiod_tls":   `{ trust_domain = "cluster.local" }`,
			"istio":        `{ namespace = "istio-system" }`,
		}
		return block("resource", "zerotrust_istio_csr", attrs, overrides)
	}
	mesh := func(overrides map[string]string) string {
		attrs := map[string]string{"cluster": `"west"`, "mesh": `{ kind = "istio_sail" }`, "trust_domain": `"apps.test"`}
		return block("resource", "zerotrust_mesh_trust_domain", attrs, overrides)
	}
	kuma := func(overrides map[string]string) string {
		attrs := map[string]string{"cluster": `"west"`, "mesh": `{ kind = "kuma" }`, "trust_domain": `"peer.test"`}
		return block("resource", "zerotrust_mesh_trust_domain", attrs, overrides)
	}
	dv := func(domain string) string {
		return block("resource", "zerotrust_domain_verification", map[string]string{"domain": domain}, nil)
	}
	dvData := func(overrides map[string]string) string {
		return block("data", "zerotrust_domain_verification", map[string]string{"domain": `"apps.example.com"`}, overrides)
	}
	bundleData := func(body string) string {
		return "data \"zerotrust_trust_bundle\" \"this\" {\n  trust_domain = \"peer.test\"\n" + body + "\n}\n"
	}
	endpoint := func(url, id, bootstrap string) string {
		return fmt.Sprintf("  endpoint = {\n    url = %q\n    endpoint_spiffe_id = %q\n    bootstrap_bundle = %q\n  }", url, id, bootstrap)
	}
	q := func(s string) string { return fmt.Sprintf("%q", s) }

	return []badInput{
		// zerotrust_federated_trust_domain
		{"ftd trust domain uppercase", ftd(map[string]string{"trust_domain": `"Peer.test"`}), "trust_domain", `Invalid Trust Domain`},
		{"ftd trust domain with scheme", ftd(map[string]string{"trust_domain": `"spiffe://peer.test"`}), "trust_domain", `Invalid Trust Domain`},
		{"ftd trust domain too long", ftd(map[string]string{"trust_domain": q(long(256))}), "trust_domain", `Invalid Trust Domain`},
		{"ftd trust domain with space", ftd(map[string]string{"trust_domain": `"peer test"`}), "trust_domain", `Invalid Trust Domain`},
		{"ftd http url", ftd(map[string]string{"bundle_endpoint_url": `"http://spire.peer.test"`}), "bundle_endpoint_url", `https`},
		{"ftd url with userinfo", ftd(map[string]string{"bundle_endpoint_url": `"https://user:pw@spire.peer.test"`}), "bundle_endpoint_url", `user`},
		{"ftd url without host", ftd(map[string]string{"bundle_endpoint_url": `"https:///bundle"`}), "bundle_endpoint_url", `host`},
		{"ftd https_spiffe without id", ftd(map[string]string{"bundle_endpoint_profile": `{ type = "https_spiffe" }`}),
			"bundle_endpoint_profile", `Missing Endpoint SPIFFE ID`},
		{"ftd https_web with id", ftd(map[string]string{"bundle_endpoint_profile": `{ type = "https_web", endpoint_spiffe_id = "spiffe://peer.test/spire/server" }`}),
			"bundle_endpoint_profile", `Endpoint SPIFFE ID Not Applicable`},
		{"ftd endpoint id not SPIFFE", ftd(map[string]string{"bundle_endpoint_profile": `{ type = "https_spiffe", endpoint_spiffe_id = "https://peer.test/spire/server" }`}),
			"bundle_endpoint_profile", `SPIFFE ID`},
		{"ftd unknown profile", ftd(map[string]string{"bundle_endpoint_profile": `{ type = "mtls", endpoint_spiffe_id = "spiffe://peer.test/spire/server" }`}),
			"bundle_endpoint_profile", `https_spiffe`},
		{"ftd bundle not SPIFFE JSON", ftd(map[string]string{"trust_domain_bundle": `"not a bundle"`}), "trust_domain_bundle", `bundle`},
		{"ftd bundle of another trust domain", ftd(map[string]string{"trust_domain_bundle": q(foreignBundle)}), "trust_domain_bundle", `other\.test`},
		{"ftd bundle with only expired CAs", ftd(map[string]string{"trust_domain_bundle": q(expiredBundle)}), "trust_domain_bundle", `(?i)expired|not valid`},
		{"ftd object name", ftd(map[string]string{"name": `"Bad_Name"`}), "name", `(?i)name`},
		{"ftd unknown cluster key", ftd(map[string]string{"cluster": `"south"`}), "cluster", `Unknown Cluster`},

		// zerotrust_spire_federation
		{"federation 51 peers", federation(peers.String()), "federates_with", `Too Many Federated Trust Domains`},
		{"federation with itself", federation(peerEntry(ownTrustDomain, spiffePeer("https://spire."+ownTrustDomain, "spiffe://"+ownTrustDomain+"/spire/server"))),
			"federates_with", `Cannot Federate With Own Trust Domain`},
		{"federation https_web without config", federation(`  bundle_endpoint = { profile = "https_web" }` + "\n"), "https_web", `Missing https_web Configuration`},
		{"federation acme and serving_cert", federation(web(`{ serving_cert = {}, acme = { directory_url = "https://acme.example.test/dir", domain_name = "f.example.test", email = "a@example.test" } }`)),
			"https_web.serving_cert", `2 attributes specified when one \(and only one\) of`},
		{"federation refresh hint 59", federation(`  bundle_endpoint = { refresh_hint = 59 }` + "\n"), "refresh_hint", `between 60 and 3600`},
		{"federation refresh hint 30", federation(`  bundle_endpoint = { refresh_hint = 30 }` + "\n"), "refresh_hint", `between 60 and 3600`},
		{"federation peer key uppercase", federation(peerEntry("Peer.Test", spiffePeer("https://spire.peer.test", "spiffe://peer.test/spire/server"))),
			"federates_with", `Invalid Trust Domain`},
		{"federation peer url userinfo", federation(peerEntry("peer.test", spiffePeer("https://user:pw@spire.peer.test", "spiffe://peer.test/spire/server"))),
			"bundle_endpoint_url", `user credentials`},
		{"federation acme directory http", federation(web(`{ acme = { directory_url = "http://acme.example.test/dir", domain_name = "f.example.test", email = "a@example.test" } }`)),
			"directory_url", `Invalid HTTPS URL`},
		{"federation https_spiffe peer without id", federation(peerEntry("peer.test", `{ bundle_endpoint_url = "https://spire.peer.test", bundle_endpoint_profile = "https_spiffe" }`)),
			"endpoint_spiffe_id", `Missing Endpoint SPIFFE ID`},

		// zerotrust_istio_csr
		{"istio-csr ECDSA with an RSA size", csr(map[string]string{"istiod_tls": `{ trust_domain = "cluster.local", private_key_algorithm = "ECDSA", private_key_size = 2048 }`}),
			"istiod_tls.private_key_size", `privateKeySize must match`},
		{"istio-csr RSA with an ECDSA size", csr(map[string]string{"istiod_tls": `{ trust_domain = "cluster.local", private_key_size = 256 }`}),
			"istiod_tls.private_key_size", `RSA keys are 2048, 4096 or 8192 bits`},
		{"istio-csr issuer kind", csr(map[string]string{"cert_manager": `{ issuer_ref = { name = "istio-ca", kind = "Certificate" } }`}),
			"cert_manager.issuer_ref.kind", `"ClusterIssuer"`},
		{"istio-csr issuer group", csr(map[string]string{"cert_manager": `{ issuer_ref = { name = "istio-ca", kind = "Issuer", group = "cert-manager.example.com" } }`}),
			"cert_manager.issuer_ref.group", `cert-manager\.io`},
		{"istio-csr selector too long", csr(map[string]string{"istio_data_plane_namespace_selector": q("a=" + long(4095))}),
			"istio_data_plane_namespace_selector", `at most 4096`},
		{"istio-csr selector syntax", csr(map[string]string{"istio_data_plane_namespace_selector": `"env in (prod"`}),
			"istio_data_plane_namespace_selector", `Invalid Label Selector`},
		{"istio-csr trust domain uppercase", csr(map[string]string{"istiod_tls": `{ trust_domain = "Cluster.Local" }`}),
			"istiod_tls.trust_domain", `Invalid Trust Domain`},
		{"istio-csr port 0", csr(map[string]string{"server": `{ port = 0 }`}), "server.port", `between 1 and 65535`},

		// zerotrust_mesh_trust_domain
		{"mesh unknown kind", mesh(map[string]string{"mesh": `{ kind = "linkerd" }`}), "mesh.kind", `value must be one of`},
		{"mesh trust domain uppercase", mesh(map[string]string{"trust_domain": `"Apps.test"`}), "trust_domain", `Invalid Trust Domain`},
		{"mesh alias equal to trust domain", mesh(map[string]string{"trust_domain_aliases": `["apps.test"]`}), "trust_domain_aliases[0]", `Alias Equals Trust Domain`},
		{"mesh sail with namespace", mesh(map[string]string{"mesh": `{ kind = "istio_sail", namespace = "istio-system" }`}), "mesh.namespace", `Not Supported by This Mesh Kind`},
		{"mesh kuma CA of another trust domain", kuma(map[string]string{"ca_bundles": "[" + q(otherPEM) + "]"}), "ca_bundles[0]", `belongs to trust domain "other.test"`},
		{"mesh kuma without CA bundles", kuma(nil), "ca_bundles", `Missing CA Bundles`},

		// zerotrust_domain_verification
		{"domain uppercase", dv(`"Apps.Example.com"`), "domain", `lowercase`},
		{"domain wildcard", dv(`"*.apps.example.com"`), "domain", `wildcard`},
		{"domain trailing dot", dv(`"apps.example.com."`), "domain", `trailing dot`},
		{"domain underscore", dv(`"_verify.example.com"`), "domain", `underscore`},
		{"domain is a URL", dv(`"https://apps.example.com"`), "domain", `scheme`},
		{"domain label too long", dv(q(long(64) + ".example.com")), "domain", `at most 63`},

		// data sources
		{"dv data nameserver port", dvData(map[string]string{"nameservers": `["127.0.0.1:99999"]`}), "nameservers", `1 to 65535`},
		{"dv data timeout", dvData(map[string]string{"timeout": `"soon"`}), "timeout", `(?i)duration`},
		{"bundle endpoint http", bundleData(endpoint("http://spire.peer.test:8443", "spiffe://peer.test/spire/server", peerBundle)), "endpoint.url", `Invalid HTTPS URL`},
		{"bundle bootstrap of another trust domain", bundleData(endpoint("https://spire.peer.test:8443", "spiffe://peer.test/spire/server", otherBundle)),
			"endpoint.bootstrap_bundle", `Unusable Bootstrap Bundle`},
		{"bundle endpoint id not SPIFFE", bundleData(endpoint("https://spire.peer.test:8443", "peer.test/spire/server", peerBundle)), "endpoint.endpoint_spiffe_id", `(?i)SPIFFE ID`},
		{"bundle without source", bundleData(""), "endpoint,published,config_map,spire_server", `Missing Attribute Configuration`},
		{"bundle ConfigMap key", bundleData(`  config_map = { key = "a/b" }`), "config_map.key", `Invalid ConfigMap Key`},
		{"spire server unknown cluster key", "data \"zerotrust_spire_server\" \"this\" {\n  cluster = \"south\"\n}\n", "cluster", `Unknown Cluster`},
	}
}

// block renders one block from attribute => HCL value, overrides applied
// (an override of "" removes the attribute).
func block(kind, typ string, attrs, overrides map[string]string) string {
	merged := map[string]string{}
	for k, v := range attrs {
		merged[k] = v
	}
	for k, v := range overrides {
		merged[k] = v
	}
	keys := make([]string, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q \"this\" {\n", kind, typ)
	for _, k := range keys {
		if merged[k] != "" {
			fmt.Fprintf(&b, "  %s = %s\n", k, merged[k])
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// TestAccBadInputCorpus plans every invalid configuration of the corpus, each
// on its own, as a dedicated identity, and then reads the apiserver audit
// logs: that identity must have made zero write requests on any cluster.
func TestAccBadInputCorpus(t *testing.T) {
	setup := cluster(t, east)
	// East's own trust domain, for the self-federation case (read at plan).
	acctest.ApplyAs(t, setup, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject(ownTrustDomain, "east"))
	acctest.ApplyAs(t, setup, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(nil))

	who := map[string]identity{east: newIdentity(t, cluster(t, east), "bad-input"), west: newIdentity(t, cluster(t, west), "bad-input")}
	provider := providerBlock(who, east, west)
	corpus := badInputCorpus(t)
	if len(corpus) < 40 {
		t.Fatalf("the corpus has %d cases, want at least 40", len(corpus))
	}
	t.Run("plan", func(t *testing.T) {
		for _, tc := range corpus {
			t.Run(tc.name, func(t *testing.T) {
				// Terraform wraps long messages: any space may be a line break.
				want := strings.ReplaceAll(tc.want, " ", `\s+`)
				path := regexp.QuoteMeta(tc.path)
				resource.ParallelTest(t, resource.TestCase{
					ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
					Steps: []resource.TestStep{{
						Config:      provider + tc.config,
						PlanOnly:    true,
						ExpectError: regexp.MustCompile(`(?s)(` + want + `.*` + path + `|` + path + `.*` + want + `)`),
					}},
				})
				if !t.Failed() {
					badInputsCaught.Add(1)
				}
			})
		}
	})

	// The control: the same identity's reads are in the audit log (the
	// self-federation case reads east's installation at plan), so zero
	// writes is a measurement, not a filter that matches nothing.
	var writes int
	reads := 0
	for _, name := range []string{east, west} {
		c := countAudit(t, cluster(t, name), who[name].User)
		reads += c.Reads
		writes += c.Writes
		for _, l := range c.WriteLines {
			t.Errorf("cluster %s: the bad-input corpus wrote: %s", name, l)
		}
	}
	corpusWrites.Store(int64(writes))
	corpusRan.Store(true)
	if reads == 0 {
		t.Errorf("the audit log holds no request of %s at all: the audit check measures nothing", who[east].User)
	}
	t.Logf("bad-input corpus: %d cases refused at plan; audit: %d reads, %d writes by the provider's identity",
		badInputsCaught.Load(), reads, writes)
}
