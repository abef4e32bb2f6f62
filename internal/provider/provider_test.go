package provider_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

func TestMain(m *testing.M) { acctest.Main(m) }

var cftdGVR = kube.ClusterFederatedTrustDomain.GVR()

func webCFTD(td string) string {
	return fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "this" {
  trust_domain            = %q
  bundle_endpoint_url     = "https://bundles.%s"
  bundle_endpoint_profile = { type = "https_web" }
}
`, td, td)
}

// TestAccProvider_defaultConnectionFromEnv reaches the default cluster
// through the kubernetes provider's environment variables alone.
func TestAccProvider_defaultConnectionFromEnv(t *testing.T) {
	west := acctest.Cluster(t, acctest.West)
	t.Setenv("KUBE_CONFIG_PATH", west.Kubeconfig)
	t.Setenv("KUBE_CTX", acctest.West)
	td := acctest.UniqueName("env") + ".test"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := acctest.Dynamic(t, acctest.West).Resource(cftdGVR).Get(context.Background(), td, metav1.GetOptions{}); err == nil {
				return fmt.Errorf("%s still exists", td)
			}
			return nil
		},
		Steps: []resource.TestStep{{
			Config: `provider "zerotrust" {}` + webCFTD(td),
			Check: func(*terraform.State) error {
				_, err := acctest.Dynamic(t, acctest.West).Resource(cftdGVR).Get(context.Background(), td, metav1.GetOptions{})
				return err
			},
		}},
	})
}

// TestAccProvider_forbidden shows the RBAC diagnostic with real credentials
// that may not write.
func TestAccProvider_forbidden(t *testing.T) {
	west := acctest.Cluster(t, acctest.West)
	td := acctest.UniqueName("rbac") + ".test"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "zerotrust" {
  kubernetes = {
    host                   = %q
    token                  = %q
    cluster_ca_certificate = %q
  }
}
`, west.Host, west.ViewerToken, string(west.CACertPEM)) + webCFTD(td),
			ExpectError: regexp.MustCompile(`(?s)Forbidden by the Cluster's RBAC.*"list".*clusterfederatedtrustdomains\.spire\.spiffe\.io`),
		}},
	})
}

func TestAccProvider_invalidConfigurationFailsAtPlan(t *testing.T) {
	cases := map[string]struct{ provider, want string }{
		"qps out of range":      {`qps = 0`, `(?s)qps.*between`},
		"empty cluster key":     {`clusters = { "" = { host = "https://127.0.0.1:1" } }`, `Invalid Cluster Key`},
		"bad dns timeout":       {`dns = { timeout = "soon" }`, `(?s)Invalid DNS Timeout.*dns.timeout`},
		"bad reconnect timeout": {`reconnect_timeout = "soon"`, `(?s)reconnect_timeout.*positive duration`},
		"short reconnect":       {`reconnect_timeout = "100ms"`, `(?s)reconnect_timeout.*at least 1s`},
		"bad exec version":      {`kubernetes = { exec = { api_version = "v1", command = "x" } }`, `(?s)api_version.*client.authentication.k8s.io`},
		"half a client cert":    {`kubernetes = { host = "https://127.0.0.1:1", client_certificate = "x" }`, `Incomplete Client Certificate`},
		"unknown spire install": {`spire = { install = "chart" }`, `(?s)spire.install.*value must be one of`},
		"cluster spire install": {`clusters = { eks = { host = "https://127.0.0.1:1", spire = { install = "eks" } } }`,
			`(?s)clusters\["eks"\].spire.install.*value must be one of`},
		"bad helm release": {`spire = { install = "helm", helm_release = "Spire_1" }`, `(?s)spire.helm_release`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
				PreCheck:                 func() { acctest.PreCheck(t) },
				Steps: []resource.TestStep{{
					Config:      "provider \"zerotrust\" {\n  " + tc.provider + "\n}\n" + webCFTD("x.test"),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}

// TestAccFunctions calls the provider functions through terraform itself.
func TestAccFunctions(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		PreCheck:                 func() { acctest.PreCheck(t) },
		Steps: []resource.TestStep{
			{
				Config: `
output "id"     { value = provider::zerotrust::spiffe_id("west.example.org", "spire", "server") }
output "parsed" { value = provider::zerotrust::parse_spiffe_id("spiffe://west.example.org/ns/a/sa/b") }
output "td"     { value = provider::zerotrust::trust_domain("spiffe://west.example.org/x") }
output "td2"    { value = provider::zerotrust::trust_domain("west.example.org") }
`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("id", knownvalue.StringExact("spiffe://west.example.org/spire/server")),
					statecheck.ExpectKnownOutputValue("parsed", knownvalue.ObjectExact(map[string]knownvalue.Check{
						"trust_domain": knownvalue.StringExact("west.example.org"),
						"path":         knownvalue.StringExact("/ns/a/sa/b"),
						"segments": knownvalue.ListExact([]knownvalue.Check{
							knownvalue.StringExact("ns"), knownvalue.StringExact("a"),
							knownvalue.StringExact("sa"), knownvalue.StringExact("b"),
						}),
					})),
					statecheck.ExpectKnownOutputValue("td", knownvalue.StringExact("west.example.org")),
					statecheck.ExpectKnownOutputValue("td2", knownvalue.StringExact("west.example.org")),
				},
			},
			{
				Config:      `output "bad" { value = provider::zerotrust::spiffe_id("West.example.org", "x") }`,
				ExpectError: regexp.MustCompile(`(?i)trust domain`),
			},
		},
	})
}
