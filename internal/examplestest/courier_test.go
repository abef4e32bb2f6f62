package examplestest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// "When SPIRE servers cannot reach each other": examples/courier-federation
// on three clusters whose SPIRE servers serve no bundle endpoint, with real
// SPIRE servers, agents and workloads. Terraform carries every bundle. The
// fleet is mixed: cwwest's SPIRE is laid out as the SPIFFE Helm chart does,
// the others' as the OpenShift operator does.

// courierMesh is the three clusters, their SPIRE servers (east first, the
// one that rotates), workloads, and the example's directory.
type courierMesh struct {
	spires    []*harness.Spire
	workloads []*harness.Workload
	dir       string
	// podLabels, when set, is the example's workloads.pod_labels: the
	// apply then manages a ClusterSPIFFEID per cluster.
	podLabels map[string]string
}

// writeVars writes the example's clusters variable: each cluster's trust
// domain and kubeconfig, with kubeconfig[name] in place of the cluster's
// own where given, and spire_install = "helm" where SPIRE is laid out as
// the chart does.
func (m *courierMesh) writeVars(t *testing.T, kubeconfig map[string]string) {
	t.Helper()
	vars := map[string]any{}
	for _, s := range m.spires {
		path := s.Cluster.Kubeconfig
		if p, ok := kubeconfig[s.Cluster.Name]; ok {
			path = p
		}
		entry := map[string]string{"trust_domain": s.TrustDomain, "config_path": path, "config_context": s.Cluster.Name}
		if install := spireInstall(s); install != "" {
			entry["spire_install"] = install
		}
		vars[s.Cluster.Name] = entry
	}
	all := map[string]any{"clusters": vars}
	if m.podLabels != nil {
		all["workloads"] = map[string]any{"pod_labels": m.podLabels}
	}
	data, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.dir, "terraform.tfvars.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAccCourierFederation: one apply, and every workload pair of the three
// clusters handshakes; a scheduled rotation of east's X.509 CA with an apply
// between prepare and activate, while the pairs involving east handshake
// every second (failures counted, goal 0; the plan is empty after each
// apply); a forced rotation (activate and taint, no apply): the pairs
// involving east fail, the plan shows the update of east's bundle in both
// peers, and one apply restores every pair (timed); one cluster that does
// not answer while east prepares another authority: the plan warns once,
// naming it, keeps every bundle it holds and every copy of its own, and
// the apply carries east's bundle to the cluster that answers; the same
// cluster behind a listener that never answers: the plan and apply go on
// within the reachability bound; destroy,
// after which every pair fails.
func TestAccCourierFederation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := startCourierMesh(t, []string{"cweast", "cwwest", "cwnorth"}, "cwwest")

	t.Run("scheduled_rotation", func(t *testing.T) { m.scheduledRotation(t) })
	t.Run("forced_rotation", func(t *testing.T) { m.forcedRotation(t) })
	t.Run("cluster_unreachable", func(t *testing.T) { m.clusterUnreachable(t) })
	t.Run("cluster_silent", func(t *testing.T) { m.clusterSilent(t) })
	t.Run("destroy", func(t *testing.T) {
		start := time.Now()
		mustTerraform(t, m.dir, "destroy", "-auto-approve", "-no-color")
		t.Logf("destroy took %v", time.Since(start).Round(100*time.Millisecond))
		failed := 0
		for _, r := range everyPair(ctx, m.workloads, false, mtlsTimeout) {
			if r.err != nil {
				t.Errorf("after destroy: %v", r.err)
				continue
			}
			failed++
		}
		t.Logf("after destroy, %d of %d pairs fail (%v after the destroy began)", failed, len(orderedPairs(m.workloads)),
			time.Since(start).Round(100*time.Millisecond))
	})
}

