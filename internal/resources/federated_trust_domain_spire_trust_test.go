package resources_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// spireTrustPeer is a standalone SPIRE server for east to federate with:
// one of the test's own, so that deleting its bundle from east's shared
// SPIRE server or rebuilding it touches no other test.
func spireTrustPeer(t *testing.T, prefix string) *harness.Spire {
	t.Helper()
	return startPeerSpire(t, nil, harness.SpireOptions{TrustDomain: acctest.UniqueName(prefix) + ".test", Standalone: true})
}

// startPeerSpire starts a peer's SPIRE server (on cluster c, or standalone
// when c is nil), stopped when the test ends.
func startPeerSpire(t *testing.T, c *harness.Cluster, opts harness.SpireOptions) *harness.Spire {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := harness.StartSpire(ctx, c, opts)
	if err != nil {
		t.Fatalf("starting the peer SPIRE server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping the peer SPIRE server: %v", err)
		}
	})
	return s
}

// writePeerBundle writes the peer's current bundle where the configuration
// reads it (file()), as a data source would read it at each plan.
func writePeerBundle(t *testing.T, peer *harness.Spire, file string) {
	t.Helper()
	b, err := peer.BundleShow(context.Background(), "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// spireTrustConfig federates east with peer, bootstrapped from bundleFile
// (none when ""), and waits for SPIRE to hold the bundle.
func spireTrustConfig(t *testing.T, peer *harness.Spire, bundleFile string) string {
	return spirePeerConfig(t, peer, bundleFile, `
  wait_for_bundle = true

  timeouts {
    create = "2m"
    update = "2m"
    delete = "2m"
  }`)
}

// spirePeerConfig is east's https_spiffe federation with peer, bootstrapped
// from bundleFile (none when ""), with extra in the resource block.
func spirePeerConfig(t *testing.T, peer *harness.Spire, bundleFile, extra string) string {
	bundle := "null"
	if bundleFile != "" {
		bundle = fmt.Sprintf("file(%q)", bundleFile)
	}
	return acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "peer" {
  cluster             = "east"
  trust_domain        = %q
  bundle_endpoint_url = %q
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = %q
  }
  trust_domain_bundle = %s
%s
}
`, peer.TrustDomain, peer.BundleEndpointURL, peer.EndpointSPIFFEID, bundle, extra)
}

// expectSpireTrustBefore checks what the plan's refresh found (the change's
// before value) and that the plan repairs it.
type expectSpireTrustBefore string

func (want expectSpireTrustBefore) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != "zerotrust_federated_trust_domain.peer" {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		after, _ := rc.Change.After.(map[string]any)
		if !rc.Change.Actions.Update() || before["spire_trust"] != string(want) || after["spire_trust"] != "federated" {
			resp.Error = fmt.Errorf("plan: %v with spire_trust %v -> %v, want an update from %q to \"federated\"",
				rc.Change.Actions, before["spire_trust"], after["spire_trust"], string(want))
		}
		return
	}
	resp.Error = fmt.Errorf("the plan has no change for zerotrust_federated_trust_domain.peer")
}

func eastHoldsPeer(t *testing.T, peer *harness.Spire, want bool) acctest.ClusterCheck {
	return acctest.ClusterCheck(func(*terraform.State) error {
		held, err := spireHolds(t, acctest.Spire(t, acctest.East), peer.TrustDomain)
		if err != nil {
			return err
		}
		if held != want {
			return fmt.Errorf("east's SPIRE server holds the bundle of %s: %v, want %v", peer.TrustDomain, held, want)
		}
		return nil
	})
}

// TestAccFederatedTrustDomainSpireTrust_lostBundle: SPIRE loses the peer's
// bundle (`spire-server bundle delete`, as a datastore restore or a mistake
// would), which spire-controller-manager never re-seeds while the
// relationship exists. The plan shows it (spire_trust bundle_missing ->
// federated), refuses the repair while no trust_domain_bundle is configured,
// and one apply re-seeds the bundle; the plan after it is empty.
func TestAccFederatedTrustDomainSpireTrust_lostBundle(t *testing.T) {
	east := acctest.Spire(t, acctest.East)
	peer := spireTrustPeer(t, "lost")
	bundleFile := filepath.Join(t.TempDir(), "bundle.json")
	writePeerBundle(t, peer, bundleFile)
	deleteBundle := func() {
		if _, err := east.CLI(context.Background(), "bundle", "delete", "-id", "spiffe://"+peer.TrustDomain, "-mode", "dissociate"); err != nil {
			t.Fatal(err)
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{"east": peer.TrustDomain}),
		Steps: []resource.TestStep{
			{
				Config: spireTrustConfig(t, peer, bundleFile),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("zerotrust_federated_trust_domain.peer", tfjsonpath.New("spire_trust"), knownvalue.StringExact("federated")),
					eastHoldsPeer(t, peer, true),
				},
			},
			{
				// Bundle lost, and the configuration no longer gives one:
				// the plan says what to set.
				PreConfig:   deleteBundle,
				Config:      spireTrustConfig(t, peer, ""),
				ExpectError: regexp.MustCompile(`(?s)SPIRE Needs the Peer Bundle Again.*holds no bundle.*` + regexp.QuoteMeta(peer.TrustDomain) + `.*Set trust_domain_bundle`),
			},
			{
				Config: spireTrustConfig(t, peer, bundleFile),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{expectSpireTrustBefore("bundle_missing")},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("zerotrust_federated_trust_domain.peer", tfjsonpath.New("spire_trust"), knownvalue.StringExact("federated")),
					eastHoldsPeer(t, peer, true),
				},
			},
		},
	})
}

// TestAccFederatedTrustDomainSpireTrust_rebuiltPeer: the peer's SPIRE server
// is rebuilt (empty datastore: a new CA, the same trust domain). East still
// holds the old bundle, which cannot authenticate the peer's endpoint any
// more, so SPIRE can never refresh it by itself. The plan shows
// bundle_stale -> federated; one apply seeds east with the peer's current
// bundle (the configuration's, as a data source reads it at each plan) and
// SPIRE fetches from the endpoint again.
func TestAccFederatedTrustDomainSpireTrust_rebuiltPeer(t *testing.T) {
	east := acctest.Spire(t, acctest.East)
	peer := spireTrustPeer(t, "rebuilt")
	bundleFile := filepath.Join(t.TempDir(), "bundle.json")
	writePeerBundle(t, peer, bundleFile)
	var oldBundle []byte
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{"east": peer.TrustDomain}),
		Steps: []resource.TestStep{
			{
				Config: spireTrustConfig(t, peer, bundleFile),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("zerotrust_federated_trust_domain.peer", tfjsonpath.New("spire_trust"), knownvalue.StringExact("federated")),
				},
			},
			{
				PreConfig: func() {
					ctx := context.Background()
					var err error
					if oldBundle, err = peer.BundleShow(ctx, "pem"); err != nil {
						t.Fatal(err)
					}
					if err := peer.Rebuild(ctx); err != nil {
						t.Fatal(err)
					}
					writePeerBundle(t, peer, bundleFile)
				},
				Config: spireTrustConfig(t, peer, bundleFile),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{expectSpireTrustBefore("bundle_stale")},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("zerotrust_federated_trust_domain.peer", tfjsonpath.New("spire_trust"), knownvalue.StringExact("federated")),
					acctest.ClusterCheck(func(*terraform.State) error {
						ctx := context.Background()
						now, err := peer.BundleShow(ctx, "pem")
						if err != nil {
							return err
						}
						if string(now) == string(oldBundle) {
							return fmt.Errorf("rebuilding the peer kept its CA")
						}
						held, err := east.CLI(ctx, "bundle", "list", "-id", "spiffe://"+peer.TrustDomain, "-format", "pem")
						if err != nil {
							return err
						}
						if !samePEM(held, now) {
							return fmt.Errorf("east holds\n%s\nfor %s, the rebuilt peer's bundle is\n%s", held, peer.TrustDomain, now)
						}
						return nil
					}),
				},
			},
		},
	})
}

// samePEM reports whether a and b hold the same certificates (PEM blocks,
// whatever else the text holds), in any order.
func samePEM(a, b []byte) bool {
	blocks := func(data []byte) []string {
		var out []string
		for {
			var block *pem.Block
			block, data = pem.Decode(data)
			if block == nil {
				break
			}
			out = append(out, string(block.Bytes))
		}
		slices.Sort(out)
		return out
	}
	x, y := blocks(a), blocks(b)
	return len(x) > 0 && slices.Equal(x, y)
}

// TestAccFederatedTrustDomainSpireTrust_firstBundleOnUpdate: a federation
// created without trust_domain_bundle and without wait_for_bundle (as a
// workspace does before its peer published its bundle) holds no bundle in
// SPIRE: spire-controller-manager reads the bundle only when it creates the
// relationship. The update that gives the bundle seeds SPIRE with it, in the
// same apply, instead of only recording it in state.
func TestAccFederatedTrustDomainSpireTrust_firstBundleOnUpdate(t *testing.T) {
	peer := spireTrustPeer(t, "first")
	bundleFile := filepath.Join(t.TempDir(), "bundle.json")
	writePeerBundle(t, peer, bundleFile)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{"east": peer.TrustDomain}),
		Steps: []resource.TestStep{
			{
				Config:            spirePeerConfig(t, peer, "", ""),
				ConfigStateChecks: []statecheck.StateCheck{eastHoldsPeer(t, peer, false)},
			},
			{
				Config: spirePeerConfig(t, peer, bundleFile, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("zerotrust_federated_trust_domain.peer", plancheck.ResourceActionUpdate),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{eastHoldsPeer(t, peer, true)},
			},
			{
				// The refresh after the seed finds SPIRE federated.
				Config: spirePeerConfig(t, peer, bundleFile, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("zerotrust_federated_trust_domain.peer", tfjsonpath.New("spire_trust"), knownvalue.StringExact("federated")),
				},
			},
		},
	})
}
