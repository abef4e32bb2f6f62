package examplestest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/rbac"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// The mesh run as one workspace per cluster (examples/workspace-per-cluster):
// every workspace is a state directory of its own with a kubeconfig that
// reaches its own cluster only, and learns about its peers only from their
// `federation` outputs, as tfe_outputs or terraform_remote_state would hand
// them over.

// workspace is one copy of examples/workspace-per-cluster with its own state,
// its own cluster's credentials, and that cluster's SPIRE server and workload.
type workspace struct {
	name string // the workspace name and its cluster's name
	dir  string
	// kubeconfig holds the workspace's only credential (workspaceKubeconfig).
	kubeconfig string
	cluster    *harness.Cluster
	spire      *harness.Spire
	workload   *harness.Workload
	destroyed  bool
}

// workspaceKubeconfig is the kubeconfig a workspace gets for s's cluster c:
// the token of the ServiceAccount the project's least-privilege manifest for
// the cluster's install creates and binds (examples/rbac/operator.yaml or
// examples/rbac/helm-chart.yaml, applied unchanged: the cluster-wide role,
// the SPIRE role in the SPIRE server's namespace only and, on a chart
// cluster, the bundle role where the chart publishes the bundle), reaching c
// and no other cluster.
func workspaceKubeconfig(t *testing.T, s *harness.Spire) string {
	t.Helper()
	c := s.Cluster
	file := rbac.OperatorFile
	if s.BundleNamespace != s.Namespace {
		file = rbac.HelmFile
	}
	manifest, err := os.ReadFile(filepath.Join(repoRoot(t), file.Path))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path, err := c.ManifestKubeconfig(ctx, manifest)
	if err != nil {
		t.Fatalf("least-privilege kubeconfig of workspace %s: %v", c.Name, err)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatalf("kubeconfig of workspace %s: %v", c.Name, err)
	}
	for name, cl := range cfg.Clusters {
		if cl.Server != c.Host {
			t.Fatalf("the kubeconfig of workspace %s reaches cluster %s at %s, not only its own cluster at %s", c.Name, name, cl.Server, c.Host)
		}
	}
	for name, u := range cfg.AuthInfos {
		if u.Token == "" || u.Token == c.Token || u.ClientCertificate != "" || len(u.ClientCertificateData) > 0 {
			t.Fatalf("the kubeconfig of workspace %s: user %s is not the least-privilege ServiceAccount's token", c.Name, name)
		}
	}
	return path
}

// newWorkspace starts cluster name with a SPIRE server (laid out as the
// SPIFFE Helm chart does when helm, as the OpenShift operator does
// otherwise) and copies the example into a directory of its own, destroyed
// at the end of the test unless the test destroyed it.
func newWorkspace(t *testing.T, name string, helm bool) *workspace {
	t.Helper()
	w := startWorkspaceCluster(t, name, helm, "workspace-per-cluster")
	// `get` installs the local module without asking any registry for
	// providers, which `init` would do even with dev_overrides.
	mustTerraform(t, w.dir, "get", "-no-color")
	t.Cleanup(func() {
		if !w.destroyed {
			if out, code := terraform(t, w.dir, "destroy", "-auto-approve", "-no-color"); code != 0 {
				t.Errorf("cleanup: terraform destroy of workspace %s exited %d:\n%s", w.name, code, out)
			}
		}
	})
	return w
}

// startWorkspaceCluster starts cluster name with a SPIRE server (laid out
// as the SPIFFE Helm chart does when helm, as the OpenShift operator does
// otherwise), makes the workspace's least-privilege kubeconfig, and copies
// examples/<example> (with examples/modules) into a directory of its own.
func startWorkspaceCluster(t *testing.T, name string, helm bool, example string) *workspace {
	t.Helper()
	w := &workspace{name: name}
	if helm {
		w.spire = acctest.HelmSpire(t, name)
	} else {
		acctest.OwnCluster(t, name)
		w.spire = acctest.Spire(t, name)
	}
	w.cluster = w.spire.Cluster
	w.kubeconfig = workspaceKubeconfig(t, w.spire)
	w.dir = filepath.Join(copyExamples(t, "modules", example), example)
	return w
}

