package resources_test

import (
	"context"
	"encoding/hex"
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
	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/federation"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
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

// rotatingPeer is a SPIRE server of the test's own on a cluster of its own,
// with the bundle ConfigMap its k8sbundle notifier keeps, so that its CA
// can be rotated and the configuration can read its bundle from the
// ConfigMap as the examples do.
func rotatingPeer(t *testing.T, prefix string) *harness.Spire {
	t.Helper()
	c := acctest.OwnCluster(t, acctest.UniqueName(prefix))
	// Short-lived SVIDs: agents and the server leave a tainted authority
	// within seconds.
	return startPeerSpire(t, c, harness.SpireOptions{TrustDomain: c.Name + ".test", X509SVIDTTL: time.Minute})
}

// rotatingPeerConfig federates east with peer, bootstrapped from the
// peer's bundle ConfigMap through zerotrust_trust_bundle.
func rotatingPeerConfig(t *testing.T, peer *harness.Spire) string {
	return acctest.ProviderConfigFor(t, acctest.Cluster(t, acctest.East), peer.Cluster) + fmt.Sprintf(`
data "zerotrust_trust_bundle" "peer" {
  cluster      = %[1]q
  trust_domain = %[2]q
  config_map = {
    namespace = %[3]q
    name      = %[4]q
  }
}

resource "zerotrust_federated_trust_domain" "peer" {
  cluster             = "east"
  trust_domain        = %[2]q
  bundle_endpoint_url = %[5]q
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = %[6]q
  }
  trust_domain_bundle = data.zerotrust_trust_bundle.peer.spiffe_bundle
  wait_for_bundle     = true
}
`, peer.Cluster.Name, peer.TrustDomain, peer.BundleNamespace, peer.BundleConfigMap, peer.BundleEndpointURL, peer.EndpointSPIFFEID)
}

// eastHoldsAuthorities checks the X.509 authorities east's SPIRE server
// holds for peer: every one of want, none of gone (authority IDs).
func eastHoldsAuthorities(east, peer *harness.Spire, want []string, gone ...*string) acctest.ClusterCheck {
	return acctest.ClusterCheck(func(*terraform.State) error {
		held, err := east.BundleX509Authorities(context.Background(), peer.TrustDomain)
		if err != nil {
			return err
		}
		has := func(id string) bool {
			return slices.ContainsFunc(held, func(a harness.X509Authority) bool { return a.ID == id })
		}
		for _, id := range want {
			if !has(id) {
				return fmt.Errorf("east's SPIRE server holds %v of %s, not %s", held, peer.TrustDomain, id)
			}
		}
		for _, id := range gone {
			if has(*id) {
				return fmt.Errorf("east's SPIRE server holds %v of %s, with %s", held, peer.TrustDomain, *id)
			}
		}
		return nil
	})
}

// TestAccFederatedTrustDomainSpireTrust_forcedRotation drives the states a
// peer's CA rotation leaves east's SPIRE server in:
//   - the peer prepares a new authority: its endpoint serves it, east's
//     SPIRE does not hold it until its next poll. A scheduled rotation goes
//     through this state, so the plan stays empty (it only warns).
//   - east's SPIRE holds an authority the peer's endpoint no longer serves
//     and lacks the new one: what a forced rotation (activate, taint and
//     revoke before the peers poll) leaves. The plan shows spire_trust
//     bundle_revoked -> federated and the apply has SPIRE fetch at once.
//   - the peer activates, taints and revokes its old authority, and east's
//     SPIRE then loses the bundle. The ConfigMap the configuration reads
//     still lists the revoked authority (SPIRE does not rewrite it on
//     revoke), yet neither the data source nor the repair's seed carries
//     it.
func TestAccFederatedTrustDomainSpireTrust_forcedRotation(t *testing.T) {
	east := acctest.Spire(t, acctest.East)
	peer := rotatingPeer(t, "rot")
	ctx := context.Background()
	td := spiffeid.RequireTrustDomainFromString(peer.TrustDomain)
	auths, err := peer.BundleX509Authorities(ctx, peer.TrustDomain)
	if err != nil || len(auths) != 1 {
		t.Fatalf("the peer's authorities before the rotation: %v, %v; want one", auths, err)
	}
	old := auths[0].ID
	oldBundle, err := peer.BundleShow(ctx, "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	oldView, err := spiffebundle.Parse(td, oldBundle)
	if err != nil {
		t.Fatal(err)
	}
	oldFingerprint := trustbundle.FingerprintsSHA256(oldView)[0]
	var prepared string
	// revoked stands for an authority the peer revoked: one east holds and
	// the peer's endpoint never serves.
	revoked := bundletest.NewCA(t, td, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
	revokedID := hex.EncodeToString(revoked.Cert.SubjectKeyId)
	config := rotatingPeerConfig(t, peer)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{"east": peer.TrustDomain}),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("zerotrust_federated_trust_domain.peer", tfjsonpath.New("spire_trust"), knownvalue.StringExact("federated")),
					eastHoldsAuthorities(east, peer, []string{old}),
				},
			},
			{
				// Prepared, not fetched yet: no change.
				PreConfig: func() {
					if prepared, err = peer.PrepareX509Authority(ctx); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// East holds an authority the endpoint does not serve and
				// lacks one it serves.
				PreConfig: func() {
					b := spiffebundle.New(td)
					b.AddX509Authority(oldView.X509Authorities()[0])
					b.AddX509Authority(revoked.Cert)
					doc, err := b.Marshal()
					if err == nil {
						err = east.SetFederatedBundle(ctx, peer.TrustDomain, doc)
					}
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{expectSpireTrustBefore("bundle_revoked")},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("zerotrust_federated_trust_domain.peer", tfjsonpath.New("spire_trust"), knownvalue.StringExact("federated")),
					acctest.ClusterCheck(func(s *terraform.State) error {
						return eastHoldsAuthorities(east, peer, []string{old, prepared}, &revokedID)(s)
					}),
				},
			},
			{
				// The old authority tainted and revoked, then the bundle lost.
				PreConfig: func() {
					forceRotation(t, peer, oldView, old, prepared)
					if _, err := east.CLI(ctx, "bundle", "delete", "-id", "spiffe://"+peer.TrustDomain, "-mode", "dissociate"); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{expectSpireTrustBefore("bundle_missing")},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.zerotrust_trust_bundle.peer", tfjsonpath.New("x509_fingerprints_sha256"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringFunc(func(v string) error {
							if v == oldFingerprint {
								return fmt.Errorf("the data source carries the revoked authority %s", v)
							}
							return nil
						})})),
					acctest.ClusterCheck(func(s *terraform.State) error {
						return eastHoldsAuthorities(east, peer, []string{prepared}, &old)(s)
					}),
				},
			},
		},
	})
}

