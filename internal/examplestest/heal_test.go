package examplestest

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// healMesh is examples/n-cluster-mesh applied to clusters of its own, each
// with a k8s_psat agent and a pod workload whose registration entry comes
// from a ClusterSPIFFEID federating with every peer, as in real clusters.
type healMesh struct {
	t         *testing.T
	dir       string
	clusters  []*harness.Cluster
	spires    []*harness.Spire
	workloads []*harness.Workload
}

const healTemplate = "spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}"

func startHealMesh(ctx context.Context, t *testing.T, names []string) *healMesh {
	t.Helper()
	m := &healMesh{t: t}
	for _, n := range names {
		m.clusters = append(m.clusters, acctest.OwnCluster(t, n))
		m.spires = append(m.spires, acctest.Spire(t, n))
	}
	start := time.Now()
	m.dir = applyMeshExample(t, m.clusters, m.spires).dir
	t.Logf("apply of the mesh: %s", time.Since(start).Round(time.Millisecond))

	// SPIRE refuses entries that federate with a trust domain whose bundle it
	// lacks, so the workloads come after the apply, as a platform team's
	// ClusterSPIFFEIDs would be applied after the federation.
	for i, s := range m.spires {
		applyWebClusterSPIFFEID(ctx, t, s, peerTrustDomains(m.spires, i))
		m.workloads = append(m.workloads, m.startWorkload(ctx, i, "node", "web-0"))
	}
	m.expectAllPairs(ctx, "after the apply")
	return m
}

// startWorkload starts a k8s_psat agent named agent on cluster i and a pod
// workload pod on it that accepts every peer trust domain's workloads.
func (m *healMesh) startWorkload(ctx context.Context, i int, agent, pod string) *harness.Workload {
	m.t.Helper()
	return startWebWorkload(ctx, m.t, m.spires[i], agent, pod, peerTrustDomains(m.spires, i))
}

// expectAllPairs fails the test unless every ordered pair handshakes.
func (m *healMesh) expectAllPairs(ctx context.Context, when string) {
	m.t.Helper()
	expectEveryPair(ctx, m.t, m.workloads, when)
}

// timeToHeal runs `terraform apply` and measures from its start until every
// ordered pair handshakes again.
func (m *healMesh) timeToHeal(ctx context.Context) (apply, heal time.Duration) {
	m.t.Helper()
	start := time.Now()
	mustTerraform(m.t, m.dir, "apply", "-auto-approve", "-no-color")
	apply = time.Since(start)
	m.expectAllPairs(ctx, "after the repairing apply")
	return apply, time.Since(start)
}

// planShows runs `terraform plan` and requires a change plan whose output
// matches every pattern; it returns the output.
func (m *healMesh) planShows(patterns ...string) string {
	m.t.Helper()
	out, code := terraform(m.t, m.dir, "plan", "-no-color", "-detailed-exitcode")
	if code != 2 {
		m.t.Fatalf("terraform plan exited %d, want 2 (changes):\n%s", code, out)
	}
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(out) {
			m.t.Errorf("the plan does not match %q:\n%s", p, out)
		}
	}
	return out
}

// expectPairsFail waits until from and to fail to handshake both ways.
func expectPairsFail(ctx context.Context, t *testing.T, a, b *harness.Workload, when string) {
	t.Helper()
	for _, p := range [][2]*harness.Workload{{a, b}, {b, a}} {
		detail, err := harness.WaitMTLS(ctx, p[0], p[1], false, mtlsTimeout)
		if err != nil {
			t.Fatalf("%s: %s -> %s still handshakes: %v", when, p[0].SPIFFEID, p[1].SPIFFEID, err)
		}
		t.Logf("%s, %s -> %s: %s", when, p[0].SPIFFEID, p[1].SPIFFEID, detail)
	}
}

