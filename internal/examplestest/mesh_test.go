package examplestest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// What the tests that put workloads on examples/n-cluster-mesh share: the
// agents and workloads, the example's apply and destroy, and handshakes
// between every ordered pair.

// meshExample is a copy of examples/n-cluster-mesh applied to clusters,
// destroyed at the end of the test unless the test destroyed it.
type meshExample struct {
	dir       string
	destroyed bool
}

// applyMeshExample copies examples/n-cluster-mesh, writes its variables for
// clusters (and their SPIRE servers' bundle endpoints) and applies it.
func applyMeshExample(t *testing.T, clusters []*harness.Cluster, spires []*harness.Spire) *meshExample {
	t.Helper()
	m := &meshExample{dir: filepath.Join(copyExamples(t, "n-cluster-mesh"), "n-cluster-mesh")}
	vars := map[string]any{}
	for i, c := range clusters {
		// The lab has no OpenShift Route publishing the endpoint.
		vars[c.Name] = map[string]string{"config_path": c.Kubeconfig, "config_context": c.Name, "bundle_endpoint_url": spires[i].BundleEndpointURL}
	}
	data, err := json.Marshal(map[string]any{"clusters": vars})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.dir, "terraform.tfvars.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !m.destroyed {
			if out, code := terraform(t, m.dir, "destroy", "-auto-approve", "-no-color"); code != 0 {
				t.Errorf("cleanup: terraform destroy exited %d:\n%s", code, out)
			}
		}
	})
	mustTerraform(t, m.dir, "apply", "-auto-approve", "-no-color")
	return m
}

// destroy runs `terraform destroy` and returns its output.
func (m *meshExample) destroy(t *testing.T) string {
	t.Helper()
	out := mustTerraform(t, m.dir, "destroy", "-auto-approve", "-no-color")
	m.destroyed = true
	return out
}

// federateWorkloads makes every workload's entry federate with every other
// SPIRE server's trust domain, as an administrator's ClusterSPIFFEIDs would.
// SPIRE refuses that until it holds the peers' bundles, which the example's
// wait_for_bundle guarantees after its apply.
func federateWorkloads(ctx context.Context, t *testing.T, workloads []*harness.Workload, spires []*harness.Spire) {
	t.Helper()
	for i, w := range workloads {
		if err := w.SetFederatesWith(ctx, peerTrustDomains(spires, i)...); err != nil {
			t.Fatalf("federating the workloads: %v", err)
		}
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
		a := startAgent(ctx, t, s, harness.SpireAgentOptions{Name: "node"})
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

// startAgent starts an agent of s, stopped at the end of the test.
func startAgent(ctx context.Context, t *testing.T, s *harness.Spire, opts harness.SpireAgentOptions) *harness.SpireAgent {
	t.Helper()
	a, err := harness.StartSpireAgentWith(ctx, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Stop(); err != nil {
			t.Error(err)
		}
	})
	return a
}

// applyWebClusterSPIFFEID has s's spire-controller-manager register the
// pods labelled app=web (healTemplate), their entries federating with peers,
// as a cluster's administrator would once the federation is in place (SPIRE
// refuses entries federating with a trust domain whose bundle it lacks).
func applyWebClusterSPIFFEID(ctx context.Context, t *testing.T, s *harness.Spire, peers []string) {
	t.Helper()
	if err := s.ApplyClusterSPIFFEID(ctx, harness.ClusterSPIFFEIDOptions{
		Name: "web", SPIFFEIDTemplate: healTemplate, PodLabels: map[string]string{"app": "web"},
		FederatesWith: peers,
	}); err != nil {
		t.Fatal(err)
	}
}

// startWebWorkload starts a k8s_psat agent named agent on s's cluster and a
// pod workload pod (app=web, and the label/value pairs in labels) on it
// whose server accepts the workloads of every trust domain in accept but s's
// own; both stop at the end of the test.
func startWebWorkload(ctx context.Context, t *testing.T, s *harness.Spire, agent, pod string, accept []string, labels ...string) *harness.Workload {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	a := startAgent(ctx, t, s, harness.SpireAgentOptions{Name: agent, K8sPSAT: true})
	var allow []string
	for _, td := range accept {
		if td != s.TrustDomain {
			allow = append(allow, "spiffe://"+td)
		}
	}
	podLabels := map[string]string{"app": "web"}
	for i := 0; i+1 < len(labels); i += 2 {
		podLabels[labels[i]] = labels[i+1]
	}
	w, err := harness.StartPodWorkload(ctx, a, harness.PodWorkloadOptions{
		Namespace: "apps", Pod: pod, ServiceAccount: "web", Labels: podLabels, Allow: allow,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Stop(); err != nil {
			t.Error(err)
		}
	})
	return w
}

// expectEveryPair fails the test unless every ordered pair of workloads
// handshakes, naming each pair that does not.
func expectEveryPair(ctx context.Context, t *testing.T, workloads []*harness.Workload, when string) {
	t.Helper()
	failed := false
	for _, r := range everyPair(ctx, workloads, true, mtlsTimeout) {
		if r.err != nil {
			t.Errorf("%s: %v", when, r.err)
			failed = true
		}
	}
	if failed {
		t.FailNow()
	}
}

// expectNoBundleEndpoints fails the test when anything listens where a
// SPIRE server's bundle endpoint would be: no relationship could fetch a
// bundle from one.
func expectNoBundleEndpoints(t *testing.T, spires []*harness.Spire) {
	t.Helper()
	for _, s := range spires {
		u, err := url.Parse(s.BundleEndpointURL)
		if err != nil {
			t.Fatal(err)
		}
		if conn, err := net.DialTimeout("tcp", u.Host, 2*time.Second); err == nil {
			conn.Close()
			t.Fatalf("something listens on %s, the bundle endpoint address of %s", u.Host, s.TrustDomain)
		}
	}
}

type pairResult struct {
	from, to *harness.Workload
	detail   string
	err      error
}

// orderedPairs lists every ordered pair of distinct workloads.
func orderedPairs(workloads []*harness.Workload) []pairResult {
	var pairs []pairResult
	for _, from := range workloads {
		for _, to := range workloads {
			if from != to {
				pairs = append(pairs, pairResult{from: from, to: to})
			}
		}
	}
	return pairs
}

// everyPair waits, concurrently for every ordered pair of workloads, until
// the handshake's outcome is want (or timeout passes).
func everyPair(ctx context.Context, workloads []*harness.Workload, want bool, timeout time.Duration) []pairResult {
	results := orderedPairs(workloads)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			r := &results[i]
			r.detail, r.err = harness.WaitMTLS(ctx, r.from, r.to, want, timeout)
			if r.err != nil {
				r.err = fmt.Errorf("%w (want ok=%v)", r.err, want)
			}
		})
	}
	wg.Wait()
	return results
}