// forceRotation activates prepared on peer, taints old, waits until the
// peer's endpoint no longer authenticates with oldView (its SVID moved to
// the new authority), and revokes old.
func forceRotation(t *testing.T, peer *harness.Spire, oldView *spiffebundle.Bundle, old, prepared string) {
	t.Helper()
	ctx := context.Background()
	if err := peer.ActivateX509Authority(ctx, prepared); err != nil {
		t.Fatal(err)
	}
	if err := peer.TaintX509Authority(ctx, old); err != nil {
		t.Fatal(err)
	}
	endpointID := spiffeid.RequireFromString(peer.EndpointSPIFFEID)
	err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := federation.FetchBundle(ctx, oldView.TrustDomain(), peer.BundleEndpointURL, federation.WithSPIFFEAuth(oldView, endpointID))
		return err != nil, nil
	})
	if err != nil {
		t.Fatalf("the peer's endpoint still authenticates with the old authority a minute after the taint: %v", err)
	}
	if err := peer.RevokeX509Authority(ctx, old); err != nil {
		t.Fatal(err)
	}
	// Logged, not required: the test holds whether or not SPIRE rewrites
	// the ConfigMap.
	cm, err := acctest.Dynamic(t, peer.Cluster.Name).Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).
		Namespace(peer.BundleNamespace).Get(ctx, peer.BundleConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedString(cm.Object, "data", "bundle.crt")
	listed, err := trustbundle.ParsePEM(oldView.TrustDomain(), []byte(data))
	if err != nil {
		t.Fatalf("the peer's bundle ConfigMap: %v", err)
	}
	t.Logf("after revoke, the peer's bundle ConfigMap lists the revoked authority: %v", listed.HasX509Authority(oldView.X509Authorities()[0]))
}