// planExcerpt keeps the lines of a plan that say what changes, and the
// provider's warnings about SPIRE.
func planExcerpt(out string) string {
	var keep []string
	warning := 0
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Warning: SPIRE"):
			warning = 12
		case strings.HasPrefix(l, "Warning:"):
			warning = 0
		}
		if warning > 0 || strings.Contains(l, "# zerotrust_") || strings.Contains(l, "spire_trust") || strings.HasPrefix(l, "Plan:") {
			keep = append(keep, l)
		}
		if warning > 0 {
			warning--
		}
	}
	return strings.Join(keep, "\n")
}

// TestAccExampleTrustHeals: cases 3 and 4 of "trust that stays true" on
// examples/n-cluster-mesh with three clusters whose workloads' entries come
// from ClusterSPIFFEIDs.
//
//  1. A lost bundle: east's SPIRE server loses north's bundle (`bundle delete
//     -mode dissociate`, as a datastore restore or a mistake would).
//     spire-controller-manager cannot re-seed it, nor put north back into its
//     entries (SPIRE refuses an entry federating with a trust domain it holds
//     no bundle of). mTLS east<->north fails. The plan shows
//     `spire_trust = "bundle_missing" -> "federated"`; one apply seeds the
//     bundle and every pair handshakes again.
//  2. A rebuilt cluster: north's SPIRE server starts again with an empty
//     datastore (new CA, same trust domain); its agent re-attests, its
//     workload gets an SVID of the new CA. East and west hold north's old
//     bundle, which cannot authenticate north's endpoint any more. The plan
//     shows `"bundle_stale" -> "federated"` on their objects for north; one
//     apply restores trust in both directions.
func TestAccExampleTrustHeals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := startHealMesh(ctx, t, []string{"heast", "hwest", "hnorth"})
	east, north := 0, 2

	// 1. Lost bundle.
	if _, err := m.spires[east].CLI(ctx, "bundle", "delete", "-id", "spiffe://"+m.spires[north].TrustDomain, "-mode", "dissociate"); err != nil {
		t.Fatal(err)
	}
	expectPairsFail(ctx, t, m.workloads[east], m.workloads[north], "bundle lost")
	out := m.planShows(
		`spire_trust\s+= "bundle_missing" -> "federated"`,
		`Plan: 0 to add, 1 to change, 0 to destroy`,
		`SPIRE Federation Will Be Repaired`,
	)
	t.Logf("plan after east lost north's bundle:\n%s", planExcerpt(out))
	apply, heal := m.timeToHeal(ctx)
	t.Logf("lost bundle: the repairing apply took %s; every pair handshakes %s after it started", apply.Round(time.Millisecond), heal.Round(time.Millisecond))
	planEmpty(t, m.dir, "after the lost bundle was repaired")

	// 2. Rebuilt cluster.
	if err := m.spires[north].Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	// The old agent's SVID is of the old CA: a rebuilt node runs a new
	// agent, which attests afresh (k8s_psat), and its pod a new workload.
	if err := m.workloads[north].Stop(); err != nil {
		t.Fatal(err)
	}
	if err := m.workloads[north].Agent.Stop(); err != nil {
		t.Fatal(err)
	}
	m.workloads[north] = m.startWorkload(ctx, north, "node-rebuilt", "web-1")
	for i := range m.workloads {
		if i != north {
			expectPairsFail(ctx, t, m.workloads[i], m.workloads[north], "north rebuilt")
		}
	}
	out = m.planShows(
		`spire_trust\s+= "bundle_stale" -> "federated"`,
		`Plan: 0 to add, 2 to change, 0 to destroy`,
	)
	t.Logf("plan after north was rebuilt:\n%s", planExcerpt(out))
	apply, heal = m.timeToHeal(ctx)
	t.Logf("rebuilt cluster: the repairing apply took %s; every pair handshakes %s after it started", apply.Round(time.Millisecond), heal.Round(time.Millisecond))
	planEmpty(t, m.dir, "after the rebuilt cluster was federated again")
}