// startCourierMesh starts the clusters, SPIRE servers without bundle
// endpoints (laid out as the SPIFFE Helm chart does on the clusters helm
// names, as the OpenShift operator does on the others), an agent and
// workload per server, applies the example and waits until every ordered
// pair handshakes.
func startCourierMesh(t *testing.T, names []string, helm ...string) *courierMesh {
	t.Helper()
	ctx := context.Background()
	var clusters []*harness.Cluster
	for _, n := range names {
		clusters = append(clusters, acctest.OwnCluster(t, n))
	}
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	spires := startOwnSpires(startCtx, t, clusters, func(c *harness.Cluster) harness.SpireOptions {
		return harness.SpireOptions{TrustDomain: c.Name + ".zt.test", ControllerManager: true,
			X509SVIDTTL: rotationSVIDTTL, NoBundleEndpoint: true, Helm: slices.Contains(helm, c.Name)}
	})
	expectNoBundleEndpoints(t, spires)
	m := &courierMesh{spires: spires, workloads: startMeshWorkloads(ctx, t, spires)}
	m.dir = filepath.Join(copyExamples(t, "courier-federation"), "courier-federation")
	m.writeVars(t, nil)
	// The destroy subtest may have run already; a second destroy is a no-op.
	t.Cleanup(func() {
		if out, code := terraform(t, m.dir, "destroy", "-auto-approve", "-no-color"); code != 0 {
			t.Errorf("cleanup: terraform destroy exited %d:\n%s", code, out)
		}
	})
	start := time.Now()
	out := mustTerraform(t, m.dir, "apply", "-auto-approve", "-no-color")
	applied := time.Since(start)
	if !strings.Contains(out, "Resources: 6 added") {
		t.Errorf("the apply did not add the 6 bundles:\n%s", out)
	}
	// The example's check: every SPIRE server holds the bundles carried to it.
	if strings.Contains(out, "Check block assertion failed") {
		t.Errorf("the courier_healthy check failed after the apply:\n%s", out)
	}
	federateWorkloads(ctx, t, m.workloads, spires)
	expectEveryPair(ctx, t, m.workloads, "after the apply")
	t.Logf("courier mesh of %v: apply %v, every one of %d pairs handshakes %v after the apply began",
		names, applied.Round(100*time.Millisecond), len(orderedPairs(m.workloads)), time.Since(start).Round(100*time.Millisecond))
	planEmpty(t, m.dir, "after the first apply")
	// What a scheduled drift job runs: nothing changed, so exit 0.
	if out, code := terraform(t, m.dir, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Errorf("terraform plan -detailed-exitcode on the converged courier fleet exited %d, want 0:\n%s", code, out)
	} else {
		t.Logf("terraform plan -detailed-exitcode on the converged courier fleet: exit 0")
	}
	return m
}

// apply runs the example's apply and returns how long it took.
func (m *courierMesh) apply(t *testing.T, when string) time.Duration {
	t.Helper()
	start := time.Now()
	mustTerraform(t, m.dir, "apply", "-auto-approve", "-no-color")
	took := time.Since(start)
	t.Logf("apply %s: %v", when, took.Round(100*time.Millisecond))
	return took
}

// peersHold reports whether every other workload holds (want true) or no
// longer holds (want false) authority in its bundle of east's trust domain.
func (m *courierMesh) peersHold(ctx context.Context, authority string, want bool) (bool, string) {
	td := m.spires[east].TrustDomain
	var waiting []string
	for j, w := range m.workloads {
		if j == east {
			continue
		}
		v, err := w.Show(ctx)
		if err != nil {
			waiting = append(waiting, err.Error())
		} else if slices.Contains(v.Bundles[td], authority) != want {
			waiting = append(waiting, fmt.Sprintf("workload %s holds %v", v.SPIFFEID, v.Bundles[td]))
		}
	}
	return len(waiting) == 0, strings.Join(waiting, "; ")
}

// pairsWithEast lists the ordered pairs involving east's workload.
func (m *courierMesh) pairsWithEast() []pairResult {
	var pairs []pairResult
	for _, p := range orderedPairs(m.workloads) {
		if p.from == m.workloads[east] || p.to == m.workloads[east] {
			pairs = append(pairs, p)
		}
	}
	return pairs
}