// setVars writes the workspace's variables: its name, its own cluster's
// kubeconfig, where its bundle endpoint is (the lab has no OpenShift Route
// publishing it) and peers, keyed by peer workspace name.
func (w *workspace) setVars(t *testing.T, peers map[string]json.RawMessage) {
	t.Helper()
	if peers == nil {
		peers = map[string]json.RawMessage{}
	}
	w.writeVars(t, map[string]any{"workspace_name": w.name, "config_path": w.kubeconfig, "peers": peers})
}

// writeVars writes vars, with where the workspace's bundle endpoint is (the
// lab publishes it through no Route or Ingress) and its SPIRE install, to
// its terraform.tfvars.json.
func (w *workspace) writeVars(t *testing.T, vars map[string]any) {
	t.Helper()
	vars["bundle_endpoint_url"] = w.spire.BundleEndpointURL
	if install := spireInstall(w.spire); install != "" {
		vars["spire_install"] = install
	}
	data, err := json.Marshal(vars)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "terraform.tfvars.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// output returns the workspace's output name as JSON.
func (w *workspace) output(t *testing.T, name string) json.RawMessage {
	t.Helper()
	return json.RawMessage(mustTerraform(t, w.dir, "output", "-json", name))
}

// outputStrings returns a list-of-strings output.
func (w *workspace) outputStrings(t *testing.T, name string) []string {
	t.Helper()
	var v []string
	if err := json.Unmarshal(w.output(t, name), &v); err != nil {
		t.Fatalf("workspace %s: output %s: %v", w.name, name, err)
	}
	return v
}

// advertised is what a variable set can say about w before its workspace has
// ever applied: trust domain, bundle endpoint URL and SPIFFE ID, no bundle.
func (w *workspace) advertised(t *testing.T) json.RawMessage {
	t.Helper()
	data, err := json.Marshal(map[string]any{
		"trust_domain":        w.spire.TrustDomain,
		"bundle_endpoint_url": w.spire.BundleEndpointURL,
		"endpoint_spiffe_id":  w.spire.EndpointSPIFFEID,
		"bundle":              nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// peersOf maps every workspace of all but w to what fact gives about it.
func peersOf(w *workspace, all []*workspace, fact func(*workspace) json.RawMessage) map[string]json.RawMessage {
	peers := map[string]json.RawMessage{}
	for _, p := range all {
		if p != w {
			peers[p.name] = fact(p)
		}
	}
	return peers
}

// wsNames lists the workspaces' names, sorted.
func wsNames(wss []*workspace) []string {
	var n []string
	for _, w := range wss {
		n = append(n, w.name)
	}
	sort.Strings(n)
	return n
}

// others lists every workspace of all but w.
func others(w *workspace, all []*workspace) []*workspace {
	var o []*workspace
	for _, p := range all {
		if p != w {
			o = append(o, p)
		}
	}
	return o
}

// trustDomains lists the workspaces' SPIRE trust domains, sorted.
func trustDomains(wss []*workspace) []string {
	var tds []string
	for _, w := range wss {
		tds = append(tds, w.spire.TrustDomain)
	}
	sort.Strings(tds)
	return tds
}

// runConcurrently runs `terraform args...` in every workspace at the same
// time, fails the test when any exits non-zero, and returns the wall time
// from the first start to the last end.
func runConcurrently(t *testing.T, what string, wss []*workspace, args ...string) time.Duration {
	t.Helper()
	results, wall := concurrently(len(wss), func(i int) (string, int) { return terraform(t, wss[i].dir, args...) })
	names := make([]string, len(wss))
	for i, w := range wss {
		names[i] = w.name
	}
	expectRuns(t, what, names, results, wall, strings.Join(args, " "))
	return wall
}

// runResult is one of several commands run at once: its output, exit code,
// and when it started and ended.
type runResult struct {
	out        string
	code       int
	start, end time.Time
}

func (r runResult) took() time.Duration { return r.end.Sub(r.start) }

// concurrently runs run(0) ... run(n-1) at the same time and returns their
// results and the wall time from the first start to the last end.
func concurrently(n int, run func(i int) (string, int)) ([]runResult, time.Duration) {
	results := make([]runResult, n)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			r := &results[i]
			r.start = time.Now()
			r.out, r.code = run(i)
			r.end = time.Now()
		})
	}
	wg.Wait()
	return results, time.Since(start)
}

// expectRuns logs the times of terraform commands (cmd: the command and its
// arguments, or what they have in common) run at once in the workspaces
// names, and fails the test when any exited non-zero.
func expectRuns(t *testing.T, what string, names []string, results []runResult, wall time.Duration, cmd string) {
	t.Helper()
	var each []string
	failed := false
	for i, r := range results {
		each = append(each, fmt.Sprintf("%s %s", names[i], r.took().Round(100*time.Millisecond)))
		if r.code != 0 {
			t.Errorf("%s: terraform %s in workspace %s exited %d:\n%s", what, cmd, names[i], r.code, r.out)
			failed = true
		}
	}
	verb, _, _ := strings.Cut(cmd, " ")
	t.Logf("%s: %d concurrent `terraform %s` took %s wall time (%s)", what, len(results), verb, wall.Round(100*time.Millisecond), strings.Join(each, ", "))
	if failed {
		t.FailNow()
	}
}

// expectSpireHolds asks every workspace's SPIRE server once, right after
// an apply, which bundles it holds (`spire-server bundle list`), and fails
// the test unless they are exactly its peers' trust domains: the applies end
// on SPIRE's state (wait_for_bundle, delete_bundle_on_destroy), so nothing is
// waited for here.
func expectSpireHolds(ctx context.Context, t *testing.T, when string, wss []*workspace, peers func(*workspace) []*workspace) {
	t.Helper()
	for _, w := range wss {
		want := trustDomains(peers(w))
		if want == nil {
			want = []string{}
		}
		got, err := w.spire.FederatedTrustDomains(ctx)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%s: SPIRE %s holds the bundles of %v (%v), want %v", when, w.spire.TrustDomain, got, err, want)
		}
	}
}

