package examplestest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/federation"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// "Rotation without an outage": an X.509 CA rotation in one cluster of a
// mesh federated by examples/n-cluster-mesh, with real SPIRE servers,
// agents and workloads, seen by the workloads of the other clusters.

const (
	// rotationRefreshHint is the refresh hint the SPIRE servers of the
	// scheduled rotation serve: the shortest SPIRE honours
	// (bundleutil.MinimumRefreshHint), so peers poll every 15 s (a quarter
	// of it) instead of every 75 s. The forced rotation keeps SPIRE's 5 min
	// default: it must finish between two polls of the peers.
	rotationRefreshHint = time.Minute
	// rotationSVIDTTL: SVIDs renew at half their lifetime, so after
	// `activate` every SVID (workloads', agents', the bundle endpoint's) is
	// signed by the new authority within about 30 s instead of 30 min.
	rotationSVIDTTL = time.Minute
	// propagationTimeout bounds how long a bundle change takes to reach the
	// peers' SPIRE servers (one 15 s poll) and their workloads (agent sync,
	// 5 s), with room for a loaded machine.
	propagationTimeout = 90 * time.Second
	// east is the index of the rotating cluster in a rotationMesh.
	east = 0
)

// rotationMesh is three clusters of the test's own, each with a SPIRE
// server tuned for fast rotation (see rotationRefreshHint and
// rotationSVIDTTL), spire-controller-manager, an agent and a workload, and
// examples/n-cluster-mesh applied to them.
type rotationMesh struct {
	clusters  []*harness.Cluster
	spires    []*harness.Spire
	workloads []*harness.Workload
	example   *meshExample
	// status is a configuration reading zerotrust_federation_status.
	status string
}

// startRotationMesh starts the mesh and waits until every ordered pair of
// workloads completes a handshake.
func startRotationMesh(t *testing.T, refreshHint time.Duration, names ...string) *rotationMesh {
	t.Helper()
	ctx := context.Background()
	began := time.Now()
	m := &rotationMesh{}
	for _, n := range names {
		m.clusters = append(m.clusters, acctest.OwnCluster(t, n))
	}
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	// Servers of the test's own: acctest.Spire's are shared and must not
	// rotate, and they keep SPIRE's slow defaults.
	spires := startOwnSpires(startCtx, t, m.clusters, func(c *harness.Cluster) harness.SpireOptions {
		return harness.SpireOptions{
			TrustDomain: c.Name + ".zt.test", ControllerManager: true,
			FederationRefreshHint: refreshHint, X509SVIDTTL: rotationSVIDTTL,
		}
	})
	m.spires = spires
	m.workloads = startMeshWorkloads(ctx, t, spires)
	m.example = applyMeshExample(t, m.clusters, spires)
	m.status = writeStatusConfig(t, spires, "")
	federateWorkloads(ctx, t, m.workloads, spires)
	expectEveryPair(ctx, t, m.workloads, "after the apply")
	t.Logf("mesh of %v up, every pair handshakes: %v", names, time.Since(began).Round(time.Second))
	return m
}

// pairsWith lists the ordered pairs of workloads that involve the i-th, in
// both directions.
func (m *rotationMesh) pairsWith(i int) []pairResult {
	var pairs []pairResult
	for _, p := range orderedPairs(m.workloads) {
		if p.from == m.workloads[i] || p.to == m.workloads[i] {
			pairs = append(pairs, p)
		}
	}
	return pairs
}

// peersHold reports whether every other cluster's SPIRE server and workload
// holds (want true) or no longer holds (want false) authority in the bundle
// of the i-th cluster's trust domain; pending names those that do not yet.
func (m *rotationMesh) peersHold(ctx context.Context, i int, authority string, want bool) (done bool, pending string) {
	return peersHold(ctx, m.spires, m.workloads, i, authority, want)
}

