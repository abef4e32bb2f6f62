package resources_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// importBlockSteps adopts an object with an `import {}` block, the way the
// docs show it: apply config, let Terraform forget the resource without
// destroying it (a `removed` block), then bring the existing object back
// with an import block. The import plans no change to the object and the
// plan after it is empty; the test's destroy then deletes the object, which
// proves the import put it under management. config must use the shared
// lab's provider block (acctest.ProviderConfig).
func importBlockSteps(t *testing.T, config, addr, id string, exists func() error) []resource.TestStep {
	t.Helper()
	return importBlockStepsWith(t, acctest.ProviderConfig(t), config, addr, id, exists)
}

// importBlockStepsWith is importBlockSteps for a config whose provider block
// is provider (e.g. acctest.ProviderConfigFor an Exclusive cluster): the
// step with the `removed` block needs the same provider to forget the
// resource.
func importBlockStepsWith(t *testing.T, provider, config, addr, id string, exists func() error) []resource.TestStep {
	t.Helper()
	checkExists := func(*terraform.State) error { return exists() }
	return []resource.TestStep{
		{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: checkExists,
		},
		{
			Config: provider + fmt.Sprintf("\nremoved {\n  from = %s\n  lifecycle {\n    destroy = false\n  }\n}\n", addr),
			Check:  checkExists,
		},
		{
			Config: config + fmt.Sprintf("\nimport {\n  to = %s\n  id = %q\n}\n", addr, id),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact(id)),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact(id)),
			},
			Check: checkExists,
		},
	}
}

func TestAccDomainVerification_importBlock(t *testing.T) {
	acctest.DomainVerificationController(t, acctest.East)
	domain := acctest.UniqueName("imp") + "." + acctest.DNSZone
	exists := func() error {
		_, err := getDV(t, acctest.East, domainverification.V1, domain)
		return err
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkDVGone(t, acctest.East, domain),
		Steps:                    importBlockSteps(t, dvConfig(t, fmt.Sprintf("  domain = %q", domain)), dvAddr, domain, exists),
	})
}

func TestAccMeshTrustDomain_importBlock(t *testing.T) {
	ns := acctest.UniqueNamespace(t, acctest.West, "kumaimp")
	peer := "peer-" + ns + ".test"
	objectName := "peer-" + ns + "-test"
	get := acctest.ObjectGetter(t, acctest.West, meshTrustGVR, ns, objectName)
	const addr = "zerotrust_mesh_trust_domain.this"
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "this" {
  cluster      = "west"
  mesh         = { kind = "kuma", namespace = %q }
  trust_domain = %q
  ca_bundles   = [%q]
}
`, ns, peer, peerPEM(t, peer))
	exists := func() error {
		_, err := get()
		return err
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := get(); !apierrors.IsNotFound(err) {
				return fmt.Errorf("MeshTrust %s/%s after destroy: %v, want it deleted", ns, objectName, err)
			}
			return nil
		},
		Steps: importBlockSteps(t, config, addr, fmt.Sprintf("west/kuma:%s:%s", ns, objectName), exists),
	})
}

// TestAccSpireFederation_importBlock adopts the federation of a SpireServer
// (a singleton, so on an Exclusive cluster) with an import block, by the id
// the docs show: <cluster>/cluster. The destroy at the end releases the
// federatesWith entries, which only a managed resource does; the bundle
// endpoint stays, as the operator forbids removing it.
func TestAccSpireFederation_importBlock(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		acctest.ResetSpireSingletons(t, c)
		acctest.ZTWIMStandIn(t, c)
		td := acctest.UniqueName("imp") + ".test"
		acctest.ApplyAs(t, c, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject(td, "solo"))
		acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(map[string]any{"logLevel": "info"}))
		config := federationConfig(t, c, `
  bundle_endpoint = {
    profile      = "https_spiffe"
    refresh_hint = 600
  }`+twoPeersHCL)
		endpoint := map[string]any{"bundleEndpoint.profile": "https_spiffe", "bundleEndpoint.refreshHint": int64(600)}
		exists := func() error {
			return resource.ComposeAggregateTestCheckFunc(
				checkFederation(t, c, endpoint),
				checkPeers(t, c, true,
					peer("north.test", "https://bundles.north.test", "https_web", ""),
					peer("west.test", "https://spire.west.test:8443", "https_spiffe", "spiffe://west.test/spire/server")),
				checkSpec(t, c, map[string]string{"logLevel": "info"}),
			)(nil)
		}
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			CheckDestroy:             resource.ComposeAggregateTestCheckFunc(checkFederation(t, c, endpoint), checkPeers(t, c, false)),
			Steps:                    importBlockStepsWith(t, acctest.ProviderConfigFor(t, c), config, federationAddr, c.Name+"/cluster", exists),
		}
	})
}
