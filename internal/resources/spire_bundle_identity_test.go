package resources_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// TestAccSpireBundle_identityImport imports by resource identity, also with
// the configuration Terraform generates, which must plan no change; then
// lists the bundle (terraform query) by its identity.
func TestAccSpireBundle_identityImport(t *testing.T) {
	acctest.Spire(t, acctest.East)
	peer := spireTrustPeer(t, "courierid")
	bundleFile := filepath.Join(t.TempDir(), "bundle.json")
	writePeerBundle(t, peer, bundleFile)
	config := spireBundleConfig(t, peer, bundleFile, "")
	identity := wantIdentity(acctest.East, "trust_domain", peer.TrustDomain)
	steps := identityImportSteps(config,
		identityImport{addr: spireBundleAddr, identity: identity, matchesState: []string{"cluster", "trust_domain"}, generate: true})
	const listed = "zerotrust_spire_bundle.east"
	steps = append(steps, resource.TestStep{
		Query: true,
		Config: `
list "zerotrust_spire_bundle" "east" {
  provider         = zerotrust
  include_resource = true
  config {
    cluster = "east"
  }
}
`,
		QueryResultChecks: []querycheck.QueryResultCheck{
			querycheck.ExpectIdentity(listed, identity),
			querycheck.ExpectResourceKnownValues(listed, queryfilter.ByResourceIdentity(identity), []querycheck.KnownValueCheck{
				{Path: tfjsonpath.New("id"), KnownValue: knownvalue.StringExact(fmt.Sprintf("east/%s", peer.TrustDomain))},
				{Path: tfjsonpath.New("on_destroy"), KnownValue: knownvalue.StringExact("dissociate")},
			}),
		},
	})
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)},
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps:                    steps,
	})
}