// peersHold reports whether the SPIRE server and workload of every cluster
// but the i-th (spires and workloads by cluster) hold (want true) or no
// longer hold (want false) authority in the bundle of the i-th cluster's
// trust domain; pending names those that do not yet.
func peersHold(ctx context.Context, spires []*harness.Spire, workloads []*harness.Workload, i int, authority string, want bool) (done bool, pending string) {
	td := spires[i].TrustDomain
	var waiting []string
	for j, s := range spires {
		if j == i {
			continue
		}
		auths, err := s.BundleX509Authorities(ctx, td)
		if err != nil {
			waiting = append(waiting, err.Error())
		} else if slices.ContainsFunc(auths, func(a harness.X509Authority) bool { return a.ID == authority }) != want {
			waiting = append(waiting, fmt.Sprintf("SPIRE %s holds %v", s.TrustDomain, auths))
		}
		v, err := workloads[j].Show(ctx)
		if err != nil {
			waiting = append(waiting, err.Error())
		} else if slices.Contains(v.Bundles[td], authority) != want {
			waiting = append(waiting, fmt.Sprintf("workload %s holds %v", v.SPIFFEID, v.Bundles[td]))
		}
	}
	return len(waiting) == 0, strings.Join(waiting, "; ")
}

// waitFor polls cond every second until it is done or timeout passes, which
// fails the test; it logs and returns how long it took.
// waitHoldsAuthority waits until workload w (named who) holds authority in
// its bundle of td: what a rotation's local agent must have synced before
// the server's SVID moves to a prepared authority.
func waitHoldsAuthority(t *testing.T, who string, w *harness.Workload, td, authority string) {
	t.Helper()
	waitFor(t, who+" to hold the prepared authority", propagationTimeout, func(ctx context.Context) (bool, string) {
		v, err := w.Show(ctx)
		if err != nil {
			return false, err.Error()
		}
		return slices.Contains(v.Bundles[td], authority), fmt.Sprintf("holds %v", v.Bundles[td])
	})
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func(context.Context) (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		var done bool
		done, last = cond(ctx)
		return done, nil
	})
	took := time.Since(start).Round(100 * time.Millisecond)
	if err != nil {
		t.Fatalf("waited %v for %s; still: %s", took, what, last)
	}
	t.Logf("waited %v for %s", took, what)
	return took
}