// startWorkload starts a k8s_psat agent on w's cluster and a pod workload on
// it whose server accepts workloads of every trust domain in accept. The
// module's ClusterSPIFFEID selects it (its workload_label default): its
// entry federates with the peers the workspace federated.
func (w *workspace) startWorkload(ctx context.Context, t *testing.T, accept []string) {
	t.Helper()
	w.workload = startWebWorkload(ctx, t, w.spire, "node", "web-0", accept, moduleWorkloadLabel, "web")
}

// expectHandshakes fails the test unless every ordered pair of the
// workspaces' workloads handshakes.
func expectHandshakes(ctx context.Context, t *testing.T, wss []*workspace, when string) {
	t.Helper()
	var workloads []*harness.Workload
	for _, w := range wss {
		workloads = append(workloads, w.workload)
	}
	expectEveryPair(ctx, t, workloads, when)
	t.Logf("%s: all %d ordered pairs of %v handshake", when, len(wss)*(len(wss)-1), wsNames(wss))
}

// expectState checks a workspace's outputs after an apply: which peers it
// federates with and which it waits for.
func (w *workspace) expectState(t *testing.T, federated, waiting []string) {
	t.Helper()
	if federated == nil {
		federated = []string{}
	}
	if waiting == nil {
		waiting = []string{}
	}
	if got := w.outputStrings(t, "federated_with"); !slices.Equal(got, federated) {
		t.Errorf("workspace %s: federated_with = %v, want %v", w.name, got, federated)
	}
	if got := w.outputStrings(t, "waiting_for"); !slices.Equal(got, waiting) {
		t.Errorf("workspace %s: waiting_for = %v, want %v", w.name, got, waiting)
	}
}

