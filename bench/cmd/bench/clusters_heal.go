package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// The heal cases of the time-to-trust run: damage one cluster's SPIRE side,
// then see whether a plan shows it and one apply repairs it.

// A heal case damages one cluster's SPIRE side of a federated mesh whose
// pairs all handshake, then runs the plan and one apply of the unchanged
// configuration.
type healCase struct {
	name string
	// expect is the spire_trust value the plan should show changing to
	// "federated".
	expect string
	// damage breaks the mesh; it returns what it did, and the pair whose
	// handshake should fail.
	damage func(ctx context.Context, ws *meshWorkloads) (did string, from, to int, err error)
}

// healCaseList runs the forced rotation last: revoking the old authority
// before the agents have seen its taint leaves that cluster's agent and
// workload with SVIDs of a revoked authority until they renew, which no
// apply can change and which would break the cases after it.
var healCaseList = []healCase{
	{name: "lost bundle", expect: "bundle_missing", damage: damageLostBundle},
	{name: "rebuilt cluster", expect: "bundle_stale", damage: damageRebuild},
	{name: "forced rotation", expect: "bundle_stale", damage: damageRotation},
}

func damageLostBundle(ctx context.Context, ws *meshWorkloads) (string, int, int, error) {
	m, peer := ws.members[0], ws.members[len(ws.members)-1]
	_, err := m.spire.CLI(ctx, "bundle", "delete", "-id", "spiffe://"+peer.spire.TrustDomain, "-mode", "dissociate")
	return fmt.Sprintf("%s's SPIRE server: `bundle delete -id spiffe://%s -mode dissociate`", m.cluster.Name, peer.spire.TrustDomain),
		0, len(ws.members) - 1, err
}

// damageRotation rotates cluster 1's X.509 authority as an operator forcing
// it after a key compromise would: prepare, activate, taint and revoke the
// old one at once, without waiting for the peers to fetch the new bundle.
func damageRotation(ctx context.Context, ws *meshWorkloads) (string, int, int, error) {
	m, w := ws.members[1], ws.get(1)
	did := m.cluster.Name + "'s SPIRE server: `localauthority x509 prepare`, `activate`, `taint` of the old authority, " +
		"its own workload moved to the new one, `revoke`"
	before, err := w.Show(ctx)
	if err != nil {
		return did, 0, 1, err
	}
	old := before.SVIDAuthority
	prepared, err := m.spire.PrepareX509Authority(ctx)
	if err != nil {
		return did, 0, 1, err
	}
	// The cluster's own agent must hold the prepared authority before the
	// server's SVID moves to it, and must leave the tainted one before the
	// revoke: an agent stranded on a revoked SVID is refused by its own
	// server. What makes the rotation forced is that the peers' SPIRE
	// servers do not refresh in between (their refresh hint is minutes).
	waitView := func(done func(harness.WorkloadView) bool) error {
		return wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			v, err := w.Show(ctx)
			return err == nil && done(v), nil
		})
	}
	if err := waitView(func(v harness.WorkloadView) bool {
		return slices.Contains(v.Bundles[m.spire.TrustDomain], prepared)
	}); err != nil {
		return did, 0, 1, fmt.Errorf("%s's workload never held the prepared authority %s: %w", m.cluster.Name, prepared, err)
	}
	if err := m.spire.ActivateX509Authority(ctx, prepared); err != nil {
		return did, 0, 1, err
	}
	if err := m.spire.TaintX509Authority(ctx, old); err != nil {
		return did, 0, 1, err
	}
	if err := waitView(func(v harness.WorkloadView) bool { return v.SVIDAuthority == prepared }); err != nil {
		return did, 0, 1, fmt.Errorf("%s's workload never got an SVID of the new authority %s: %w", m.cluster.Name, prepared, err)
	}
	if err := m.spire.RevokeX509Authority(ctx, old); err != nil {
		return did, 0, 1, err
	}
	return did, 0, 1, nil
}

