package resources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

const spireBundleAddr = "zerotrust_spire_bundle.peer"

// spireBundleConfig sets the bundle in bundleFile as peer's in east's SPIRE
// server, with extra in the resource block.
func spireBundleConfig(t *testing.T, peer *harness.Spire, bundleFile, extra string) string {
	return acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_spire_bundle" "peer" {
  cluster      = "east"
  trust_domain = %q
  bundle       = file(%q)
%s
}
`, peer.TrustDomain, bundleFile, extra)
}

// eastHoldsAuthoritiesOf checks that east's SPIRE server holds exactly the
// X.509 authorities peer publishes now.
func eastHoldsAuthoritiesOf(t *testing.T, peer *harness.Spire) acctest.ClusterCheck {
	return acctest.ClusterCheck(func(*terraform.State) error {
		ctx := context.Background()
		now, err := peer.BundleShow(ctx, "pem")
		if err != nil {
			return err
		}
		held, err := acctest.Spire(t, acctest.East).CLI(ctx, "bundle", "list", "-id", "spiffe://"+peer.TrustDomain, "-format", "pem")
		if err != nil {
			return err
		}
		if !samePEM(held, now) {
			return fmt.Errorf("east holds\n%s\nfor %s, the peer publishes\n%s", held, peer.TrustDomain, now)
		}
		return nil
	})
}

// reshuffledBundle is doc with its keys in reverse order and another
// sequence number and refresh hint: the same authorities.
func reshuffledBundle(t *testing.T, doc []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	keys, _ := m["keys"].([]any)
	slices.Reverse(keys)
	m["keys"] = keys
	m["spiffe_sequence"] = 4242
	m["spiffe_refresh_hint"] = 77
	out, err := json.MarshalIndent(m, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAccSpireBundle_lifecycle: the bundle of a peer whose endpoint east
// never fetches (there is no relationship) is set in east's SPIRE server;
// the same authorities in another order and with another sequence number
// plan nothing; a bundle deleted by hand and one replaced by hand plan an
// update that sets it again; the peer's new CA (a rebuilt peer) plans an
// update; the import plans nothing; destroy deletes it.
func TestAccSpireBundle_lifecycle(t *testing.T) {
	east := acctest.Spire(t, acctest.East)
	peer := spireTrustPeer(t, "courier")
	dir := t.TempDir()
	bundleFile := filepath.Join(dir, "bundle.json")
	writePeerBundle(t, peer, bundleFile)
	config := spireBundleConfig(t, peer, bundleFile, "")
	td := spiffeid.RequireTrustDomainFromString(peer.TrustDomain)
	held := statecheck.ExpectKnownValue(spireBundleAddr, tfjsonpath.New("id"), knownvalue.StringExact("east/"+peer.TrustDomain))
	expectUpdate := plancheck.ExpectResourceAction(spireBundleAddr, plancheck.ResourceActionUpdate)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			out, err := east.CLI(context.Background(), "bundle", "list", "-id", "spiffe://"+peer.TrustDomain)
			if err == nil {
				return fmt.Errorf("east still holds the bundle of %s:\n%s", peer.TrustDomain, out)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					held,
					statecheck.ExpectKnownValue(spireBundleAddr, tfjsonpath.New("on_destroy"), knownvalue.StringExact("dissociate")),
					eastHoldsAuthoritiesOf(t, peer),
				},
			},
			{
				// Same authorities, other key order, sequence number and hint.
				PreConfig: func() {
					doc, err := os.ReadFile(bundleFile)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(bundleFile, reshuffledBundle(t, doc), 0o600); err != nil {
						t.Fatal(err)
					}
				},
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// Deleted by hand: the plan sets it again.
				PreConfig: func() {
					if _, err := east.CLI(context.Background(), "bundle", "delete", "-id", "spiffe://"+peer.TrustDomain, "-mode", "dissociate"); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{expectUpdate},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{eastHoldsAuthoritiesOf(t, peer)},
			},
			{
				// Replaced by hand with a CA the peer never had.
				PreConfig: func() {
					ca := bundletest.NewCA(t, td, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
					if err := east.SetFederatedBundle(context.Background(), peer.TrustDomain, []byte(bundletest.BundleJSON(t, td, ca))); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{expectUpdate},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{eastHoldsAuthoritiesOf(t, peer)},
			},
			{
				// The peer's CA changed (rebuilt): its new bundle is an update.
				PreConfig: func() {
					if err := peer.Rebuild(context.Background()); err != nil {
						t.Fatal(err)
					}
					writePeerBundle(t, peer, bundleFile)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{expectUpdate},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{held, eastHoldsAuthoritiesOf(t, peer)},
			},
			{
				// Import reads what SPIRE holds; the configured bundle holds
				// the same authorities, so the import plans nothing.
				Config:          config,
				ResourceName:    spireBundleAddr,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   "east/" + peer.TrustDomain,
			},
		},
	})
}

// TestAccSpireBundle_relationshipRefused: a ClusterFederatedTrustDomain for
// the same trust domain, planned before the bundle in the same run, is a
// plan error naming trust_domain; so is one that exists on the cluster.
func TestAccSpireBundle_relationshipRefused(t *testing.T) {
	acctest.Spire(t, acctest.East)
	peer := spireTrustPeer(t, "twowriters")
	bundleFile := filepath.Join(t.TempDir(), "bundle.json")
	writePeerBundle(t, peer, bundleFile)
	cftd := spireTrustConfig(t, peer, bundleFile)
	bundle := fmt.Sprintf(`
