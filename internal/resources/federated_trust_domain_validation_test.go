package resources_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

// TestAccFederatedTrustDomain_invalidInputFailsAtPlan runs `terraform plan`
// only: each bad input must be refused before anything is sent to a cluster,
// with the attribute named.
func TestAccFederatedTrustDomain_invalidInputFailsAtPlan(t *testing.T) {
	now := time.Now()
	td := spiffeid.RequireTrustDomainFromString("peer.test")
	other := spiffeid.RequireTrustDomainFromString("other.test")
	expired := bundletest.BundleJSON(t, td, bundletest.NewCA(t, td, now.Add(-48*time.Hour), now.Add(-24*time.Hour)))
	// A CA whose SPIFFE ID belongs to another trust domain, offered as peer.test's bundle.
	foreign := bundletest.BundleJSON(t, td, bundletest.NewCA(t, other, now.Add(-time.Hour), now.Add(time.Hour)))

	valid := map[string]string{
		"cluster":                 `"west"`,
		"name":                    `null`,
		"trust_domain":            `"peer.test"`,
		"bundle_endpoint_url":     `"https://spire.peer.test:8443"`,
		"bundle_endpoint_profile": `{ type = "https_spiffe", endpoint_spiffe_id = "spiffe://peer.test/spire/server" }`,
		"trust_domain_bundle":     `null`,
	}
	cases := []struct {
		name      string
		attr      string
		value     string
		wantError string
	}{
		{"uppercase trust domain", "trust_domain", `"Peer.test"`, `Invalid Trust Domain`},
		{"trust domain with scheme", "trust_domain", `"spiffe://peer.test"`, `Invalid Trust Domain`},
		{"trust domain with bad char", "trust_domain", `"peer test"`, `Invalid Trust Domain`},
		{"trust domain too long", "trust_domain", fmt.Sprintf("%q", strings.Repeat("a", 256)), `Invalid Trust Domain`},
		{"http url", "bundle_endpoint_url", `"http://spire.peer.test"`, `https`},
		{"url with userinfo", "bundle_endpoint_url", `"https://user:pw@spire.peer.test"`, `user`},
		{"url without host", "bundle_endpoint_url", `"https:///bundle"`, `host`},
		{"bad profile type", "bundle_endpoint_profile", `{ type = "mtls", endpoint_spiffe_id = "spiffe://peer.test/spire/server" }`, `https_spiffe`},
		{"bad endpoint spiffe id", "bundle_endpoint_profile", `{ type = "https_spiffe", endpoint_spiffe_id = "https://peer.test/spire/server" }`, `SPIFFE ID`},
		{"https_spiffe without id", "bundle_endpoint_profile", `{ type = "https_spiffe" }`, `Missing Endpoint SPIFFE ID`},
		{"https_web with id", "bundle_endpoint_profile", `{ type = "https_web", endpoint_spiffe_id = "spiffe://peer.test/spire/server" }`, `Endpoint SPIFFE ID Not Applicable`},
		// A published bundle is an object in a cloud's store: it cannot present the peer's SPIFFE ID.
		{"https_spiffe from S3", "bundle_endpoint_url", `"https://bundles.s3.eu-west-1.amazonaws.com/peer.test/bundle.json"`,
			`Amazon\s+S3\.\s+The\s+https_spiffe\s+profile.*https_web`},
		{"https_spiffe from GCS", "bundle_endpoint_url", `"https://storage.googleapis.com/bundles/peer.json"`, `Google\s+Cloud\s+Storage`},
		{"https_spiffe from Azure Blob", "bundle_endpoint_url", `"https://acct.blob.core.windows.net/spire/peer.json"`, `Azure\s+Blob\s+Storage`},
		{"bundle not json", "trust_domain_bundle", `"not a bundle"`, `bundle`},
		{"bundle of another trust domain", "trust_domain_bundle", fmt.Sprintf("%q", foreign), `other\.test`},
		{"bundle with only expired CAs", "trust_domain_bundle", fmt.Sprintf("%q", expired), `(?i)expired|not valid`},
		{"bad object name", "name", `"Bad_Name"`, `(?i)name`},
		{"unknown cluster key", "cluster", `"north"`, `(?s)Unknown Cluster.*"east", "west"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			attrs := map[string]string{}
			for k, v := range valid {
				attrs[k] = v
			}
			attrs[tc.attr] = tc.value
			var body strings.Builder
			for _, k := range []string{"cluster", "name", "trust_domain", "bundle_endpoint_url", "bundle_endpoint_profile", "trust_domain_bundle"} {
				fmt.Fprintf(&body, "  %s = %s\n", k, attrs[k])
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      acctest.ProviderConfig(t) + "resource \"zerotrust_federated_trust_domain\" \"this\" {\n" + body.String() + "}\n",
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(`(?s)` + tc.wantError + `.*` + tc.attr + `|(?s)` + tc.attr + `.*` + tc.wantError),
				}},
			})
		})
	}
}