// damageRebuild rebuilds the last cluster's SPIRE server (empty datastore,
// new CA, same trust domain). Its old agent's SVID is of the old CA: a
// rebuilt node runs a new agent, and its Pod a new workload, which waits for
// its SVID as in the time-to-trust run.
func damageRebuild(ctx context.Context, ws *meshWorkloads) (string, int, int, error) {
	i := len(ws.members) - 1
	m := ws.members[i]
	did := m.cluster.Name + "'s SPIRE server rebuilt (empty datastore, new CA), then a new agent and Pod there"
	if err := m.spire.Rebuild(ctx); err != nil {
		return did, 0, i, err
	}
	ws.mu.Lock()
	old, oldAgent := ws.ws[i], ws.agents[i]
	ws.mu.Unlock()
	if old != nil {
		if err := old.Stop(); err != nil {
			return did, 0, i, err
		}
		// The rebuilt node's Pods are gone with it.
		cs, err := kubernetes.NewForConfig(m.cluster.RESTConfig())
		if err != nil {
			return did, 0, i, err
		}
		if err := cs.CoreV1().Pods(trustNamespace).Delete(ctx, old.Pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			return did, 0, i, err
		}
	}
	if err := oldAgent.Stop(); err != nil {
		return did, 0, i, err
	}
	a, err := harness.StartSpireAgentWith(ctx, m.spire, harness.SpireAgentOptions{Name: fmt.Sprintf("bench-k%d-rebuilt", len(ws.members)), K8sPSAT: true})
	if err != nil {
		return did, 0, i, err
	}
	ws.mu.Lock()
	ws.agents[i] = a
	ws.mu.Unlock()
	return did, 0, i, ws.start(ctx, i, fmt.Sprintf("web-k%d-rebuilt", len(ws.members)))
}

var (
	planTrustRE   = regexp.MustCompile(`spire_trust\s+= "([a-z_]+)" -> "federated"`)
	planChangesRE = regexp.MustCompile(`Plan: (\d+) to add, (\d+) to change, (\d+) to destroy`)
)

// healCases runs every heal case on the federated mesh of ws, in order.
func healCases(ctx context.Context, env *tfEnv, opts options, dir string, ws *meshWorkloads) []HealCase {
	var out []HealCase
	for _, hc := range healCaseList {
		c := HealCase{Clusters: len(ws.members), Case: hc.name, Expect: hc.expect, Pairs: len(ws.members) * (len(ws.members) - 1)}
		runHealCase(ctx, env, opts, dir, ws, hc, &c)
		logf("clusters %d: heal %q: broke %v, plan exit %d %v, apply %.1f s, every pair at %.1f s, plan after empty %v %s",
			c.Clusters, c.Case, c.Broke, c.PlanExit, c.PlanTrust, c.ApplyWall, c.AllPairs, c.PlanAfterEmpty, c.Error)
		out = append(out, c)
		if c.AllPairs == 0 {
			// The next case would start from a broken mesh.
			break
		}
	}
	return out
}