// eastAuthority is the authority that signed east's workload SVID.
func (m *courierMesh) eastAuthority(t *testing.T) string {
	t.Helper()
	v, err := m.workloads[east].Show(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v.SVIDAuthority
}

// scheduledRotation rotates east's CA as SPIRE's CA manager does on its own,
// with the apply a schedule would run between prepare and activate.
func (m *courierMesh) scheduledRotation(t *testing.T) {
	ctx := context.Background()
	s := m.spires[east]
	old := m.eastAuthority(t)
	p := startProber(t, m.pairsWithEast())
	start := time.Now()
	prepared, err := s.PrepareX509Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m.expectEastBundleUpdates(t, "after prepare")
	m.expectEastCarried(t, "after prepare", true)
	m.apply(t, "after prepare")
	planEmpty(t, m.dir, "after the apply that carried the prepared authority")
	m.expectEastCarried(t, "after the apply that carried the prepared authority", false)
	waitFor(t, "the peers' workloads to hold the prepared authority", propagationTimeout,
		func(ctx context.Context) (bool, string) { return m.peersHold(ctx, prepared, true) })
	if err := s.ActivateX509Authority(ctx, prepared); err != nil {
		t.Fatal(err)
	}
	waitSVIDFrom(t, "east's workload", m.workloads[east], prepared)
	if err := s.TaintX509Authority(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeX509Authority(ctx, old); err != nil {
		t.Fatal(err)
	}
	m.apply(t, "after revoke")
	planEmpty(t, m.dir, "after the apply that carried the revocation")
	waitFor(t, "the peers' workloads to drop the revoked authority", propagationTimeout,
		func(ctx context.Context) (bool, string) { return m.peersHold(ctx, old, false) })
	took := time.Since(start)
	rounds, attempts, failures := p.stop()
	t.Logf("scheduled rotation of %s carried by Terraform: %v from prepare until the peers dropped the old authority; "+
		"%d handshakes in %d rounds, %d failed", s.TrustDomain, took.Round(100*time.Millisecond), attempts, rounds, len(failures))
	if attempts == 0 {
		t.Fatal("the prober ran no handshake")
	}
	if len(failures) > 0 {
		var b strings.Builder
		for _, f := range failures {
			fmt.Fprintf(&b, "\n  +%v %s -> %s: %s", f.at.Round(100*time.Millisecond), f.from, f.to, f.detail)
		}
		t.Errorf("%d of %d handshakes failed during the scheduled rotation:%s", len(failures), attempts, b.String())
	}
}

// forcedRotation activates a prepared authority and taints the old one
// without an apply in between: the peers never saw the new authority.
func (m *courierMesh) forcedRotation(t *testing.T) {
	ctx := context.Background()
	s := m.spires[east]
	prepared, _, _ := rotateInAHurry(t, s, m.workloads[east])
	waitSVIDFrom(t, "east's workload", m.workloads[east], prepared)
	// The pairs involving east fail, the others keep working.
	failing := 0
	for _, p := range orderedPairs(m.workloads) {
		involvesEast := p.from == m.workloads[east] || p.to == m.workloads[east]
		detail, err := harness.WaitMTLS(ctx, p.from, p.to, !involvesEast, 20*time.Second)
		if err != nil {
			t.Errorf("after the forced rotation, %s -> %s: %v (want ok=%v)", p.from.SPIFFEID, p.to.SPIFFEID, err, !involvesEast)
			continue
		}
		if involvesEast {
			failing++
			t.Logf("after the forced rotation, %s -> %s fails: %s", p.from.SPIFFEID, p.to.SPIFFEID, detail)
		}
	}
	t.Logf("after the forced rotation %d of %d pairs fail", failing, len(orderedPairs(m.workloads)))

	m.expectEastBundleUpdates(t, "after the forced rotation")

	start := time.Now()
	applied := m.apply(t, "after the forced rotation")
	expectEveryPair(ctx, t, m.workloads, "after the apply that healed the forced rotation")
	t.Logf("forced rotation healed: apply %v, every pair handshakes %v after the apply began",
		applied.Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond))
	planEmpty(t, m.dir, "after the healing apply")
}

// expectEastBundleUpdates checks that the plan updates east's bundle in
// each peer's SPIRE server, and changes nothing else.
func (m *courierMesh) expectEastBundleUpdates(t *testing.T, when string) {
	t.Helper()
	var want []string
	for _, peer := range m.spires[1:] {
		want = append(want, fmt.Sprintf("zerotrust_spire_bundle.peer[%q]: update", peer.Cluster.Name+"->"+m.spires[east].Cluster.Name))
	}
	slices.Sort(want)
	if changes := plannedChanges(t, m.dir); !slices.Equal(changes, want) {
		t.Errorf("the plan %s changes %v, want %v", when, changes, want)
	}
}

// plannedChanges plans dir and lists the resource changes other than no-op,
// as "<address>: <actions>", sorted.
func plannedChanges(t *testing.T, dir string) []string {
	t.Helper()
	changes, _ := plannedChangesAndOutput(t, dir)
	return changes
}

// plannedChangesAndOutput is plannedChanges with the plan's output.
func plannedChangesAndOutput(t *testing.T, dir string) ([]string, string) {
	t.Helper()
	out, code := terraform(t, dir, "plan", "-detailed-exitcode", "-no-color", "-out=courier.tfplan")
	if code != 0 && code != 2 {
		t.Fatalf("plan failed (exit %d):\n%s", code, out)
	}
	var plan struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(mustTerraform(t, dir, "show", "-json", "courier.tfplan")), &plan); err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, rc := range plan.ResourceChanges {
		if actions := strings.Join(rc.Change.Actions, ","); actions != "no-op" && actions != "read" {
			changes = append(changes, rc.Address+": "+actions)
		}
	}
	slices.Sort(changes)
	return changes, out
}

