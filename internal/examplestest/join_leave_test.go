package examplestest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// joinLeaveApp labels the pods of TestAccExampleJoinLeave: the example's
// ClusterSPIFFEIDs select them by it.
const joinLeaveApp = "mesh-member"

// TestAccExampleJoinLeave: examples/n-cluster-mesh with its `workloads`
// variable set registers pod workloads on every cluster from ClusterSPIFFEIDs
// that federate with every peer; nothing outside Terraform edits an entry.
// Three clusters first: their 6 ordered pairs handshake. Join: a fourth
// cluster is added to `clusters`, one apply, then all 12 pairs handshake
// (timed from the start of the apply). Leave: the fourth is marked
// `leaving`, one apply; its 6 pairs fail, the other 6 still handshake, and
// none of the other clusters keeps a federation, a bundle or a
// federates_with entry of it.
func TestAccExampleJoinLeave(t *testing.T) {
	m := startPodMesh(t, []string{"wleast", "wlwest", "wlnorth", "jlsouth"}, false)
	clusters, spires := m.clusters, m.spires
	ctx := context.Background()
	writeVars := func(n int, leaving bool) {
		m.writeVars(t, n, func(i int, v map[string]any) {
			if leaving && i == n-1 {
				v["leaving"] = true
			}
		})
	}

	writeVars(3, false)
	start := time.Now()
	mustTerraform(t, m.dir, "apply", "-auto-approve", "-no-color")
	three := m.workloads(3)
	expectEveryPair(ctx, t, three, "after the apply of 3 clusters")
	t.Logf("3 clusters: every one of the 6 pairs handshakes %s after the start of the apply", time.Since(start).Round(time.Millisecond))

	// Join.
	writeVars(4, false)
	start = time.Now()
	out := mustTerraform(t, m.dir, "apply", "-auto-approve", "-no-color")
	applied := time.Since(start)
	all := m.workloads(4)
	expectEveryPair(ctx, t, all, "after the join")
	t.Logf("join: apply %s; all 12 pairs handshake %s after the start of the apply (%s)", applied.Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond), applySummary(out))

	// Leave.
	writeVars(4, true)
	start = time.Now()
	out = mustTerraform(t, m.dir, "apply", "-auto-approve", "-no-color")
	t.Logf("leave: apply %s (%s)", time.Since(start).Round(time.Millisecond), applySummary(out))
	expectEveryPair(ctx, t, three, "after the leave, among the clusters that stay")
	failed := 0
	for _, r := range leaverPairs(ctx, all, all[3]) {
		if r.err != nil {
			t.Errorf("after the leave: %v", r.err)
			continue
		}
		failed++
	}
	t.Logf("after the leave: %d of the leaving cluster's 6 pairs fail, the other 6 handshake", failed)
	gone := spires[3].TrustDomain
	for i, s := range spires[:3] {
		if held, err := s.FederatedTrustDomains(ctx); err != nil || slices.Contains(held, gone) {
			t.Errorf("SPIRE %s holds the bundles of %v (%v) after the leave: want none of %s", s.TrustDomain, held, err, gone)
		}
		for _, name := range cftdNames(t, clusters[i]) {
			if strings.Contains(name, strings.ReplaceAll(gone, ".", "-")) {
				t.Errorf("ClusterFederatedTrustDomain %s about %s left on %s after the leave", name, gone, clusters[i].Name)
			}
		}
		if with := csidFederatesWith(t, clusters[i]); slices.Contains(with, gone) {
			t.Errorf("the ClusterSPIFFEID on %s federates with %v after the leave, including %s", clusters[i].Name, with, gone)
		}
		entries, err := s.Entries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if slices.Contains(e.FederatesWith, gone) {
				t.Errorf("entry %s (%s) on %s still federates with %s after the leave", e.ID, e.SPIFFEID, s.TrustDomain, gone)
			}
		}
	}
	if left := cftdNames(t, clusters[3]); len(left) != 0 {
		t.Errorf("the leaving cluster keeps ClusterFederatedTrustDomains %v", left)
	}

	m.destroy(t)
}

// leaverPairs waits, concurrently, until every ordered pair with w on one
// side fails its handshake (or mtlsTimeout passes).
func leaverPairs(ctx context.Context, all []*harness.Workload, w *harness.Workload) []pairResult {
	var pairs []pairResult
	for _, r := range orderedPairs(all) {
		if r.from == w || r.to == w {
			pairs = append(pairs, r)
		}
	}
	var wg sync.WaitGroup
	for i := range pairs {
		wg.Go(func() {
			p := &pairs[i]
			p.detail, p.err = harness.WaitMTLS(ctx, p.from, p.to, false, mtlsTimeout)
		})
	}
	wg.Wait()
	return pairs
}

// startMemberWorkload starts, in the background, a k8s_psat agent and a pod
// workload labelled app=joinLeaveApp on s's cluster that accepts the
// workloads of every other trust domain in tds. It has no entry until a
// ClusterSPIFFEID selects it. wait returns it once it serves, or with
// serveLater once its process runs (handshakes with it fail, saying it has
// no identity, until it serves).
func startMemberWorkload(t *testing.T, s *harness.Spire, tds []string, serveLater bool) (wait func() *harness.Workload) {
	t.Helper()
	var allow []string
	for _, td := range tds {
		if td != s.TrustDomain {
			allow = append(allow, "spiffe://"+td)
		}
	}
	type result struct {
		w   *harness.Workload
		err error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		a, err := harness.StartSpireAgentWith(ctx, s, harness.SpireAgentOptions{Name: "member", K8sPSAT: true})
		if err != nil {
			done <- result{err: err}
			return
		}
		t.Cleanup(func() { _ = a.Stop() })
		w, err := harness.StartPodWorkload(ctx, a, harness.PodWorkloadOptions{
			Namespace: "members", Pod: "member-0", ServiceAccount: "member", Labels: map[string]string{"app": joinLeaveApp},
			Allow: allow, SPIFFEID: "spiffe://" + s.TrustDomain + "/ns/members/sa/member", ReadyTimeout: 15 * time.Minute,
			ServeLater: serveLater,
		})
		if err == nil {
			t.Cleanup(func() { _ = w.Stop() })
		}
		done <- result{w, err}
	}()
	return func() *harness.Workload {
		t.Helper()
		r := <-done
		if r.err != nil {
			t.Fatalf("workload of %s: %v", s.TrustDomain, r.err)
		}
		return r.w
	}
}

// csidFederatesWith is spec.federatesWith of the example's ClusterSPIFFEID on c.
func csidFederatesWith(t *testing.T, c *harness.Cluster) []string {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	obj, err := dyn.Resource(kube.ClusterSPIFFEID.GVR()).Get(context.Background(), "zerotrust-federated-workloads", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the example's ClusterSPIFFEID on %s: %v", c.Name, err)
	}
	with, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "federatesWith")
	return with
}

// applySummary is the "Apply complete! ..." line of terraform's output.
func applySummary(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Apply complete!") {
			return strings.TrimSpace(line)
		}
	}
	return fmt.Sprintf("no summary in %d bytes of output", len(out))
}