// podMesh is what TestAccExampleJoinLeave, TestAccExampleNClusterMeshUnreachable
// and TestAccExampleMixedMesh start: clusters of the test's own, each with a
// SPIRE server (laid out as the Helm chart does on the clusters helm names,
// as the OpenShift operator does on the others) and, in the background, a
// pod workload labelled app=joinLeaveApp that accepts every other
// cluster's workloads and has no entry until the example's ClusterSPIFFEID
// selects it; and a copy of examples/n-cluster-mesh, destroyed at the end of
// the test (with every cluster's entry as writeVars makes it) unless the
// test destroyed it.
type podMesh struct {
	clusters  []*harness.Cluster
	spires    []*harness.Spire
	helm      []bool
	waits     []func() *harness.Workload
	started   []*harness.Workload
	dir       string
	destroyed bool
}

// startPodMesh starts the podMesh of the clusters names; serveLater as in
// startMemberWorkload.
func startPodMesh(t *testing.T, names []string, serveLater bool, helm ...string) *podMesh {
	t.Helper()
	m := &podMesh{dir: filepath.Join(copyExamples(t, "n-cluster-mesh"), "n-cluster-mesh")}
	var tds []string
	for _, n := range names {
		var s *harness.Spire
		if slices.Contains(helm, n) {
			s = acctest.HelmSpire(t, n)
		} else {
			acctest.OwnCluster(t, n)
			s = acctest.Spire(t, n)
		}
		m.clusters, m.spires = append(m.clusters, s.Cluster), append(m.spires, s)
		m.helm = append(m.helm, slices.Contains(helm, n))
		tds = append(tds, s.TrustDomain)
	}
	for _, s := range m.spires {
		m.waits = append(m.waits, startMemberWorkload(t, s, tds, serveLater))
	}
	t.Cleanup(func() {
		if m.destroyed {
			return
		}
		m.writeVars(t, len(m.clusters), nil)
		if out, code := terraform(t, m.dir, "destroy", "-auto-approve", "-no-color"); code != 0 {
			t.Errorf("cleanup: terraform destroy exited %d:\n%s", code, out)
		}
	})
	return m
}

// writeVars writes the example's variables: the first n clusters, each with
// its kubeconfig, context and bundle endpoint URL (the lab has no OpenShift
// Route publishing it) and spire_install = "helm" where SPIRE is laid out as
// the chart does, as edit (when not nil) changes cluster i's entry; and the
// workloads variable selecting the pods.
func (m *podMesh) writeVars(t *testing.T, n int, edit func(i int, v map[string]any)) {
	t.Helper()
	vars := map[string]any{}
	for i, c := range m.clusters[:n] {
		v := map[string]any{"config_path": c.Kubeconfig, "config_context": c.Name, "bundle_endpoint_url": m.spires[i].BundleEndpointURL}
		if m.helm[i] {
			v["spire_install"] = "helm"
		}
		if edit != nil {
			edit(i, v)
		}
		vars[c.Name] = v
	}
	data, err := json.Marshal(map[string]any{"clusters": vars, "workloads": map[string]any{"pod_labels": map[string]string{"app": joinLeaveApp}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.dir, "terraform.tfvars.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// workloads waits for the first n clusters' workloads (see
// startMemberWorkload); a workload waited for once is not waited for again.
func (m *podMesh) workloads(n int) []*harness.Workload {
	for len(m.started) < n {
		m.started = append(m.started, m.waits[len(m.started)]())
	}
	return slices.Clone(m.started[:n])
}

// destroy runs `terraform destroy`.
func (m *podMesh) destroy(t *testing.T) {
	t.Helper()
	mustTerraform(t, m.dir, "destroy", "-auto-approve", "-no-color")
	m.destroyed = true
}
