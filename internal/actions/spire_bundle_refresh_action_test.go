package actions_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// TestAccSpireBundleRefreshAction_afterFederation federates east's real SPIRE
// server with west's (bootstrap bundle only, no waiting) and refreshes the
// bundle from an action_trigger of the ClusterFederatedTrustDomain: the apply
// returns once east's SPIRE holds west's bundle, fetched from west's bundle
// endpoint.
func TestAccSpireBundleRefreshAction_afterFederation(t *testing.T) {
	east, west := acctest.Spire(t, acctest.East), acctest.Spire(t, acctest.West)
	bundle, err := west.BundleShow(context.Background(), "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
action "zerotrust_spire_bundle_refresh" "west" {
  config {
    cluster      = "east"
    trust_domain = zerotrust_federated_trust_domain.west.trust_domain
    spire_server = {
      namespace = %q
      pod       = %q
    }
    timeout = "2m"
  }
}

resource "zerotrust_federated_trust_domain" "west" {
  cluster             = "east"
  trust_domain        = %q
  bundle_endpoint_url = %q
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = %q
  }
  trust_domain_bundle      = %q
  delete_bundle_on_destroy = true

  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.zerotrust_spire_bundle_refresh.west]
    }
  }
}
`, east.Namespace, east.PodName, west.TrustDomain, west.BundleEndpointURL, west.EndpointSPIFFEID, string(bundle))

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		TerraformVersionChecks:   actionsSupported,
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				stateFunc(func(*terraform.State) error {
					held, err := spireHolds(east, west.TrustDomain)
					if err != nil {
						return err
					}
					if !held {
						return fmt.Errorf("east's SPIRE server does not hold the bundle of %s after the refresh action", west.TrustDomain)
					}
					return nil
				}),
			},
		}},
	})
}

// TestAccSpireBundleRefreshAction_noRelationship: refreshing a trust domain
// SPIRE does not federate with fails at once (not after timeout), naming the
// pod, the cluster and what SPIRE answered.
func TestAccSpireBundleRefreshAction_noRelationship(t *testing.T) {
	east := acctest.Spire(t, acctest.East)
	td := acctest.UniqueName("nobody") + ".test"
	var start time.Time
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		TerraformVersionChecks:   actionsSupported,
		Steps: []resource.TestStep{
			{
				PreConfig: func() { start = time.Now() },
				Config: acctest.ProviderConfig(t) + triggered("zerotrust_spire_bundle_refresh", "nobody", fmt.Sprintf(`
    cluster      = "east"
    trust_domain = %q
    spire_server = { namespace = %q }
    timeout      = "10m"`, td, east.Namespace)),
				ExpectError: regexp.MustCompile(`(?s)No Federation Relationship.*` +
					wrapped(fmt.Sprintf(`SPIRE server pod %s/%s`, east.Namespace, east.PodName)) +
					`.*` + wrapped(`on cluster "east"`) + `.*` +
					wrapped(fmt.Sprintf(`there is no federation relationship with trust domain "spiffe://%s"`, td))),
			},
			{
				PreConfig: func() {
					if took := time.Since(start); took > time.Minute {
						t.Errorf("the refusal took %s: it was retried", took)
					}
				},
				Config: acctest.ProviderConfig(t),
			},
		},
	})
}

// stateFunc is a state check that asks the cluster, not the state.
type stateFunc func(*terraform.State) error

func (f stateFunc) CheckState(_ context.Context, _ statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if err := f(nil); err != nil {
		resp.Error = err
	}
}

func spireHolds(s *harness.Spire, td string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tds, err := s.FederatedTrustDomains(ctx)
	if err != nil {
		return false, err
	}
	return slices.Contains(tds, td), nil
}
