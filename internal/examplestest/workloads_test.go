package examplestest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// mtlsTimeout bounds how long a handshake may take to reach the expected
// outcome: the agents pass entry and bundle changes on within seconds.
const mtlsTimeout = 90 * time.Second

// TestAccExampleWorkloadsTrust proves that federation works end to end:
// "SPIRE holds the bundle" made into "workloads trust each other". Three clusters of its own,
// each with a real SPIRE server, spire-controller-manager, spire-agent and a
// go-spiffe workload whose server accepts only the other clusters' workloads
// by SPIFFE ID. Before the apply of examples/n-cluster-mesh no workload
// completes an mTLS handshake with another cluster's; after it (and after the
// entries federate with the peers, as an administrator's ClusterSPIFFEIDs
// would make them) every ordered pair does; after `terraform destroy` none
// does, because delete_bundle_on_destroy (default true) removed the peers'
// bundles, which deleting the ClusterFederatedTrustDomains alone leaves in
// SPIRE.
func TestAccExampleWorkloadsTrust(t *testing.T) {
	t.Parallel()
	names := []string{"wleast", "wlwest", "wlnorth"}
	clusters := make([]*harness.Cluster, len(names))
	spires := make([]*harness.Spire, len(names))
	for i, n := range names {
		clusters[i] = acctest.OwnCluster(t, n)
		spires[i] = acctest.Spire(t, n)
	}
	ctx := context.Background()
	workloads := startMeshWorkloads(ctx, t, spires)

	// Before: no cluster holds another's bundle.
	for _, r := range everyPair(ctx, workloads, false, 10*time.Second) {
		if r.err != nil {
			t.Error(r.err)
			continue
		}
		t.Logf("before apply, %s -> %s: %s", r.from.SPIFFEID, r.to.SPIFFEID, r.detail)
		if !strings.Contains(r.detail, "bundle") && !strings.Contains(r.detail, "unknown authority") {
			t.Errorf("before apply %s -> %s failed for another reason than a missing bundle: %s", r.from.SPIFFEID, r.to.SPIFFEID, r.detail)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	mesh := applyMeshExample(t, clusters, spires)

	// The example waited for every bundle (wait_for_bundle), so SPIRE accepts
	// entries that federate with every peer now; it refuses them before.
	federateWorkloads(ctx, t, workloads, spires)
	for _, r := range everyPair(ctx, workloads, true, mtlsTimeout) {
		if r.err != nil {
			t.Error(r.err)
			continue
		}
		t.Logf("after apply, %s -> %s: %s", r.from.SPIFFEID, r.to.SPIFFEID, r.detail)
		if want := "ok " + r.to.SPIFFEID + ": hello " + r.from.SPIFFEID; r.detail != want {
			t.Errorf("after apply the handshake said %q, want %q", r.detail, want)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	out := mesh.destroy(t)
	if strings.Contains(out, "Peer Bundle Not Deleted") {
		t.Errorf("destroy could not delete a peer's bundle:\n%s", out)
	}
	for i, s := range spires {
		if held, err := s.FederatedTrustDomains(ctx); err != nil || len(held) != 0 {
			t.Errorf("SPIRE %s holds the bundles of %v (%v) after destroy, want none", s.TrustDomain, held, err)
		}
		if left := cftdNames(t, clusters[i]); len(left) != 0 {
			t.Errorf("destroy left ClusterFederatedTrustDomains on %s: %v", clusters[i].Name, left)
		}
	}
	for _, r := range everyPair(ctx, workloads, false, mtlsTimeout) {
		if r.err != nil {
			t.Error(r.err)
			continue
		}
		t.Logf("after destroy, %s -> %s: %s", r.from.SPIFFEID, r.to.SPIFFEID, r.detail)
	}
}