func runHealCase(ctx context.Context, env *tfEnv, opts options, dir string, ws *meshWorkloads, hc healCase, c *HealCase) {
	fail := func(format string, args ...any) {
		c.Error = strings.TrimPrefix(c.Error+"; "+fmt.Sprintf(format, args...), "; ")
	}
	did, from, to, err := hc.damage(ctx, ws)
	c.Damage = did
	if err != nil {
		fail("damage: %v", err)
		return
	}
	// The damage shows as a failed handshake once the agents have passed it
	// on; a rebuilt cluster's new workload first waits for its SVID.
	deadline := time.Now().Add(trustBreakWait)
	for time.Now().Before(deadline) {
		a, b := ws.get(from), ws.get(to)
		if a == nil || b == nil {
			c.Broke, c.BreakDetail = true, "a workload has no SVID yet"
			time.Sleep(time.Second)
			continue
		}
		ok, detail := harness.CheckMTLS(ctx, a, b)
		c.Broke, c.BreakDetail = !ok, detail
		if !ok {
			break
		}
		time.Sleep(time.Second)
	}

	out, code := planExit(ctx, env, opts, dir)
	c.PlanExit = code
	seen := map[string]int{}
	for _, m := range planTrustRE.FindAllStringSubmatch(out, -1) {
		seen[m[1]]++
	}
	for _, from := range sortedKeys(seen) {
		c.PlanTrust = append(c.PlanTrust, fmt.Sprintf("%s -> federated ×%d", from, seen[from]))
	}
	if m := planChangesRE.FindStringSubmatch(out); m != nil {
		c.PlanChanges, _ = strconv.Atoi(m[2])
	}
	c.PlanShowsRepair = code == 2 && seen[hc.expect] > 0
	if code != 2 {
		fail("plan before the apply exited %d: %s", code, tail(out, 10))
	}

	start := time.Now()
	poll := startPairPoll(ctx, ws, start, healWaitCap)
	s, aout, err := env.measured(ctx, dir, opts.timeout, phaseArgs["apply"]...)
	c.ApplyWall = round3(s.Wall)
	if err != nil {
		poll.stop()
		fail("apply: %v: %s", err, tail(aout, 20))
		return
	}
	all, dials, err := poll.wait()
	c.Dials = dials
	if err != nil {
		fail("%v", err)
	} else {
		c.AllPairs = round3(all.Seconds())
	}
	// The plan after is asked either way: whether SPIRE's side looks
	// repaired tells a provider failure from one beyond its reach.
	out, code = planExit(ctx, env, opts, dir)
	c.PlanAfterEmpty = code == 0
	if code != 0 {
		fail("plan after the apply exited %d: %s", code, tail(out, 10))
	}
	time.Sleep(healSettle)
	var failed []string
	c.PairsAfter, failed = sweepPairs(ctx, ws)
	if len(failed) > 0 {
		fail("%.0f s after the apply, %d of %d ordered pairs fail: %s", healSettle.Seconds(), len(failed), c.Pairs, strings.Join(failed, "; "))
	}
}

// sweepPairs handshakes every ordered pair once (trustDialers at a time)
// and returns how many succeeded and why the others failed.
func sweepPairs(ctx context.Context, ws *meshWorkloads) (int, []string) {
	return sweepPairsWhere(ctx, ws, func(int, int) bool { return true })
}

// sweepPairsWhere is sweepPairs for the ordered pairs keep accepts.
func sweepPairsWhere(ctx context.Context, ws *meshWorkloads, keep func(from, to int) bool) (int, []string) {
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		ok     int
		failed []string
		sem    = make(chan struct{}, trustDialers)
	)
	for i := range ws.members {
		for j := range ws.members {
			if i == j || !keep(i, j) {
				continue
			}
			from, to := ws.get(i), ws.get(j)
			name := ws.members[i].cluster.Name + "->" + ws.members[j].cluster.Name
			if from == nil || to == nil {
				failed = append(failed, name+": a workload has no SVID")
				continue
			}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				good, detail := harness.CheckMTLS(ctx, from, to)
				mu.Lock()
				if good {
					ok++
				} else {
					failed = append(failed, name+": "+detail)
				}
				mu.Unlock()
				<-sem
			}()
		}
	}
	wg.Wait()
	sort.Strings(failed)
	return ok, failed
}

// planExit runs a plan with -detailed-exitcode: 0 no changes, 2 changes, -1
// or another code: it failed.
func planExit(ctx context.Context, env *tfEnv, opts options, dir string) (string, int) {
	out, err := env.tf(ctx, dir, opts.timeout, phaseArgs["plan"]...)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out, 0
	case errors.As(err, &ee):
		return out, ee.ExitCode()
	default:
		return out + "\n" + err.Error(), -1
	}
}
