package resources_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// peersHCL is a federates_with map of n valid https_web entries.
func peersHCL(n int) string {
	var b strings.Builder
	b.WriteString("  federates_with = {\n")
	for i := range n {
		fmt.Fprintf(&b, "    \"peer%d.test\" = { bundle_endpoint_url = \"https://bundles.peer%d.test\", bundle_endpoint_profile = \"https_web\" }\n", i, i)
	}
	b.WriteString("  }\n")
	return b.String()
}

// TestAccSpireFederation_invalidInputFailsAtPlan runs `terraform plan` only:
// each bad input must be refused before anything is sent to a cluster, with
// the attribute named.
func TestAccSpireFederation_invalidInputFailsAtPlan(t *testing.T) {
	web := func(inner string) string {
		return fmt.Sprintf("  bundle_endpoint = {\n    profile = \"https_web\"\n    https_web = %s\n  }\n", inner)
	}
	acme := func(directoryURL, email string) string {
		return web(fmt.Sprintf(`{ acme = { directory_url = %q, domain_name = "federation.example.test", email = %q } }`, directoryURL, email))
	}
	entry := func(td, body string) string {
		return fmt.Sprintf("  federates_with = {\n    %q = %s\n  }\n", td, body)
	}
	spiffePeer := func(url, id string) string {
		return fmt.Sprintf(`{ bundle_endpoint_url = %q, bundle_endpoint_profile = "https_spiffe", endpoint_spiffe_id = %q }`, url, id)
	}
	cases := []struct {
		name      string
		provider  string // extra provider settings
		body      string
		attr      string // the attribute path, or a pattern that starts with it
		wantError string
	}{
		{"unknown profile", "", `  bundle_endpoint = { profile = "mtls" }` + "\n", "bundle_endpoint", `https_spiffe.*https_web`},
		{"refresh hint below 60", "", `  bundle_endpoint = { refresh_hint = 59 }` + "\n", "refresh_hint", `between 60 and 3600`},
		{"refresh hint above 3600", "", `  bundle_endpoint = { refresh_hint = 3601 }` + "\n", "refresh_hint", `between 60 and 3600`},
		{"https_web without its configuration", "", `  bundle_endpoint = { profile = "https_web" }` + "\n", "https_web", `Missing https_web Configuration`},
		{"https_web configuration with https_spiffe", "",
			`  bundle_endpoint = { https_web = { serving_cert = {} } }` + "\n", "https_web", `https_web Not Applicable`},
		{"neither acme nor serving_cert", "", web(`{}`), "https_web.serving_cert", `(?i)No attribute specified when one \(and only one\) of`},
		{"both acme and serving_cert", "",
			web(`{ serving_cert = {}, acme = { directory_url = "https://acme.example.test/dir", domain_name = "f.example.test", email = "a@example.test" } }`),
			"https_web.serving_cert", `(?i)2 attributes specified when one \(and only one\) of`},
		{"acme directory not https", "", acme("http://acme.example.test/dir", "a@example.test"), "directory_url", `Invalid HTTPS URL`},
		{"acme email invalid", "", acme("https://acme.example.test/dir", "not-an-email"), "email", `email address`},
		// The released CRD's pattern: alphanumeric first and last characters.
		{"acme email starting with a dot", "", acme("https://acme.example.test/dir", ".admin@example.test"), "email", `email address`},
		{"serving cert sync interval below 1h", "", web(`{ serving_cert = { file_sync_interval = 3599 } }`), "file_sync_interval", `between 3600 and 7776000`},
		{"serving cert secret name invalid", "", web(`{ serving_cert = { external_secret_ref = "Bad_Name" } }`), "external_secret_ref", `Invalid Kubernetes Name`},
		{"peer key not a trust domain", "", entry("Peer.Test", spiffePeer("https://spire.peer.test", "spiffe://peer.test/spire/server")), "federates_with", `Invalid Trust Domain`},
		{"peer key is a SPIFFE ID", "", entry("spiffe://peer.test", spiffePeer("https://spire.peer.test", "spiffe://peer.test/spire/server")), "federates_with", `Invalid Trust Domain`},
		{"peer url not https", "", entry("peer.test", spiffePeer("http://spire.peer.test", "spiffe://peer.test/spire/server")), `bundle_endpoint_url: .*scheme is "http"`, `Invalid HTTPS URL`},
		{"peer url with userinfo", "", entry("peer.test", spiffePeer("https://user:pw@spire.peer.test", "spiffe://peer.test/spire/server")), "bundle_endpoint_url", `user credentials`},
		{"peer url without host", "", entry("peer.test", spiffePeer("https:///bundle", "spiffe://peer.test/spire/server")), "bundle_endpoint_url", `host is missing`},
		{"peer profile unknown", "", entry("peer.test", `{ bundle_endpoint_url = "https://spire.peer.test", bundle_endpoint_profile = "mtls" }`), "bundle_endpoint_profile", `https_spiffe`},
		{"https_spiffe peer without endpoint id", "", entry("peer.test", `{ bundle_endpoint_url = "https://spire.peer.test", bundle_endpoint_profile = "https_spiffe" }`), "endpoint_spiffe_id", `Missing Endpoint SPIFFE ID`},
		{"https_spiffe peer with invalid endpoint id", "", entry("peer.test", spiffePeer("https://spire.peer.test", "https://peer.test/spire/server")), "endpoint_spiffe_id", `Invalid SPIFFE ID`},
		{"https_web peer with endpoint id", "",
			entry("peer.test", `{ bundle_endpoint_url = "https://spire.peer.test", bundle_endpoint_profile = "https_web", endpoint_spiffe_id = "spiffe://peer.test/spire/server" }`),
			"endpoint_spiffe_id", `Endpoint SPIFFE ID Not Applicable`},
		{"51 peers", "", peersHCL(51), "federates_with: 51 entries, more than the limit of 50", `Too Many Federated Trust Domains`},
		{"more peers than the provider allows", "  max_federated_trust_domains = 2\n", peersHCL(3), "federates_with: 3 entries, more than the limit of 2", `Too Many Federated Trust Domains`},
		{"unknown cluster key", "", `  cluster = "north"` + "\n", "cluster", `Unknown Cluster`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			provider := strings.Replace(acctest.ProviderConfig(t), "provider \"zerotrust\" {\n", "provider \"zerotrust\" {\n"+tc.provider, 1)
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      provider + "resource \"zerotrust_spire_federation\" \"this\" {\n" + tc.body + "}\n",
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(`(?s)` + tc.wantError + `.*` + tc.attr + `|(?s)` + tc.attr + `.*` + tc.wantError),
				}},
			})
		})
	}
}

