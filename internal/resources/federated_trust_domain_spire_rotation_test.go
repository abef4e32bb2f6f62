package resources_test

import (
	"context"
	"encoding/hex"
	"fmt"
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
	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

// rotatingPeer is a SPIRE server of the test's own on a cluster of its own,
// laid out as the SPIFFE Helm chart's defaults lay it out: real SPIRE's
// BundlePublisher "k8s_configmap" keeps its bundle ConfigMap (bundle.spiffe
// in spire-system), so that its CA can be rotated and the configuration can
// read its bundle from the ConfigMap as the examples do.
func rotatingPeer(t *testing.T, prefix string) *harness.Spire {
	t.Helper()
	c := acctest.OwnCluster(t, acctest.UniqueName(prefix))
	// Short-lived SVIDs: agents and the server leave a tainted authority
	// within seconds.
	return startPeerSpire(t, c, harness.SpireOptions{TrustDomain: c.Name + ".test", X509SVIDTTL: time.Minute, Helm: true})
}

// rotatingPeerConfig federates east with peer, bootstrapped from the
// peer's bundle ConfigMap through zerotrust_trust_bundle, found (name,
// namespace and key) by zerotrust_spire_server from the chart's
// configuration.
func rotatingPeerConfig(t *testing.T, peer *harness.Spire) string {
	return helmClusterProvider(peer.Cluster, acctest.Cluster(t, acctest.East)) +
		publishedBundleConfig("peer", peer.Cluster.Name, peer.TrustDomain, "") + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "peer" {
  cluster             = "east"
  trust_domain        = %[2]q
  bundle_endpoint_url = %[3]q
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = %[4]q
  }
  trust_domain_bundle = data.zerotrust_trust_bundle.peer.spiffe_bundle
  wait_for_bundle     = true
}
`, peer.Cluster.Name, peer.TrustDomain, peer.BundleEndpointURL, peer.EndpointSPIFFEID)
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
//     follows the rotation: SPIRE's BundlePublisher writes the prepared
//     authority at the prepare and drops the revoked one at the revoke, and
//     neither the data source nor the repair's seed carries it.
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
				// Prepared, not fetched yet: no change. The ConfigMap lists
				// the prepared authority at once.
				PreConfig: func() {
					if prepared, err = peer.PrepareX509Authority(ctx); err != nil {
						t.Fatal(err)
					}
					peerConfigMapFollows(t, peer, "the prepare", func(b *spiffebundle.Bundle) bool {
						return len(b.X509Authorities()) == 2 && b.HasX509Authority(oldView.X509Authorities()[0])
					})
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
	// The BundlePublisher publishes at the revoke.
	peerConfigMapFollows(t, peer, "the revoke", func(b *spiffebundle.Bundle) bool {
		return len(b.X509Authorities()) == 1 && !b.HasX509Authority(oldView.X509Authorities()[0])
	})
}

// peerConfigMapPublishBound is how long the peer's BundlePublisher may take
// to publish a change: at once when SPIRE appends or revokes an authority,
// else at its next comparison, every 30 seconds.
const peerConfigMapPublishBound = 45 * time.Second

// peerConfigMapFollows waits until the bundle the peer's BundlePublisher
// wrote into its ConfigMap (bundle.spiffe, applied under the plugin's field
// manager) passes ok after what (a step of the rotation), and logs it and
// how long it took.
func peerConfigMapFollows(t *testing.T, peer *harness.Spire, what string, ok func(*spiffebundle.Bundle) bool) {
	t.Helper()
	ctx := context.Background()
	td := spiffeid.RequireTrustDomainFromString(peer.TrustDomain)
	start := time.Now()
	var last string
	// read is the published bundle, or nil with last saying why there is none.
	read := func(ctx context.Context) *spiffebundle.Bundle {
		cm, err := acctest.Dynamic(t, peer.Cluster.Name).Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).
			Namespace(peer.BundleNamespace).Get(ctx, peer.BundleConfigMap, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return nil
		}
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		writer := bundlesource.Writers(cm)[peer.BundleKey]
		b, key, err := bundlesource.FromConfigMap(td, peer.BundleNamespace+"/"+peer.BundleConfigMap, data, "", nil)
		if err != nil || key != bundlesource.KeySPIFFE || writer != bundlesource.PluginPublisher {
			last = fmt.Sprintf("key %q written by %q: %v", key, writer, err)
			return nil
		}
		last = fmt.Sprintf("%s written by %s: %s", key, writer, trustbundle.Describe(b.X509Authorities()))
		return b
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, peerConfigMapPublishBound, true, func(ctx context.Context) (bool, error) {
		b := read(ctx)
		return b != nil && ok(b), nil
	})
	if err != nil {
		t.Fatalf("the peer's bundle ConfigMap %s/%s did not follow %s within %v; last: %s",
			peer.BundleNamespace, peer.BundleConfigMap, what, peerConfigMapPublishBound, last)
	}
	t.Logf("%v after %s, the peer's bundle ConfigMap %s/%s holds %s", time.Since(start).Round(time.Millisecond), what,
		peer.BundleNamespace, peer.BundleConfigMap, last)
}
