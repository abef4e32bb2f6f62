package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
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

// spireHoldsStep applies config, which federates east, s, with td with
// wait_for_bundle: afterwards east's SPIRE holds td's bundle (the apply
// returned only once it did, so no polling) and a plan is empty.
func spireHoldsStep(t *testing.T, s *harness.Spire, td, config string) resource.TestStep {
	return resource.TestStep{
		Config: config,
		ConfigPlanChecks: resource.ConfigPlanChecks{
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		},
		ConfigStateChecks: []statecheck.StateCheck{spireHoldsAfterApply(t, s, td)},
	}
}

func spireHoldsAfterApply(t *testing.T, s *harness.Spire, td string) statecheck.StateCheck {
	return acctest.ClusterCheck(func(*terraform.State) error {
		held, err := spireHolds(t, s, td)
		if err != nil {
			return err
		}
		if !held {
			return fmt.Errorf("east's SPIRE server does not hold the bundle of %s after apply", td)
		}
		return nil
	})
}

// spireReleasedOnDestroy is a CheckDestroy: east, s, holds no bundle of td
// any more (delete_bundle_on_destroy) and no ClusterFederatedTrustDomain of
// td is left there.
func spireReleasedOnDestroy(t *testing.T, s *harness.Spire, td string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		held, err := spireHolds(t, s, td)
		if err != nil {
			return err
		}
		if held {
			return fmt.Errorf("east's SPIRE server still holds the bundle of %s after destroy with delete_bundle_on_destroy", td)
		}
		return checkCFTDsGone(t, map[string]string{"east": td})(nil)
	}
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
		CheckDestroy:             spireReleasedOnDestroy(t, east, west.TrustDomain),
		Steps:                    []resource.TestStep{spireHoldsStep(t, east, west.TrustDomain, config)},
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

// TestAccFederatedTrustDomain_replaceWaitsForEntries ("the replace test: the
// check block is silent right after the apply"): east federates with west,
// and a ClusterSPIFFEID selects a running pod and federates with west. A
// replacement of the ClusterFederatedTrustDomain (tainted, as `terraform
// apply -replace` does) deletes it first, which drops the federation from
// the pod's entry; the create ends only when the entry carries it again, so
// zerotrust_federation_status, read in the same apply right after the
// create, finds every entry of the ClusterSPIFFEID federating.
func TestAccFederatedTrustDomain_replaceWaitsForEntries(t *testing.T) {
	east, west := acctest.Spire(t, acctest.East), acctest.Spire(t, acctest.West)
	app := acctest.UniqueName("repl")
	waitEast := startCSIDWorkload(t, east, app, west.TrustDomain)
	const cftd, status = "zerotrust_federated_trust_domain.east", "data.zerotrust_federation_status.after"
	config := acctest.ProviderConfig(t) + csidFederation(t, "east", acctest.East, west) + fmt.Sprintf(`
resource "zerotrust_cluster_spiffe_id" "east" {
  cluster            = %[1]q
  name               = %[2]q
  spiffe_id_template = %[3]q
  pod_selector = {
    match_labels = { app = %[2]q }
  }
  namespace_selector = {
    match_expressions = [{ key = "kubernetes.io/metadata.name", operator = "In", values = ["csid"] }]
  }
  federates_with = [%[4]q]
  timeouts = {
    create = "4m"
  }
  depends_on = [zerotrust_federated_trust_domain.east]
}

# Read in the apply, right after the federation's create (as a check block
# after the apply would).
data "zerotrust_federation_status" "after" {
  cluster         = %[1]q
  check_endpoints = false
  depends_on      = [zerotrust_federated_trust_domain.east]
}
`, acctest.East, app, csidTemplate, west.TrustDomain)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckGone(t, acctest.East, csidGVR, "", app),
		Steps: []resource.TestStep{
			{Config: config},
			{
				// The pod runs and its entry federates (the
				// ClusterSPIFFEID's create waited for that).
				PreConfig: func() { waitEast() },
				Taint:     []string{cftd},
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(cftd, plancheck.ResourceActionDestroyBeforeCreate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{entriesFederate{t: t, address: status, name: app}},
			},
		},
	})
}

// entriesFederate passes when the zerotrust_federation_status at address
// lists the ClusterSPIFFEID name with no problem and names no problem of it.
type entriesFederate struct {
	t             *testing.T
	address, name string
}

func (c entriesFederate) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	for _, r := range req.State.Values.RootModule.Resources {
		if r.Address != c.address {
			continue
		}
		problems, _ := r.AttributeValues["problems"].([]any)
		for _, p := range problems {
			if text := fmt.Sprint(p); strings.Contains(text, c.name) {
				resp.Error = fmt.Errorf("right after the replacement %s reports: %s", c.address, text)
				return
			}
		}
		workloads, _ := r.AttributeValues["workloads"].([]any)
		for _, w := range workloads {
			if m, ok := w.(map[string]any); ok && m["name"] == c.name {
				c.t.Logf("%s, right after the replacement: ClusterSPIFFEID %s: %v", c.address, c.name, m)
				if left, _ := m["problems"].([]any); len(left) > 0 {
					resp.Error = fmt.Errorf("right after the replacement, ClusterSPIFFEID %s: %v", c.name, left)
				}
				return
			}
		}
		resp.Error = fmt.Errorf("%s lists no ClusterSPIFFEID %s among %d", c.address, c.name, len(workloads))
		return
	}
	resp.Error = fmt.Errorf("%s not in state", c.address)
}