// TestAccWorkspacePerCluster federates clusters from separate workspaces
// (examples/workspace-per-cluster): four clusters, four state directories,
// four kubeconfigs each reaching one cluster; ws-b's SPIRE is laid out as
// the SPIFFE Helm chart does (its workspace says spire_install = "helm"),
// the others' as the OpenShift operator does.
//
//  1. Pass 1: the four applies run at the same time, each knowing of its
//     peers only what a variable set holds in advance (trust domain, bundle
//     endpoint URL and SPIFFE ID, no bundle): nobody federates yet, every
//     workspace lists its peers in `waiting_for` and publishes its own
//     `federation` output.
//  2. Pass 2: each workspace gets its peers' `federation` outputs (what
//     tfe_outputs would hand over), the four applies run at the same time
//     again; every SPIRE server holds every peer's bundle, workloads whose
//     entries come from the module's ClusterSPIFFEID (no step outside
//     Terraform) handshake for every ordered pair, and every workspace's
//     plan is then empty.
//  3. A second workspace on an already managed cluster that declares a peer
//     the first one federates fails at plan: every workspace has its own
//     field manager.
//  4. A fifth cluster joins: its workspace applies with the others'
//     outputs, then the four others apply concurrently with one more peer
//     (their ClusterSPIFFEIDs add it); every ordered pair of the five
//     handshakes.
//  5. A cluster leaves: its peers apply concurrently without it, which
//     deletes its bundle from their SPIRE servers, so handshakes with it
//     fail; its own workspace is destroyed.
func TestAccWorkspacePerCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	wss := make([]*workspace, 0, 5)
	// ws-b's SPIRE is the chart's, the others' the operator's.
	for _, n := range []string{"ws-a", "ws-b", "ws-c", "ws-d"} {
		wss = append(wss, newWorkspace(t, n, n == "ws-b"))
	}
	// The fifth cluster's trust domain is known in advance (it is named
	// after the cluster), so the workloads accept it from the start.
	accept := append(trustDomains(wss), "ws-e.zt.test")

	// 1. Pass 1: peers known from variable sets, without bundles.
	for _, w := range wss {
		w.setVars(t, peersOf(w, wss, func(p *workspace) json.RawMessage { return p.advertised(t) }))
	}
	pass1 := runConcurrently(t, "pass 1 (peers without bundles)", wss, "apply", "-auto-approve", "-no-color")
	for _, w := range wss {
		w.expectState(t, nil, wsNames(others(w, wss)))
		if left := cftdNames(t, w.cluster); len(left) != 0 {
			t.Errorf("pass 1 created ClusterFederatedTrustDomains on %s: %v", w.name, left)
		}
	}
	expectSpireHolds(ctx, t, "after pass 1", wss, func(*workspace) []*workspace { return nil })

	// 2. Pass 2: peers from their workspaces' outputs.
	federation := map[*workspace]json.RawMessage{}
	for _, w := range wss {
		federation[w] = w.output(t, "federation")
	}
	// published is what a peer's workspace published: its federation output.
	published := func(p *workspace) json.RawMessage { return federation[p] }
	for _, w := range wss {
		w.setVars(t, peersOf(w, wss, published))
	}
	pass2 := runConcurrently(t, "pass 2 (peers' federation outputs)", wss, "apply", "-auto-approve", "-no-color")
	for _, w := range wss {
		w.expectState(t, wsNames(others(w, wss)), nil)
		if got, want := cftdNames(t, w.cluster), trustDomains(others(w, wss)); !slices.Equal(got, want) {
			t.Errorf("ClusterFederatedTrustDomains on %s = %v, want %v", w.name, got, want)
		}
	}
	expectSpireHolds(ctx, t, "after pass 2", wss, func(w *workspace) []*workspace { return others(w, wss) })
	for _, w := range wss {
		w.startWorkload(ctx, t, accept)
	}
	expectHandshakes(ctx, t, wss, "after pass 2")
	for _, w := range wss {
		planEmpty(t, w.dir, "of workspace "+w.name+" after pass 2")
	}
	t.Logf("four workspaces from nothing to a converged mesh: pass 1 %s + pass 2 %s", pass1.Round(100*time.Millisecond), pass2.Round(100*time.Millisecond))

	// 3. A second workspace declares, on ws-a's cluster, a peer ws-a
	// already federates with.
	// Same cluster, same least-privilege credentials, its own field manager.
	dup := &workspace{name: "ws-a-second", cluster: wss[0].cluster, spire: wss[0].spire, kubeconfig: wss[0].kubeconfig, destroyed: true}
	dup.dir = filepath.Join(copyExamples(t, "modules", "workspace-per-cluster"), "workspace-per-cluster")
	mustTerraform(t, dup.dir, "get", "-no-color")
	dup.setVars(t, map[string]json.RawMessage{wss[1].name: federation[wss[1]]})
	out, code := terraform(t, dup.dir, "plan", "-no-color")
	if code == 0 {
		t.Errorf("plan of a second workspace declaring %s on cluster %s succeeded, want it refused:\n%s", wss[1].name, wss[0].name, out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	if i := strings.Index(out, "Error:"); i >= 0 {
		t.Logf("plan of a second workspace on cluster %s declaring peer %s:\n%s", wss[0].name, wss[1].name, out[i:])
	}
	for _, want := range []string{"Object Already Exists", wss[1].spire.TrustDomain, `zerotrust-` + wss[0].name} {
		if !strings.Contains(flat, want) {
			t.Errorf("the refused plan of the second workspace does not say %q:\n%s", want, out)
		}
	}

	// 4. A fifth cluster joins.
	e := newWorkspace(t, "ws-e", false)
	e.setVars(t, peersOf(e, wss, published))
	start := time.Now()
	mustTerraform(t, e.dir, "apply", "-auto-approve", "-no-color")
	t.Logf("join: the new workspace's apply took %s", time.Since(start).Round(100*time.Millisecond))
	federation[e] = e.output(t, "federation")
	wss = append(wss, e)
	for _, w := range wss[:4] {
		w.setVars(t, peersOf(w, wss, published))
	}
	runConcurrently(t, "join (the four others add the fifth)", wss[:4], "apply", "-auto-approve", "-no-color")
	expectSpireHolds(ctx, t, "after the join", wss, func(w *workspace) []*workspace { return others(w, wss) })
	e.startWorkload(ctx, t, accept)
	expectHandshakes(ctx, t, wss, "after the fifth cluster joined")
	t.Logf("join: all 20 ordered pairs of the five handshook %s after the start of the new workspace's apply (its workload started after the applies)",
		time.Since(start).Round(100*time.Millisecond))
	for _, w := range wss {
		planEmpty(t, w.dir, "of workspace "+w.name+" after the join")
	}

	// 5. ws-d leaves: its peers' applies drop it from their ClusterSPIFFEIDs
	// and delete its bundle from their SPIRE servers.
	leaver := wss[3]
	stay := slices.DeleteFunc(slices.Clone(wss), func(w *workspace) bool { return w == leaver })
	for _, w := range stay {
		w.setVars(t, peersOf(w, stay, published))
	}
	runConcurrently(t, "leave (the peers drop "+leaver.name+")", stay, "apply", "-auto-approve", "-no-color")
	expectSpireHolds(ctx, t, "after "+leaver.name+" left", stay, func(w *workspace) []*workspace { return others(w, stay) })
	for _, w := range stay {
		w.expectState(t, wsNames(others(w, stay)), nil)
		expectPairsFail(ctx, t, w.workload, leaver.workload, leaver.name+" left")
	}
	expectHandshakes(ctx, t, stay, "after "+leaver.name+" left")
	for _, w := range stay {
		entries, err := w.spire.Entries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			if slices.Contains(en.FederatesWith, leaver.spire.TrustDomain) {
				t.Errorf("after %s left, entry %s (%s) on %s still federates with %s", leaver.name, en.ID, en.SPIFFEID, w.name, leaver.spire.TrustDomain)
			}
		}
	}
	out = mustTerraform(t, leaver.dir, "destroy", "-auto-approve", "-no-color")
	leaver.destroyed = true
	if strings.Contains(out, "Peer Bundle Not Deleted") {
		t.Errorf("destroy of workspace %s could not delete a peer's bundle:\n%s", leaver.name, out)
	}
	expectSpireHolds(ctx, t, "after "+leaver.name+"'s destroy", []*workspace{leaver}, func(*workspace) []*workspace { return nil })
	if left := cftdNames(t, leaver.cluster); len(left) != 0 {
		t.Errorf("destroy of workspace %s left ClusterFederatedTrustDomains: %v", leaver.name, left)
	}
}

// TestAccModuleClusterWorkspaceTerraformTest runs the cluster-workspace
// module's own `terraform test` (examples/modules/cluster-workspace/tests),
// whose provider is mocked: which peers wait, which are federated with
// which profile, which the workloads' ClusterSPIFFEID federates with, the
// shape of the `federation` output, the refusals, and the health check's
// warning when the federation status reports a problem.
func TestAccModuleClusterWorkspaceTerraformTest(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(copyExamples(t, "modules"), "modules", "cluster-workspace")
	out, code := terraform(t, dir, "test", "-no-color")
	t.Logf("terraform test:\n%s", out)
	if code != 0 {
		t.Fatalf("terraform test exited %d", code)
	}
	if !strings.Contains(out, "Success! 8 passed, 0 failed.") {
		t.Fatalf("terraform test did not report all eight runs passing")
	}
}

// moduleWorkloadLabel is the cluster-workspace module's workload_label
// default: its ClusterSPIFFEID selects the pods that carry it.
const moduleWorkloadLabel = "zerotrust.example/workload"
