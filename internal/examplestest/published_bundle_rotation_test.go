package examplestest

// The published-bundle mesh's rotations and the object storage's outage
// (TestAccPublishedBundleFederation's subtests): what SPIRE moves on its
// own, without an apply.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// east's workload, its SPIRE server, and the pairs involving it.
func (m *publishedMesh) east() (*harness.Spire, *harness.Workload) {
	return m.spires[east], m.workloads[east]
}

func (m *publishedMesh) pairsWithEast() []pairResult {
	var pairs []pairResult
	for _, p := range orderedPairs(m.workloads) {
		if p.from == m.workloads[east] || p.to == m.workloads[east] {
			pairs = append(pairs, p)
		}
	}
	return pairs
}

// peersHold reports whether every peer's SPIRE server and workload holds
// (want true) or no longer holds (want false) authority in east's bundle.
func (m *publishedMesh) peersHold(ctx context.Context, authority string, want bool) (bool, string) {
	return peersHold(ctx, m.spires, m.workloads, east, authority, want)
}

// waitSVIDFrom waits until workload w (named who) holds an SVID of
// authority.
func waitSVIDFrom(t *testing.T, who string, w *harness.Workload, authority string) {
	t.Helper()
	waitFor(t, who+" to hold an SVID of "+authority, rotationSVIDTTL+propagationTimeout, func(ctx context.Context) (bool, string) {
		v, err := w.Show(ctx)
		if err != nil {
			return false, err.Error()
		}
		return v.SVIDAuthority == authority, "SVID of " + v.SVIDAuthority
	})
}

