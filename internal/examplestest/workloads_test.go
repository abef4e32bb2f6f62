package examplestest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/harness"
)

// mtlsTimeout bounds how long a handshake may take to reach the expected
// outcome: the agents pass entry and bundle changes on within seconds.
const mtlsTimeout = 90 * time.Second

// TestAccExampleWorkloadsTrust is the proof #15 asks for: "SPIRE holds the
// bundle" made into "workloads trust each other". Three clusters of its own,
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
		clusters[i] = acctest.ExtraCluster(t, n)
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

	dir := filepath.Join(copyExamples(t, "n-cluster-mesh"), "n-cluster-mesh")
	vars := map[string]any{}
	for i, c := range clusters {
		// The lab has no OpenShift Route publishing the endpoint.
		vars[c.Name] = map[string]string{"config_path": c.Kubeconfig, "config_context": c.Name, "bundle_endpoint_url": spires[i].BundleEndpointURL}
	}
	data, err := json.Marshal(map[string]any{"clusters": vars})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "terraform.tfvars.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	destroyed := false
	t.Cleanup(func() {
		if !destroyed {
			if out, code := terraform(t, dir, "destroy", "-auto-approve", "-no-color"); code != 0 {
				t.Errorf("cleanup: terraform destroy exited %d:\n%s", code, out)
			}
		}
	})
	mustTerraform(t, dir, "apply", "-auto-approve", "-no-color")

	// The example waited for every bundle (wait_for_bundle), so SPIRE accepts
	// entries that federate with every peer now; it refuses them before.
	for i, w := range workloads {
		if err := w.SetFederatesWith(ctx, peerTrustDomains(spires, i)...); err != nil {
			t.Fatalf("after apply: %v", err)
		}
	}
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

	out := mustTerraform(t, dir, "destroy", "-auto-approve", "-no-color")
	destroyed = true
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

// startMeshWorkloads starts, per SPIRE server, an agent and a workload
// "app" whose server accepts only the other servers' "app" workloads.
func startMeshWorkloads(ctx context.Context, t *testing.T, spires []*harness.Spire) []*harness.Workload {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	workloads := make([]*harness.Workload, len(spires))
	for i, s := range spires {
		a, err := harness.StartSpireAgent(ctx, s, "node")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := a.Stop(); err != nil {
				t.Error(err)
			}
		})
		var allow []string
		for _, td := range peerTrustDomains(spires, i) {
			allow = append(allow, "spiffe://"+td+"/workload/app")
		}
		w, err := harness.StartWorkload(ctx, a, harness.WorkloadOptions{Name: "app", Allow: allow})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := w.Stop(); err != nil {
				t.Error(err)
			}
		})
		workloads[i] = w
	}
	return workloads
}

type pairResult struct {
	from, to *harness.Workload
	detail   string
	err      error
}

// everyPair waits, concurrently for every ordered pair of workloads, until
// the handshake's outcome is want (or timeout passes).
func everyPair(ctx context.Context, workloads []*harness.Workload, want bool, timeout time.Duration) []pairResult {
	var results []pairResult
	for _, from := range workloads {
		for _, to := range workloads {
			if from != to {
				results = append(results, pairResult{from: from, to: to})
			}
		}
	}
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[i]
			r.detail, r.err = harness.WaitMTLS(ctx, r.from, r.to, want, timeout)
			if r.err != nil {
				r.err = fmt.Errorf("%w (want ok=%v)", r.err, want)
			}
		}()
	}
	wg.Wait()
	return results
}
