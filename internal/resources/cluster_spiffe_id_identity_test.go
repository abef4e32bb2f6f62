package resources_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// TestAccClusterSPIFFEID_identityImport imports by resource identity: on a
// named cluster (also with generated configuration, which must plan no
// change) and on the default connection, whose identity has no cluster.
func TestAccClusterSPIFFEID_identityImport(t *testing.T) {
	name := acctest.UniqueName("ident")
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_cluster_spiffe_id" "west" {
  cluster            = "west"
  name               = %[1]q
  spiffe_id_template = "spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}"
  pod_selector = {
    match_labels = { app = %[1]q }
  }
  dns_name_templates = ["{{ .PodMeta.Name }}.example.org"]
  jwt_ttl            = "5m"
  hint               = "web"
  admin              = true
}

resource "zerotrust_cluster_spiffe_id" "dflt" {
  name               = %[1]q
  spiffe_id_template = "spiffe://{{ .TrustDomain }}/dflt"
  fallback           = true
}
`, name)
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			for _, c := range []string{acctest.West, acctest.East} {
				if err := acctest.CheckGone(t, c, csidGVR, "", name)(s); err != nil {
					return err
				}
			}
			return nil
		},
		Steps: identityImportSteps(config,
			identityImport{addr: "zerotrust_cluster_spiffe_id.west", identity: wantIdentity(acctest.West, "name", name), matchesState: []string{"name", "cluster"}, generate: true},
			identityImport{addr: "zerotrust_cluster_spiffe_id.dflt", identity: wantIdentity("", "name", name)}),
	})
}
