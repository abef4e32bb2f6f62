package provider_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// TestAccProvider_deferredClusterConnection plans, on a Terraform that
// supports deferred actions (-allow-deferral), while a cluster's connection
// is not known yet: the provider defers the resource on it instead of
// planning unknown values, the first apply creates only the cluster's stand-in
// (terraform_data), and the second plans the resource normally and converges.
// Without deferral support the same configuration plans unknown values in
// one round: TestAccFederatedTrustDomain_unknownHost.
func TestAccProvider_deferredClusterConnection(t *testing.T) {
	west := acctest.Cluster(t, acctest.West)
	acctest.ExperimentalTerraform(t)
	td := acctest.UniqueName("deferred") + ".test"
	const address = "zerotrust_federated_trust_domain.this"
	config := acctest.LateProviderConfig(west) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "this" {
  cluster                 = "late"
  trust_domain            = %q
  bundle_endpoint_url     = "https://bundles.%s"
  bundle_endpoint_profile = { type = "https_web" }
}
`, td, td)
	exists := func() error {
		_, err := acctest.Dynamic(t, acctest.West).Resource(cftdGVR).Get(context.Background(), td, metav1.GetOptions{})
		return err
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		AdditionalCLIOptions: &resource.AdditionalCLIOptions{
			Plan:  resource.PlanOptions{AllowDeferral: true},
			Apply: resource.ApplyOptions{AllowDeferral: true},
		},
		CheckDestroy: func(*terraform.State) error {
			if exists() == nil {
				return fmt.Errorf("%s still exists on %s", td, acctest.West)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("terraform_data.cluster", plancheck.ResourceActionCreate),
						plancheck.ExpectDeferredChange(address, plancheck.DeferredReasonProviderConfigUnknown),
					},
					// The cluster's host is in state now: nothing is deferred.
					PostApplyPreRefresh: []plancheck.PlanCheck{
						plancheck.ExpectNoDeferredChanges(),
						plancheck.ExpectResourceAction(address, plancheck.ResourceActionCreate),
					},
				},
				ExpectNonEmptyPlan: true,
				Check: func(*terraform.State) error {
					if exists() == nil {
						return fmt.Errorf("%s exists on %s although its change was deferred", td, acctest.West)
					}
					return nil
				},
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectNoDeferredChanges(),
						plancheck.ExpectResourceAction(address, plancheck.ResourceActionCreate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: func(*terraform.State) error { return exists() },
			},
		},
	})
}