// planEmpty plans the example and fails the test (without stopping it)
// when the plan changes any resource or reads any data source at apply:
// the examples read their health data sources outside their check blocks
// (at plan time once nothing they depend on changes), so a converged plan
// has no change at all and `-detailed-exitcode` exits 0. Output changes
// (a rotated bundle's fingerprints) are logged, not failed, with the
// checks' warnings, which name the transient state.
func planEmpty(t *testing.T, dir, when string) {
	t.Helper()
	start := time.Now()
	out, code := terraform(t, dir, "plan", "-detailed-exitcode", "-no-color", "-out=rotation.tfplan")
	t.Logf("plan %s: exit %d in %v", when, code, time.Since(start).Round(100*time.Millisecond))
	if code != 0 && code != 2 {
		t.Errorf("plan %s failed (exit %d):\n%s", when, code, out)
		return
	}
	var plan struct {
		ResourceChanges []struct {
			Address      string `json:"address"`
			ActionReason string `json:"action_reason"`
			Change       struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
		OutputChanges map[string]struct {
			Actions []string        `json:"actions"`
			Before  json.RawMessage `json:"before"`
			After   json.RawMessage `json:"after"`
		} `json:"output_changes"`
	}
	if err := json.Unmarshal([]byte(mustTerraform(t, dir, "show", "-json", "rotation.tfplan")), &plan); err != nil {
		t.Fatalf("show -json of the plan %s: %v", when, err)
	}
	for _, rc := range plan.ResourceChanges {
		actions := strings.Join(rc.Change.Actions, ",")
		if actions == "no-op" {
			continue
		}
		t.Errorf("plan %s changes %s: %s (%s)", when, rc.Address, actions, rc.ActionReason)
	}
	for name, oc := range plan.OutputChanges {
		if actions := strings.Join(oc.Actions, ","); actions != "no-op" {
			t.Logf("plan %s changes output %s (%s): %s -> %s", when, name, actions, oc.Before, oc.After)
		}
	}
	if i := strings.Index(out, "Warning: Check block assertion failed"); i >= 0 {
		t.Logf("plan %s warns:\n%s", when, out[i:])
	}
}

// handshake is one failed mTLS attempt.
type handshake struct {
	at       time.Duration // since the prober started
	from, to string
	detail   string
}

// prober runs, about every second until stop, one handshake for each of its
// pairs (concurrently) and keeps the failures.
type prober struct {
	start    time.Time
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once

	mu       sync.Mutex
	rounds   int
	attempts int
	failures []handshake
}

func startProber(t *testing.T, pairs []pairResult) *prober {
	ctx, cancel := context.WithCancel(context.Background())
	p := &prober{start: time.Now(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for ctx.Err() == nil {
			// A round in flight finishes even when stopped: a handshake cut
			// off by the test is no failure of the mesh.
			p.round(context.WithoutCancel(ctx), pairs)
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { p.stop() })
	return p
}

func (p *prober) round(ctx context.Context, pairs []pairResult) {
	var wg sync.WaitGroup
	for _, pair := range pairs {
		wg.Go(func() {
			at := time.Since(p.start)
			ok, detail := harness.CheckMTLS(ctx, pair.from, pair.to)
			p.mu.Lock()
			defer p.mu.Unlock()
			p.attempts++
			if !ok {
				p.failures = append(p.failures, handshake{at: at, from: pair.from.SPIFFEID, to: pair.to.SPIFFEID, detail: detail})
			}
		})
	}
	wg.Wait()
	p.mu.Lock()
	p.rounds++
	p.mu.Unlock()
}

// stop ends the probing after the round in flight.
func (p *prober) stop() (rounds, attempts int, failures []handshake) {
	p.stopOnce.Do(func() {
		p.cancel()
		<-p.done
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rounds, p.attempts, slices.Clone(p.failures)
}

// TestAccRotationScheduled rotates east's X.509 CA the way it is meant to be
// done, while every workload pair involving east handshakes about every
// second: prepare, wait until every peer's SPIRE server and workload holds
// the new authority, activate, wait until east's workload SVID is signed by
// it, taint and revoke the old authority, wait until the peers drop it. Not
// one handshake may fail, and the example's plan stays empty after every
// step.
func TestAccRotationScheduled(t *testing.T) {
	t.Parallel()
	m := startRotationMesh(t, rotationRefreshHint, "rseast", "rswest", "rsnorth")
	ctx := context.Background()
	eastSpire, eastApp := m.spires[east], m.workloads[east]
	planEmpty(t, m.example.dir, "before the rotation")
	before, err := eastApp.Show(ctx)
	if err != nil {
		t.Fatal(err)
	}
	old := before.SVIDAuthority

	p := startProber(t, m.pairsWith(east))
	start := time.Now()
	prepared, err := eastSpire.PrepareX509Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prepared authority %s (active: %s)", prepared, old)
	status := readFederationStatus(t, m.status)
	t.Logf("federation status right after prepare: ok=%v, problems:\n%s", status.OK, strings.Join(status.Problems, "\n"))
	waitFor(t, "every peer's SPIRE server and workload to hold the prepared authority", propagationTimeout,
		func(ctx context.Context) (bool, string) { return m.peersHold(ctx, east, prepared, true) })
	planEmpty(t, m.example.dir, "after prepare")

	if err := eastSpire.ActivateX509Authority(ctx, prepared); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "east's workload SVID to be signed by the new authority", rotationSVIDTTL+propagationTimeout,
		func(ctx context.Context) (bool, string) {
			v, err := eastApp.Show(ctx)
			if err != nil {
				return false, err.Error()
			}
			return v.SVIDAuthority == prepared, "signed by " + v.SVIDAuthority
		})
	planEmpty(t, m.example.dir, "after activate")

	if err := eastSpire.TaintX509Authority(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := eastSpire.RevokeX509Authority(ctx, old); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every peer's SPIRE server and workload to drop the revoked authority", propagationTimeout,
		func(ctx context.Context) (bool, string) { return m.peersHold(ctx, east, old, false) })
	planEmpty(t, m.example.dir, "after revoke")
	took := time.Since(start)

	rounds, attempts, failures := p.stop()
	t.Logf("scheduled rotation of %s: %v from prepare until every peer dropped the old authority; %d handshakes in %d rounds, %d failed",
		eastSpire.TrustDomain, took.Round(100*time.Millisecond), attempts, rounds, len(failures))
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

// healExpectation is what a strategy of TestAccRotationForced must achieve.
type healExpectation int

const (
	// reportOnly logs whether the pairs heal and asserts nothing about it.
	reportOnly healExpectation = iota
	expectHeal
	expectNoHeal
)

// forcedStrategy is what an operator does after a forced rotation.
type forcedStrategy struct {
	name string
	// run does it (nil: nothing).
	run func(m *rotationMesh, t *testing.T)
	// watch is how long the pairs may take to heal after run.
	watch  time.Duration
	expect healExpectation
}

// TestAccRotationForced rotates east's X.509 CA in a hurry: prepare,
// activate, taint and revoke the old authority back to back, before any
// peer refreshes east's bundle. Then the peers hold only the revoked
// authority: east's workloads and bundle endpoint present SVIDs they cannot
// verify, and with https_spiffe the peers' SPIRE servers cannot even
// authenticate east's endpoint to fetch the new bundle. For each strategy,
// from a fresh forced rotation, it measures the time from revoke until every
// ordered pair handshakes again, checks that zerotrust_federation_status
// reports the broken pairs meanwhile, and repairs the mesh by hand (`bundle
// set` on the peers) when the strategy did not.
func TestAccRotationForced(t *testing.T) {
	t.Parallel()
	m := startRotationMesh(t, 0, "rfeast", "rfwest", "rfnorth")
	m.writeRefreshActions(t)
	strategies := []forcedStrategy{
		// SPIRE on its own: a peer polls every 15 s, and every poll fails to
		// authenticate the endpoint with the revoked authority.
		{name: "nothing", watch: 2 * time.Minute, expect: expectNoHeal},
		// `spire-server federation refresh` authenticates the endpoint like
		// the scheduled poll does, so it fails the same way (the action now
		// says so at once: "Peer Bundle No Longer Authenticates the Endpoint").
		{name: "bundle_refresh_action", run: (*rotationMesh).invokeRefreshActions, watch: time.Minute, expect: reportOnly},
		// The example applied again: the plan sees the peers' stale bundles
		// of the rotated cluster (spire_trust = "bundle_stale"), and the
		// apply seeds them with what the rotated cluster's endpoint serves,
		// fetched with the declared bundle (the data source's read of the
		// rotated cluster's bundle ConfigMap, without the revoked authority).
		{name: "apply_again", run: (*rotationMesh).applyAgain, watch: time.Minute, expect: expectHeal},
	}
	for _, s := range strategies {
		t.Run(s.name, func(t *testing.T) { m.forcedRotation(t, s) })
	}
}

func (m *rotationMesh) forcedRotation(t *testing.T, s forcedStrategy) {
	ctx := context.Background()
	if failed := failingPairs(m.everyPairOnce(ctx)); len(failed) > 0 {
		t.Fatalf("the mesh is not whole before the forced rotation: %s", strings.Join(failed, "; "))
	}
	var revokedAt time.Time
	for attempt := 1; ; attempt++ {
		var stuck bool
		revokedAt, stuck = m.forceRotation(t)
		if stuck {
			break
		}
		if attempt == 4 {
			t.Fatalf("in %d forced rotations a peer refreshed east's bundle before the break; cannot measure a strategy", attempt)
		}
		m.repair(t)
	}

	status := readFederationStatus(t, m.status)
	m.checkStatusBroken(t, status)

	if s.run != nil {
		start := time.Now()
		s.run(m, t)
		t.Logf("%s ran for %v", s.name, time.Since(start).Round(100*time.Millisecond))
	}
	healed, took, last := m.waitHealed(ctx, revokedAt, time.Now().Add(s.watch))
	if healed {
		t.Logf("%s: every pair handshakes again %v after revoke", s.name, took.Round(100*time.Millisecond))
	} else {
		t.Logf("%s: not healed %v after revoke; failing: %s", s.name, took.Round(100*time.Millisecond), strings.Join(last, "; "))
	}
	switch {
	case s.expect == expectHeal && !healed:
		t.Errorf("%s did not heal the mesh within %v", s.name, s.watch)
	case s.expect == expectNoHeal && healed:
		t.Errorf("%s healed the mesh %v after revoke, which the peers' SPIRE servers cannot do on their own: "+
			"did one refresh before the endpoint's SVID moved to the new authority?", s.name, took)
	}
	if !healed {
		m.repair(t)
	}
}

// forceRotation runs prepare, activate, taint and revoke on east back to
// back and waits until the peers are stuck: east's bundle endpoint no longer
// authenticates with the bundle they hold, and every pair involving east
// fails. stuck is false when a peer fetched the new authority in the
// seconds before east's endpoint SVID moved to it (the peers then heal on
// their own, which is not the state to measure).
func (m *rotationMesh) forceRotation(t *testing.T) (revokedAt time.Time, stuck bool) {
	t.Helper()
	ctx := context.Background()
	s := m.spires[east]
	heldByPeers, err := s.BundleShow(ctx, "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	td := spiffeid.RequireTrustDomainFromString(s.TrustDomain)
	peerView, err := spiffebundle.Parse(td, heldByPeers)
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.workloads[east].Show(ctx)
	if err != nil {
		t.Fatal(err)
	}
	old := v.SVIDAuthority

	start := time.Now()
	prepared, err := s.PrepareX509Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// East's own agent trusts its server only through the bundle it synced
	// (every 5 s): one that has not seen the new authority when the server's
	// SVID moves to it refuses the server, and with rebootstrap_mode "never"
	// (the default) it exits. Even a hurried operator lets the local agents
	// sync; what the forced rotation skips is the peers' refresh.
	waitHoldsAuthority(t, "east's own workload", m.workloads[east], s.TrustDomain, prepared)
	err = s.ActivateX509Authority(ctx, prepared)
	if err == nil {
		err = s.TaintX509Authority(ctx, old)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Tainting makes east's agent rotate its own SVID and its workloads'
	// away from the old authority at its next sync. Revoking before that
	// strands the agent: its SVID, of a revoked authority, is refused by its
	// own server, and it exits once that SVID expires (seen under load).
	// Waiting for it costs the peers nothing: the endpoint's SVID moves to
	// the new authority within seconds of the taint, and from then on the
	// peers' bundle cannot authenticate it.
	waitFor(t, "east's workload to hold an SVID of the new authority", propagationTimeout, func(ctx context.Context) (bool, string) {
		v, err := m.workloads[east].Show(ctx)
		if err != nil {
			return false, err.Error()
		}
		return v.SVIDAuthority == prepared, "SVID of " + v.SVIDAuthority
	})
	if err := s.RevokeX509Authority(ctx, old); err != nil {
		t.Fatal(err)
	}
	revokedAt = time.Now()
	t.Logf("forced rotation of %s: %s replaced by %s, prepare to revoke in %v", s.TrustDomain, old, prepared,
		revokedAt.Sub(start).Round(time.Millisecond))

	// Tainting makes the server re-sign its own SVID at its rotator's next
	// 5 s tick; until then the endpoint still authenticates with the old
	// authority, and a peer polling meanwhile gets the new bundle.
	endpointID := spiffeid.RequireFromString(s.EndpointSPIFFEID)
	waitFor(t, "east's bundle endpoint to present an SVID the peers' bundle cannot verify", 30*time.Second,
		func(ctx context.Context) (bool, string) {
			_, err := federation.FetchBundle(ctx, td, s.BundleEndpointURL, federation.WithSPIFFEAuth(peerView, endpointID))
			if err == nil {
				return false, "the endpoint still authenticates with the old authority"
			}
			return true, err.Error()
		})
	for j, peer := range m.spires {
		if j == east {
			continue
		}
		auths, err := peer.BundleX509Authorities(ctx, s.TrustDomain)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("SPIRE %s holds %s's authorities %v", peer.TrustDomain, s.TrustDomain, auths)
		if slices.ContainsFunc(auths, func(a harness.X509Authority) bool { return a.ID == prepared }) {
			t.Logf("SPIRE %s refreshed %s's bundle in time: not stuck", peer.TrustDomain, s.TrustDomain)
			return revokedAt, false
		}
	}
	waitFor(t, "every pair involving east to fail", propagationTimeout, func(ctx context.Context) (bool, string) {
		var ok []string
		for _, r := range m.pairsWith(east) {
			if good, _ := harness.CheckMTLS(ctx, r.from, r.to); good {
				ok = append(ok, r.from.SPIFFEID+" -> "+r.to.SPIFFEID)
			}
		}
		return len(ok) == 0, "still handshaking: " + strings.Join(ok, ", ")
	})
	m.requireEastAgent(t)
	return revokedAt, true
}

// everyPairOnce runs one handshake for every ordered pair, concurrently.
func (m *rotationMesh) everyPairOnce(ctx context.Context) []pairResult {
	pairs := orderedPairs(m.workloads)
	var wg sync.WaitGroup
	for i := range pairs {
		wg.Go(func() {
			p := &pairs[i]
			if ok, detail := harness.CheckMTLS(ctx, p.from, p.to); !ok {
				p.err = errors.New(detail)
			}
		})
	}
	wg.Wait()
	return pairs
}

// failingPairs names the pairs that failed, with what their client said.
func failingPairs(pairs []pairResult) []string {
	var failed []string
	for _, p := range pairs {
		if p.err != nil {
			failed = append(failed, fmt.Sprintf("%s -> %s: %v", p.from.SPIFFEID, p.to.SPIFFEID, p.err))
		}
	}
	return failed
}

// waitHealed runs a round of handshakes over every ordered pair about every
// second until one round succeeds entirely or deadline passes. took is
// measured from since; last names the pairs that failed the last round.
func (m *rotationMesh) waitHealed(ctx context.Context, since, deadline time.Time) (healed bool, took time.Duration, last []string) {
	for {
		round := time.Now()
		last = failingPairs(m.everyPairOnce(ctx))
		if len(last) == 0 {
			return true, time.Since(since), nil
		}
		if time.Now().After(deadline) {
			return false, time.Since(since), last
		}
		time.Sleep(time.Until(round.Add(time.Second)))
	}
}

// repair puts east's current bundle into every peer's SPIRE server (`bundle
// set`), after which their scheduled refreshes authenticate east's endpoint
// again, and waits until every pair handshakes.
func (m *rotationMesh) repair(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	s := m.spires[east]
	bundle, err := s.BundleShow(ctx, "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	for j, peer := range m.spires {
		if j != east {
			if err := peer.SetFederatedBundle(ctx, s.TrustDomain, bundle); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, r := range everyPair(ctx, m.workloads, true, mtlsTimeout) {
		if r.err != nil {
			m.requireEastAgent(t)
			t.Fatalf("after bundle set on the peers: %v", r.err)
		}
	}
	t.Logf("repaired by bundle set on the peers in %v", time.Since(start).Round(100*time.Millisecond))
}

// requireEastAgent fails the test when east's agent has stopped, quoting the
// errors of its log: a forced rotation can lock the rotating cluster's own
// agents out of their server.
func (m *rotationMesh) requireEastAgent(t *testing.T) {
	t.Helper()
	a := m.workloads[east].Agent
	if a.PID() != 0 {
		return
	}
	data, err := os.ReadFile(a.LogPath())
	var errs []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "level=error") || strings.Contains(line, "level=warn") {
			errs = append(errs, line)
		}
	}
	if len(errs) > 10 {
		errs = errs[len(errs)-10:]
	}
	t.Fatalf("east's spire-agent has exited (%v); last errors and warnings of %s:\n%s", err, a.LogPath(), strings.Join(errs, "\n"))
}

// writeRefreshActions adds to the example's copy one
// zerotrust_spire_bundle_refresh action per peer, refreshing east's bundle
// there, named after the peer's cluster.
func (m *rotationMesh) writeRefreshActions(t *testing.T) {
	t.Helper()
	var b strings.Builder
	for j, c := range m.clusters {
		if j == east {
			continue
		}
		// A timeout short enough to measure: a refresh that can work does
		// within a second.
		fmt.Fprintf(&b, "action %q %q {\n  config {\n    cluster      = %q\n    trust_domain = %q\n    timeout      = \"20s\"\n  }\n}\n\n",
			"zerotrust_spire_bundle_refresh", c.Name, c.Name, m.spires[east].TrustDomain)
	}
	if err := os.WriteFile(filepath.Join(m.example.dir, "rotation_actions.tf"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// invokeRefreshActions runs `terraform apply -invoke` of every peer's
// refresh action, one after the other (they share the state's lock).
func (m *rotationMesh) invokeRefreshActions(t *testing.T) {
	for j, c := range m.clusters {
		if j == east {
			continue
		}
		start := time.Now()
		out, code := terraform(t, m.example.dir, "apply", "-auto-approve", "-no-color",
			"-invoke=action.zerotrust_spire_bundle_refresh."+c.Name)
		t.Logf("apply -invoke of the refresh action on %s: exit %d in %v:\n%s", c.Name, code,
			time.Since(start).Round(100*time.Millisecond), tfSummary(out))
	}
}

// applyAgain plans and applies the example as it is.
func (m *rotationMesh) applyAgain(t *testing.T) {
	out, code := terraform(t, m.example.dir, "plan", "-detailed-exitcode", "-no-color")
	t.Logf("plan in the broken state: exit %d:\n%s", code, tfSummary(out))
	out, code = terraform(t, m.example.dir, "apply", "-auto-approve", "-no-color")
	t.Logf("apply in the broken state: exit %d:\n%s", code, tfSummary(out))
}

var tfSummaryLine = regexp.MustCompile(`(?m)^(Plan:|No changes\.|Apply complete!|Warning: Check).*$`)

// tfSummary keeps the lines of terraform's output that say what happened,
// and every error in full.
func tfSummary(out string) string {
	summary := strings.Join(tfSummaryLine.FindAllString(out, -1), "\n")
	if i := strings.Index(out, "Error:"); i >= 0 {
		summary += "\n" + out[i:]
	}
	return summary
}

// federationStatus is the zerotrust_federation_status data source, as
// `terraform output -json` prints it.
type federationStatus struct {
	OK          bool     `json:"ok"`
	Problems    []string `json:"problems"`
	Federations []struct {
		Cluster         string   `json:"cluster"`
		TrustDomain     string   `json:"trust_domain"`
		BundleHeld      *bool    `json:"bundle_held"`
		EndpointOK      *bool    `json:"endpoint_ok"`
		EndpointMatches *bool    `json:"endpoint_matches"`
		PeerComparison  *string  `json:"peer_comparison"`
		CarriedBehind   *bool    `json:"carried_behind"`
		PeerActivatesAt *string  `json:"peer_activates_at"`
		Problems        []string `json:"problems"`
	} `json:"federations"`
}

// writeStatusConfig writes a configuration that reads
// zerotrust_federation_status for the cluster of every one of spires into
// an output (each cluster's spire install as spireInstall says); arguments
// is the data source's body.
func writeStatusConfig(t *testing.T, spires []*harness.Spire, arguments string) string {
	t.Helper()
	var providerClusters strings.Builder
	for _, s := range spires {
		c, install := s.Cluster, ""
		if i := spireInstall(s); i != "" {
			install = fmt.Sprintf(", spire = { install = %q }", i)
		}
		fmt.Fprintf(&providerClusters, "    %s = { config_path = %q, config_context = %q%s }\n", c.Name, c.Kubeconfig, c.Name, install)
	}
	dir := filepath.Join(t.TempDir(), "status")
	config := fmt.Sprintf(`terraform {
  required_providers {
    zerotrust = { source = %q }
  }
}

provider "zerotrust" {
  clusters = {
%s  }
}

data "zerotrust_federation_status" "mesh" {
%s}

output "status" {
  value = data.zerotrust_federation_status.mesh
}
`, providerAddress, providerClusters.String(), arguments)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readFederationStatus applies the status configuration in dir (data
// sources only) and returns what the data source found.
func readFederationStatus(t *testing.T, dir string) federationStatus {
	t.Helper()
	start := time.Now()
	mustTerraform(t, dir, "apply", "-auto-approve", "-no-color")
	var s federationStatus
	if err := json.Unmarshal([]byte(mustTerraform(t, dir, "output", "-json", "status")), &s); err != nil {
		t.Fatalf("output status: %v", err)
	}
	t.Logf("read zerotrust_federation_status in %v", time.Since(start).Round(100*time.Millisecond))
	return s
}

// checkStatusBroken requires the status to report every peer's federation
// with east (its endpoint cannot be authenticated with the bundle the peer
// holds) and nothing else.
func (m *rotationMesh) checkStatusBroken(t *testing.T, s federationStatus) {
	t.Helper()
	t.Logf("federation status after the forced rotation: ok=%v, problems:\n%s", s.OK, strings.Join(s.Problems, "\n"))
	if s.OK {
		t.Error("zerotrust_federation_status says ok while the peers cannot verify east")
	}
	eastTD := m.spires[east].TrustDomain
	seen := 0
	for _, f := range s.Federations {
		affected := f.Cluster != m.clusters[east].Name && f.TrustDomain == eastTD
		switch {
		case affected:
			seen++
			if f.EndpointOK == nil || *f.EndpointOK || len(f.Problems) == 0 {
				t.Errorf("status of %s's federation with %s: endpoint_ok=%v, problems %q; want the endpoint reported as failing",
					f.Cluster, f.TrustDomain, deref(f.EndpointOK), f.Problems)
			}
		case len(f.Problems) > 0:
			t.Errorf("status of %s's federation with %s, which the rotation does not affect, reports %q", f.Cluster, f.TrustDomain, f.Problems)
		}
	}
	if want := len(m.clusters) - 1; seen != want {
		t.Errorf("status lists %d peers' federations with %s, want %d", seen, eastTD, want)
	}
}

func deref[T any](b *T) any {
	if b == nil {
		return nil
	}
	return *b
}
