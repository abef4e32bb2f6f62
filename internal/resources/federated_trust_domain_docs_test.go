package resources_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// TestAccFederatedTrustDomain_docsImport runs the import examples of the
// resource's page as they are written (examples/resources/
// zerotrust_federated_trust_domain: the import blocks by identity and by ID,
// each expected to plan no change, and every `terraform import` line of
// import.sh, run as written, its state compared with the created one)
// against the objects the page's own resource.tf creates with their default
// names. The page's cluster
// keys, "east" and "west", and the `kubernetes` connection are one cluster of
// the test's own, so the examples run unedited; west's bundle ConfigMap,
// which resource.tf reads, is made for it.
func TestAccFederatedTrustDomain_docsImport(t *testing.T) {
	t.Parallel()
	c := acctest.OwnCluster(t, "docsimport")
	dir := filepath.Join("..", "..", "examples", "resources", "zerotrust_federated_trust_domain")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	acctest.EnsureNamespace(t, c.Name, providerdata.OperatorSpireNamespace)
	acctest.CreateConfigMap(t, c.Name, providerdata.OperatorSpireNamespace, providerdata.SpireBundleConfigMap,
		map[string]any{bundlesource.KeySPIFFE: testBundle(t, "west.example.org")})

	provider := fmt.Sprintf(`provider "zerotrust" {
  kubernetes = { config_path = %[1]q, config_context = %[2]q }
  clusters = {
    east = { config_path = %[1]q, config_context = %[2]q }
    west = { config_path = %[1]q, config_context = %[2]q }
  }
}
`, c.Kubeconfig, c.Name)
	resources := provider + read("resource.tf")
	addrs := []string{ftdAddr + ".west", ftdAddr + ".partner"}
	// Forgets both resources without deleting their objects.
	forget := provider
	for _, a := range addrs {
		forget += fmt.Sprintf("removed {\n  from = %s\n  lifecycle {\n    destroy = false\n  }\n}\n", a)
	}
	noChange := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(addrs[0], plancheck.ResourceActionNoop),
		plancheck.ExpectResourceAction(addrs[1], plancheck.ResourceActionNoop),
	}}
	steps := []resource.TestStep{
		{Config: resources},
		{Config: forget},
		{Config: resources + read("import-by-identity.tf"), ConfigPlanChecks: noChange},
		{Config: forget},
		{Config: resources + read("import-by-string-id.tf"), ConfigPlanChecks: noChange},
	}
	var lines int
	for line := range strings.Lines(read("import.sh")) {
		fields := strings.Fields(line)
		if len(fields) != 4 || fields[0] != "terraform" || fields[1] != "import" {
			continue
		}
		lines++
		steps = append(steps, resource.TestStep{
			Config:            resources,
			ResourceName:      fields[2],
			ImportState:       true,
			ImportStateKind:   resource.ImportCommandWithID,
			ImportStateId:     fields[3],
			ImportStateVerify: true,
		})
	}
	if lines == 0 {
		t.Fatal("import.sh has no `terraform import` line")
	}

	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			for _, name := range []string{"west.example.org", "partner.example.com"} {
				if err := acctest.CheckGone(t, c.Name, cftdGVR, "", name)(s); err != nil {
					return err
				}
			}
			return nil
		},
		Steps: steps,
	})
}
