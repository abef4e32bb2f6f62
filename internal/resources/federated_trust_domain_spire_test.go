package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

func spireHolds(t *testing.T, s *harness.Spire, td string) (bool, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tds, err := s.FederatedTrustDomains(ctx)
	if err != nil {
		return false, err
	}
	return slices.Contains(tds, td), nil
}

// TestAccFederatedTrustDomain_waitForBundle federates east's real SPIRE
// server with west's and asks SPIRE itself, not the state, what it holds.
func TestAccFederatedTrustDomain_waitForBundle(t *testing.T) {
	east, west := acctest.Spire(t, acctest.East), acctest.Spire(t, acctest.West)
	bundle, err := west.BundleShow(context.Background(), "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "west" {
  cluster             = "east"
  trust_domain        = %q
  bundle_endpoint_url = %q
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = %q
  }
  trust_domain_bundle      = %q
  wait_for_bundle          = true
  delete_bundle_on_destroy = true

  timeouts {
    create = "2m"
    delete = "2m"
  }
}
`, west.TrustDomain, west.BundleEndpointURL, west.EndpointSPIFFEID, string(bundle))

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			held, err := spireHolds(t, east, west.TrustDomain)
			if err != nil {
				return err
			}
			if held {
				return fmt.Errorf("east's SPIRE server still holds the bundle of %s after destroy with delete_bundle_on_destroy", west.TrustDomain)
			}
			return checkCFTDsGone(t, map[string]string{"east": west.TrustDomain})(nil)
		},
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				// The apply returned only once SPIRE held the bundle, so no polling here.
				acctest.ClusterCheck(func(*terraform.State) error {
					held, err := spireHolds(t, east, west.TrustDomain)
					if err != nil {
						return err
					}
					if !held {
						return fmt.Errorf("east's SPIRE server does not hold the bundle of %s after apply", west.TrustDomain)
					}
					return nil
				}),
			},
		}},
	})
}

// TestAccFederatedTrustDomain_waitForBundleTimesOut: a peer whose bundle
// SPIRE can never get (no bootstrap bundle, endpoint unreachable) fails the
// apply after the timeout with an error saying what to check, and the object
// stays in state (tainted), so nothing is left unrecorded.
func TestAccFederatedTrustDomain_waitForBundleTimesOut(t *testing.T) {
	acctest.Spire(t, acctest.East)
	td := acctest.UniqueName("never") + ".test"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{"east": td}),
		Steps: []resource.TestStep{{
			Config: acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "never" {
  cluster             = "east"
  trust_domain        = %q
  bundle_endpoint_url = "https://127.0.0.1:1"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = "spiffe://%s/spire/server"
  }
  wait_for_bundle = true
  timeouts {
    create = "4s"
  }
}
`, td, td),
			ExpectError: regexp.MustCompile(`(?s)SPIRE Does Not Hold the Peer Bundle.*` + regexp.QuoteMeta(td)),
		}},
	})
}