// rotateInAHurry is a forced rotation of s's X.509 CA: prepare, activate
// as soon as s's own workload w holds the prepared authority (its agent
// must sync it before the server's SVIDs move to it, see forceRotation in
// rotation_test.go), and taint the authority of w's SVID, without waiting
// for any peer.
func rotateInAHurry(t *testing.T, s *harness.Spire, w *harness.Workload) (prepared string, preparedAt, taintedAt time.Time) {
	t.Helper()
	ctx := context.Background()
	v, err := w.Show(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if prepared, err = s.PrepareX509Authority(ctx); err != nil {
		t.Fatal(err)
	}
	preparedAt = time.Now()
	waitHoldsAuthority(t, s.TrustDomain+"'s own workload", w, s.TrustDomain, prepared)
	if err := s.ActivateX509Authority(ctx, prepared); err != nil {
		t.Fatal(err)
	}
	if err := s.TaintX509Authority(ctx, v.SVIDAuthority); err != nil {
		t.Fatal(err)
	}
	return prepared, preparedAt, time.Now()
}

func (m *publishedMesh) eastAuthority(t *testing.T) string {
	t.Helper()
	_, w := m.east()
	v, err := w.Show(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v.SVIDAuthority
}

// scheduledRotation rotates east's CA as SPIRE's CA manager does on its own,
// with nothing but SPIRE moving the bundle: no apply.
func (m *publishedMesh) scheduledRotation(t *testing.T) {
	ctx := context.Background()
	s, _ := m.east()
	old := m.eastAuthority(t)
	p := startProber(t, m.pairsWithEast())
	start := time.Now()
	prepared, err := s.PrepareX509Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held := waitFor(t, "the peers to hold the prepared authority from the object", propagationTimeout,
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
	dropped := waitFor(t, "the peers to drop the revoked authority", propagationTimeout,
		func(ctx context.Context) (bool, string) { return m.peersHold(ctx, old, false) })
	rounds, attempts, failures := p.stop()
	t.Logf("scheduled rotation of %s through the published bundle, no apply: %v from prepare until the peers dropped the old authority "+
		"(peers held the prepared one after %v, dropped the revoked one %v after revoke; refresh_hint %v, a poll every %v); "+
		"%d handshakes in %d rounds, %d failed", s.TrustDomain, time.Since(start).Round(100*time.Millisecond), held, dropped,
		publishedRefreshHint, publishedRefreshHint/4, attempts, rounds, len(failures))
	if attempts == 0 {
		t.Fatal("the prober ran no handshake")
	}
	for _, f := range failures {
		t.Errorf("handshake failed during the scheduled rotation: +%v %s -> %s: %s", f.at.Round(100*time.Millisecond), f.from, f.to, f.detail)
	}
	planEmpty(t, m.dir, "after the scheduled rotation")
}

// forcedRotation activates a prepared authority and taints the old one as
// soon as east's own agent holds it, without waiting for the peers: the
// pairs recover when the peers' next poll of the object brings it, with no
// apply.
func (m *publishedMesh) forcedRotation(t *testing.T) {
	ctx := context.Background()
	s, w := m.east()
	prepared, preparedAt, forcedAt := rotateInAHurry(t, s, w)
	// Probed every second from the taint: the failures say how long the
	// pairs involving east were broken.
	p := startProber(t, m.pairsWithEast())
	held := make(chan time.Duration, 1)
	go func() {
		for time.Since(forcedAt) < propagationTimeout {
			if ok, _ := m.peersHold(ctx, prepared, true); ok {
				held <- time.Since(preparedAt)
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
		held <- -1
	}()
	waitSVIDFrom(t, "east's workload", m.workloads[east], prepared)
	expectEveryPair(ctx, t, m.workloads, "after the forced rotation, without an apply")
	recovered := time.Since(forcedAt)
	peersAfter := <-held
	rounds, attempts, failures := p.stop()
	var lastFailure time.Duration
	for _, f := range failures {
		lastFailure = max(lastFailure, f.at)
	}
	t.Logf("forced rotation of %s (activate and taint %v after prepare), no apply: every one of %d pairs handshakes %v after the taint; "+
		"probing the pairs involving east every second from the taint, %d of %d handshakes in %d rounds failed, the last %v after the taint; "+
		"the peers held the new authority %v after prepare (refresh_hint %v: a poll every %v, at most one poll after the publish at prepare)",
		s.TrustDomain, forcedAt.Sub(preparedAt).Round(100*time.Millisecond), len(orderedPairs(m.workloads)),
		recovered.Round(100*time.Millisecond), len(failures), attempts, rounds, lastFailure.Round(100*time.Millisecond),
		peersAfter.Round(100*time.Millisecond), publishedRefreshHint, publishedRefreshHint/4)
	if peersAfter < 0 {
		t.Errorf("the peers did not hold east's new authority within %v", propagationTimeout)
	}
	planEmpty(t, m.dir, "after the forced rotation")
}

// bucketOutage stops the object storage for bucketDown while east prepares
// a new authority: SPIRE cannot publish it and the peers cannot poll, but
// they keep the bundles they hold, so every pair keeps handshaking. With
// the storage back, SPIRE's next publish (its 30 s timer) and the peers'
// next poll bring the prepared authority.
func (m *publishedMesh) bucketOutage(t *testing.T) {
	const bucketDown = 20 * time.Second
	ctx := context.Background()
	s, _ := m.east()
	publishFailed := func() int {
		return strings.Count(readLog(t, s.LogPath()), `level=error msg="Failed to publish bundle" BundlePublisher=aws_s3`)
	}
	pollsFailed := func() []int {
		var n []int
		for _, peer := range m.spires[1:] {
			n = append(n, strings.Count(readLog(t, peer.LogPath()), `msg="Error updating bundle"`))
		}
		return n
	}
	publishesBefore, pollsBefore := publishFailed(), pollsFailed()
	p := startProber(t, orderedPairs(m.workloads))
	if err := m.s3.StopServer(); err != nil {
		t.Fatal(err)
	}
	stoppedAt := time.Now()
	prepared, err := s.PrepareX509Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// What Terraform sees meanwhile: the configuration reads each published
	// object (zerotrust_trust_bundle's published source, timeout 10s), so
	// its plan fails, naming the store that does not answer, while SPIRE
	// goes on with the bundles it holds. Nothing is written.
	planStart := time.Now()
	out, code := terraform(t, m.dir, "plan", "-detailed-exitcode", "-no-color")
	t.Logf("terraform plan with the object storage down: exit %d in %v, %d x \"Trust Bundle Not Available\" (the object store does not answer)",
		code, time.Since(planStart).Round(100*time.Millisecond), strings.Count(out, "Error: Trust Bundle Not Available"))
	if code != 1 || !strings.Contains(out, "the object store does not answer") {
		t.Errorf("terraform plan with the object storage down exited %d, want 1 naming the store that does not answer:\n%s", code, out)
	}
	time.Sleep(bucketDown - time.Since(stoppedAt))
	publishFailures := publishFailed() - publishesBefore
	var pollFailures []string
	for i, n := range pollsFailed() {
		pollFailures = append(pollFailures, fmt.Sprintf("%s %d", m.spires[1+i].TrustDomain, n-pollsBefore[i]))
		if n == pollsBefore[i] {
			t.Errorf("%s logged no failed poll of %s's object while the object storage was down", m.spires[1+i].TrustDomain, s.TrustDomain)
		}
	}
	if ok, _ := m.peersHold(ctx, prepared, true); ok {
		t.Errorf("the peers hold east's authority prepared while the object storage was down")
	}
	if err := m.s3.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	backAt := time.Now()
	healed := waitFor(t, "the peers to hold the authority prepared during the outage", 2*propagationTimeout,
		func(ctx context.Context) (bool, string) { return m.peersHold(ctx, prepared, true) })
	rounds, attempts, failures := p.stop()
	t.Logf("object storage down %v while %s prepared an authority: %d failed publishes by %s, failed polls %v (SPIRE's logs); "+
		"%d handshakes of every pair in %d rounds, %d failed; the peers held the prepared authority %v after the storage was back",
		backAt.Sub(stoppedAt).Round(100*time.Millisecond), s.TrustDomain, publishFailures, s.TrustDomain, pollFailures,
		attempts, rounds, len(failures), healed)
	if publishFailures == 0 {
		t.Errorf("%s logged no failed publish while the object storage was down", s.TrustDomain)
	}
	for _, f := range failures {
		t.Errorf("handshake failed during the outage: +%v %s -> %s: %s", f.at.Round(100*time.Millisecond), f.from, f.to, f.detail)
	}
}

func readLog(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
