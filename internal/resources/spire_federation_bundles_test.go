package resources_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// TestAccSpireFederation_peerBundleNotHeld: on a real SPIRE server that
// holds the bundle of one federates_with peer (set as an operator would,
// `spire-server bundle set`) and not of the other, the plan of the adopted
// federation warns once, naming the peer whose bundle is missing and the
// cluster, and says nothing of the peer SPIRE holds.
func TestAccSpireFederation_peerBundleNotHeld(t *testing.T) {
	t.Parallel()
	c := acctest.Exclusive(t)
	td := operatorCluster(t, c, "bundles", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	spire, err := harness.StartSpire(ctx, c, harness.SpireOptions{TrustDomain: td})
	if err != nil {
		t.Fatalf("starting the cluster's SPIRE server: %v", err)
	}
	t.Cleanup(func() {
		if err := spire.Stop(); err != nil {
			t.Errorf("stopping the cluster's SPIRE server: %v", err)
		}
	})
	held := spireTrustPeer(t, "held")
	bundle, err := held.BundleShow(ctx, "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	if err := spire.SetFederatedBundle(ctx, held.TrustDomain, bundle); err != nil {
		t.Fatalf("seeding the bundle of %s: %v", held.TrustDomain, err)
	}
	lost := acctest.UniqueName("lost") + ".test"
	// Set up before Terraform, so the import below writes nothing and the
	// federation is not one this provider applied moments ago.
	acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(map[string]any{"federation": map[string]any{
		"bundleEndpoint": map[string]any{},
		"federatesWith": []any{
			peer(held.TrustDomain, "https://bundles."+held.TrustDomain, "https_web", ""),
			peer(lost, "https://bundles."+lost, "https_web", ""),
		},
	}}))
	acctest.WaitZTWIMReconciled(t, c)

	w := newCLIWorkspace(t)
	w.write(acctest.ProviderConfigFor(t, c) + fmt.Sprintf(`
import {
  to = zerotrust_spire_federation.this
  id = "%[1]s/cluster"
}

resource "zerotrust_spire_federation" "this" {
  cluster = %[1]q
  federates_with = {
    %[2]q = { bundle_endpoint_url = "https://bundles.%[2]s", bundle_endpoint_profile = "https_web" }
    %[3]q = { bundle_endpoint_url = "https://bundles.%[3]s", bundle_endpoint_profile = "https_web" }
  }
}
`, c.Name, held.TrustDomain, lost))
	w.run("apply", "-auto-approve")
	out := w.run("plan")
	t.Logf("plan: %s", out)
	const want = "Warning: SPIRE Holds No Bundle of a Peer"
	if n := strings.Count(out, want); n != 1 {
		t.Fatalf("the plan has %d warnings %q, want one (for %s)", n, want, lost)
	}
	for _, s := range []string{fmt.Sprintf(`holds no bundle of %q`, lost), fmt.Sprintf(`on cluster %q`, c.Name)} {
		if !strings.Contains(out, s) {
			t.Errorf("the plan's warning does not say %s", s)
		}
	}
	if strings.Contains(out, fmt.Sprintf(`holds no bundle of %q`, held.TrustDomain)) {
		t.Errorf("the plan warns about %s, whose bundle SPIRE holds", held.TrustDomain)
	}
	w.run("destroy", "-auto-approve")
}