resource "zerotrust_spire_bundle" "peer" {
  cluster      = "east"
  trust_domain = zerotrust_federated_trust_domain.peer.trust_domain
  bundle       = file(%q)
}
`, bundleFile)
	refused := regexp.MustCompile(`(?s)Trust Domain Federated Through Its Endpoint.*` + regexp.QuoteMeta(peer.TrustDomain))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{"east": peer.TrustDomain}),
		Steps: []resource.TestStep{
			{Config: cftd + bundle, PlanOnly: true, ExpectError: refused},
			{Config: cftd},
			{
				// The relationship exists now; the bundle's trust domain no
				// longer depends on it.
				Config:      cftd + fmt.Sprintf("\nresource \"zerotrust_spire_bundle\" \"peer\" {\n  cluster      = \"east\"\n  trust_domain = %q\n  bundle       = file(%q)\n}\n", peer.TrustDomain, bundleFile),
				PlanOnly:    true,
				ExpectError: refused,
			},
		},
	})
}

// TestAccSpireBundle_carriedBeforeRelationshipRefused: the other order of
// the same run, a ClusterFederatedTrustDomain planned after a bundle that
// Terraform carries for its trust domain, is a plan error naming the
// relationship's trust_domain; a bundle that is null on create (its source
// did not answer) is a plan error naming bundle, as there is none to keep.
func TestAccSpireBundle_carriedBeforeRelationshipRefused(t *testing.T) {
	acctest.Spire(t, acctest.East)
	peer := spireTrustPeer(t, "carriedfirst")
	bundleFile := filepath.Join(t.TempDir(), "bundle.json")
	writePeerBundle(t, peer, bundleFile)
	const cftdHeader = `resource "zerotrust_federated_trust_domain" "peer" {`
	cftd := spireTrustConfig(t, peer, bundleFile)
	if !strings.Contains(cftd, cftdHeader) {
		t.Fatalf("the relationship's configuration has no %q:\n%s", cftdHeader, cftd)
	}
	cftd = strings.Replace(cftd, cftdHeader, cftdHeader+"\n  depends_on = [zerotrust_spire_bundle.peer]", 1)
	bundle := func(value string) string {
		return fmt.Sprintf("\nresource \"zerotrust_spire_bundle\" \"peer\" {\n  cluster      = \"east\"\n  trust_domain = %q\n  bundle       = %s\n}\n",
			peer.TrustDomain, value)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{"east": peer.TrustDomain}),
		Steps: []resource.TestStep{
			{
				Config:      cftd + bundle(fmt.Sprintf("file(%q)", bundleFile)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Trust Domain's Bundle Carried by Terraform.*` + regexp.QuoteMeta(peer.TrustDomain)),
			},
			{
				Config:      acctest.ProviderConfig(t) + bundle("null"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)No Bundle to Carry.*bundle is null`),
			},
		},
	})
}