// TestAccSpireFederation_validInputPlans is the control for the cases above:
// the limits themselves plan, as a create carrying the configured values.
func TestAccSpireFederation_validInputPlans(t *testing.T) {
	const addr = "zerotrust_spire_federation.this"
	// Fresh paths each time: tfjsonpath.Path.AtMapKey appends to a shared
	// slice, so two paths extended from one stored path overwrite each other.
	endpoint := func(key string) tfjsonpath.Path { return tfjsonpath.New("bundle_endpoint").AtMapKey(key) }
	servingCert := func(key string) tfjsonpath.Path {
		return tfjsonpath.New("bundle_endpoint").AtMapKey("https_web").AtMapKey("serving_cert").AtMapKey(key)
	}
	// An exclusive cluster without a SpireServer: the plan reads the
	// singleton, and the shared lab's may carry another profile (the
	// harness's SPIRE writes one with https_spiffe).
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		acctest.ResetSpireSingletons(t, c)
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{{
				Config: acctest.ProviderConfigFor(t, c) + `
resource "zerotrust_spire_federation" "this" {
  cluster = "` + c.Name + `"
  bundle_endpoint = {
    profile      = "https_web"
    refresh_hint = 3600
    https_web    = { serving_cert = { file_sync_interval = 7776000, external_secret_ref = "federation-tls" } }
  }
` + peersHCL(50) + `
}
`,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("cluster"), knownvalue.StringExact(c.Name)),
						plancheck.ExpectKnownValue(addr, endpoint("profile"), knownvalue.StringExact("https_web")),
						plancheck.ExpectKnownValue(addr, endpoint("refresh_hint"), knownvalue.Int64Exact(3600)),
						plancheck.ExpectKnownValue(addr, servingCert("file_sync_interval"), knownvalue.Int64Exact(7776000)),
						plancheck.ExpectKnownValue(addr, servingCert("external_secret_ref"), knownvalue.StringExact("federation-tls")),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("federates_with"), knownvalue.MapSizeExact(50)),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("federates_with").AtMapKey("peer49.test").AtMapKey("bundle_endpoint_url"),
							knownvalue.StringExact("https://bundles.peer49.test")),
					},
				},
			}},
		}
	})
}
