package resources_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// TestAccSpireFederation_refusedOnHelm: on a cluster whose SPIRE the Helm
// chart installed there is no SpireServer to edit, so the plan refuses the
// resource on `cluster`, saying where the chart configures the bundle
// endpoint and what holds federation relationships instead; nothing is
// written, so the cluster needs no SPIRE.
func TestAccSpireFederation_refusedOnHelm(t *testing.T) {
	t.Parallel()
	east := acctest.Cluster(t, acctest.East)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: helmClusterProvider(east) + `
resource "zerotrust_spire_federation" "this" {
  cluster = "east"
}
`,
			PlanOnly: true,
			ExpectError: regexp.MustCompile(`(?s)SPIRE Installed by the Helm Chart.*cluster\s+"east"\s+comes\s+from\s+the\s+` +
				`SPIFFE\s+Helm\s+chart.*federation\.enabled.*federation\s+relationships\s+are\s+zerotrust_federated_trust_domain`),
		}},
	})
}