// readStatus reads zerotrust_federation_status of the mesh directly, naming
// every bundle the example carries, so that the test asserts its attributes
// rather than the example's check message.
func (m *courierMesh) readStatus(t *testing.T) federationStatus {
	t.Helper()
	var carried strings.Builder
	for _, s := range m.spires {
		for _, peer := range m.spires {
			if peer != s {
				fmt.Fprintf(&carried, "    { cluster = %q, trust_domain = %q },\n", s.Cluster.Name, peer.TrustDomain)
			}
		}
	}
	return readFederationStatus(t, writeStatusConfig(t, m.spires, "  check_endpoints = false\n  carried_bundles = [\n"+carried.String()+"  ]\n"))
}

// expectEastCarried checks how the status compares east's bundle, as each
// peer's SPIRE server holds it, with the bundle east's own SPIRE server
// publishes: behind (with east's scheduled activation still ahead) or
// matching, and the status ok exactly when it matches.
func (m *courierMesh) expectEastCarried(t *testing.T, when string, behind bool) {
	t.Helper()
	status := m.readStatus(t)
	want := "matches"
	if behind {
		want = "behind"
	}
	seen := 0
	for _, f := range status.Federations {
		if f.TrustDomain != m.spires[east].TrustDomain {
			continue
		}
		seen++
		if f.PeerComparison == nil || *f.PeerComparison != want || f.CarriedBehind == nil || *f.CarriedBehind != behind {
			t.Errorf("%s, %s holds east's bundle: peer_comparison %v, carried_behind %v; want %s", when, f.Cluster,
				deref(f.PeerComparison), deref(f.CarriedBehind), want)
		}
		if f.PeerActivatesAt == nil {
			t.Errorf("%s, %s: peer_activates_at is null", when, f.Cluster)
			continue
		}
		at, err := time.Parse(time.RFC3339, *f.PeerActivatesAt)
		if err != nil || !at.After(time.Now()) {
			t.Errorf("%s, %s: peer_activates_at %s is not in the future (%v)", when, f.Cluster, *f.PeerActivatesAt, err)
		}
	}
	if seen != len(m.spires)-1 {
		t.Errorf("%s, the status lists east's bundle on %d clusters, want %d: %+v", when, seen, len(m.spires)-1, status.Federations)
	}
	switch {
	case behind && (status.OK || !slices.ContainsFunc(status.Problems, func(p string) bool {
		return strings.Contains(p, "is behind") && strings.Contains(p, "apply before then")
	})):
		t.Errorf("%s, the status is ok=%v without a problem saying east's bundle is behind: %q", when, status.OK, status.Problems)
	case !behind && !status.OK:
		t.Errorf("%s, the status is not ok: %q", when, status.Problems)
	}
	if behind && len(status.Problems) > 0 {
		t.Logf("%s, the status reports: %s", when, strings.Join(status.Problems, "\n"))
	}
}
