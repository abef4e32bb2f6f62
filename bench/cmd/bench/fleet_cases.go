package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// The fleet's cases after time to trust: one cluster dead, a join and a
// leave, a forced rotation (see fleet.go for the order and why).

// FleetDead is the plan of the converged mesh with one cluster behind a
// listener that accepts connections and never answers, against the same
// plan with it answering, fleetPlanRounds each, alternating.
type FleetDead struct {
	Cluster      string    `json:"cluster"`
	AliveWalls   []float64 `json:"alive_walls_s"`
	DeadWalls    []float64 `json:"dead_walls_s"`
	Alive        float64   `json:"alive_median_s"`
	DeadWall     float64   `json:"dead_median_s"`
	Added        float64   `json:"added_s"`
	Bound        float64   `json:"bound_s"` // kube.PlanReachTimeout
	DeadExit     int       `json:"dead_plan_exit"`
	DeadChanges  int       `json:"dead_plan_changes"` // resources
	OutputsOnly  bool      `json:"dead_plan_outputs_only"`
	Warned       bool      `json:"warned_once_each"` // both unreachable warnings, once each
	WithinBound  bool      `json:"within_bound"`
	DeadLoadMax  float64   `json:"dead_load1_max"`
	AliveLoadMax float64   `json:"alive_load1_max"`
}

// FleetJoin is cluster N+1 joining in one apply.
type FleetJoin struct {
	Cluster    string     `json:"cluster"`
	NewPairs   int        `json:"new_pairs"`
	Summary    string     `json:"apply_summary"`
	Apply      FleetPhase `json:"apply"`
	NewPairsAt float64    `json:"new_pairs_s"` // from the apply's start; zero: not reached
	Dials      int        `json:"dials"`
}

// FleetLeave is that cluster leaving: leaving = true, then its entry
// removed.
type FleetLeave struct {
	Summary        string     `json:"apply_summary"`
	Apply          FleetPhase `json:"apply"`
	Unfederated    bool       `json:"peers_unfederated"` // no SPIRE server of the mesh holds its bundle after the apply
	RemoveSummary  string     `json:"remove_apply_summary"`
	RemoveWall     float64    `json:"remove_apply_s"`
	PairsAfter     int        `json:"pairs_after"` // pairs of the remaining mesh that handshake after it
	PairsAfterWant int        `json:"pairs_after_want"`
}

// FleetRotate is a forced rotation of one cluster and its repair.
type FleetRotate struct {
	Cluster     string   `json:"cluster"`
	Damage      string   `json:"damage"`
	Broke       bool     `json:"broke"`
	StalePeers  []string `json:"stale_peers"` // peers whose SPIRE kept the old bundle
	PlanUpdates []string `json:"plan_updates"`
	PlanTrust   []string `json:"plan_spire_trust"`
	PlanSummary string   `json:"plan_summary"`
	// Exact: the plan updates exactly the stale peers' federations with
	// the rotated cluster, each from "bundle_stale", and nothing else.
	Exact          bool       `json:"plan_exact"`
	Apply          FleetPhase `json:"apply"`
	AllPairs       float64    `json:"all_pairs_s"` // from the apply's start; zero: not reached
	Dials          int        `json:"dials"`
	PlanAfterEmpty bool       `json:"plan_after_empty"`
}

var (
	applySummaryRE = regexp.MustCompile(`(Apply complete! Resources: \d+ added, \d+ changed, \d+ destroyed|No changes\.)`)
	planSummaryRE  = regexp.MustCompile(`(Plan: \d+ to add, \d+ to change, \d+ to destroy|No changes\.)`)
	planUpdateRE   = regexp.MustCompile(`# (\S+) will be updated in-place`)
	planActionRE   = regexp.MustCompile(`# (\S+) (?:will be|must be) (?:created|destroyed|replaced|updated in-place)`)
)

func firstMatch(re *regexp.Regexp, out string) string {
	if m := re.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// dead alternates the plan with every cluster answering and with the
// last of the mesh behind a silent listener.
func (f *fleet) dead(ctx context.Context) error {
	n := len(f.members) - 1
	victim := f.members[n-1]
	d := &f.row.Dead
	d.Cluster, d.Bound = victim.cluster.Name, kube.PlanReachTimeout.Seconds()
	silent, err := startSilentListener()
	if err != nil {
		return err
	}
	defer silent.stop()
	deadConfig, err := kubeconfigAt(victim.cluster, filepath.Join(f.dir, "dead-kubeconfig"), "https://"+silent.addr())
	if err != nil {
		return err
	}
	d.Warned = true
	for r := 0; r < fleetPlanRounds; r++ {
		for _, dead := range []bool{false, true} {
			edit := func(i int, v map[string]any) {
				if dead && i == n-1 {
					v["config_path"] = deadConfig
				}
			}
			if err := f.writeVars(n, edit); err != nil {
				return err
			}
			p, out, err := f.timed(ctx, 0, phaseArgs["plan"]...)
			if !dead {
				if err != nil {
					return fmt.Errorf("plan with every cluster answering: exit %d\n%s", exitCode(err), tail(out, 30))
				}
				d.AliveWalls, d.AliveLoadMax = append(d.AliveWalls, p.Wall), max(d.AliveLoadMax, p.LoadMax)
				continue
			}
			d.DeadWalls, d.DeadLoadMax = append(d.DeadWalls, p.Wall), max(d.DeadLoadMax, p.LoadMax)
			d.DeadExit, d.DeadChanges = exitCode(err), planChanges(out)
			d.OutputsOnly = d.DeadChanges == 0 && strings.Contains(out, "Changes to Outputs:")
			for _, summary := range []string{
				fmt.Sprintf("Warning: Cluster %q Unreachable: Data Source Not Read", victim.cluster.Name),
				fmt.Sprintf("Warning: Cluster %q Unreachable: State Kept Without Refresh", victim.cluster.Name),
			} {
				d.Warned = d.Warned && strings.Count(out, summary) == 1
			}
			if d.DeadExit != 0 && d.DeadExit != 2 {
				return fmt.Errorf("plan with %s dead: exit %d\n%s", victim.cluster.Name, d.DeadExit, tail(out, 30))
			}
		}
	}
	d.Alive, d.DeadWall = round3(median(d.AliveWalls)), round3(median(d.DeadWalls))
	d.Added = round3(d.DeadWall - d.Alive)
	d.WithinBound = d.Added <= d.Bound
	logf("fleet %d: plan %.1f s with every cluster answering, %.1f s with %s dead (%+.1f s, bound %.0f s), exit %d, %d changes",
		n, d.Alive, d.DeadWall, d.Cluster, d.Added, d.Bound, d.DeadExit, d.DeadChanges)
	return f.writeVars(n, nil)
}

// kubeconfigAt writes a copy of c's kubeconfig whose server is server.
func kubeconfigAt(c *harness.Cluster, path, server string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		return "", err
	}
	for _, cl := range cfg.Clusters {
		cl.Server = server
	}
	return path, clientcmd.WriteToFile(*cfg, path)
}

// joinLeave: cluster N+1 joins in one apply, its new pairs polled from the
// apply's start; then it leaves (leaving = true) and its entry goes.
func (f *fleet) joinLeave(ctx context.Context) error {
	n := len(f.members) - 1
	joiner := f.members[n]
	j := &f.row.Join
	j.Cluster, j.NewPairs = joiner.cluster.Name, 2*n
	// Its workload is deployed first and waits for its SVID, as a
	// platform's applications are before the cluster joins the mesh.
	if err := f.ws.start(ctx, n, "web-join"); err != nil {
		return fmt.Errorf("%s's workload: %w", joiner.cluster.Name, err)
	}
	if err := f.writeVars(n+1, nil); err != nil {
		return err
	}
	start := time.Now()
	poll := startPairPollWhere(ctx, f.ws, start, fleetTrustCap, func(a, b int) bool { return a == n || b == n })
	p, out, err := f.timed(ctx, 2*n+1, phaseArgs["apply"]...)
	j.Apply, j.Summary = p, firstMatch(applySummaryRE, out)
	if err != nil {
		poll.stop()
		return fmt.Errorf("joining apply: %v\n%s", err, tail(out, 30))
	}
	all, dials, err := poll.wait()
	j.Dials = dials
	if err != nil {
		return fmt.Errorf("join: %w", err)
	}
	j.NewPairsAt = round3(all.Seconds())
	logf("fleet %d: join of %s: apply %.1f s (%s), its %d pairs handshook at %.1f s", n, j.Cluster, p.Wall, j.Summary, j.NewPairs, j.NewPairsAt)

	l := &f.row.Leave
	if err := f.writeVars(n+1, func(i int, v map[string]any) {
		if i == n {
			v["leaving"] = true
		}
	}); err != nil {
		return err
	}
	p, out, err = f.timed(ctx, 2*n+1, phaseArgs["apply"]...)
	l.Apply, l.Summary = p, firstMatch(applySummaryRE, out)
	if err != nil {
		return fmt.Errorf("leaving apply: %v\n%s", err, tail(out, 30))
	}
	l.Unfederated = true
	for _, m := range f.members[:n] {
		tds, err := m.federatedTrustDomains(ctx)
		if err != nil || slices.Contains(tds, joiner.spire.TrustDomain) {
			l.Unfederated = false
		}
	}
	if err := f.writeVars(n, nil); err != nil {
		return err
	}
	s, out, err := f.env.measured(ctx, f.dir, f.opts.timeout, phaseArgs["apply"]...)
	l.RemoveWall, l.RemoveSummary = round3(s.Wall), firstMatch(applySummaryRE, out)
	if err != nil {
		return fmt.Errorf("apply without the left cluster's entry: %v\n%s", err, tail(out, 30))
	}
	l.PairsAfterWant = n * (n - 1)
	l.PairsAfter, _ = sweepPairsWhere(ctx, f.ws, func(a, b int) bool { return a < n && b < n })
	logf("fleet %d: leave of %s: apply %.1f s (%s), peers unfederated %v; entry removed %.1f s (%s); %d of %d pairs handshake after",
		n, j.Cluster, l.Apply.Wall, l.Summary, l.Unfederated, l.RemoveWall, l.RemoveSummary, l.PairsAfter, l.PairsAfterWant)
	return nil
}

// rotate forces a rotation of the mesh's second cluster (damageRotation),
// then plans (which must show exactly the repairs of the peers left with
// its old bundle) and applies once, every pair of the mesh polled from the
// apply's start.
func (f *fleet) rotate(ctx context.Context) error {
	n := len(f.members) - 1
	r := &f.row.Rotation
	rotated := f.members[1]
	r.Cluster = rotated.cluster.Name
	did, from, to, err := damageRotation(ctx, f.ws)
	r.Damage = did
	if err != nil {
		return fmt.Errorf("rotation: %w", err)
	}
	deadline := time.Now().Add(trustBreakWait)
	for time.Now().Before(deadline) {
		if ok, _ := harness.CheckMTLS(ctx, f.ws.get(from), f.ws.get(to)); !ok {
			r.Broke = true
			break
		}
		time.Sleep(time.Second)
	}
	own, err := rotated.spire.BundleX509Authorities(ctx, rotated.spire.TrustDomain)
	if err != nil {
		return err
	}
	var want []string
	for _, m := range f.members[:n] {
		if m == rotated {
			continue
		}
		held, err := m.spire.BundleX509Authorities(ctx, rotated.spire.TrustDomain)
		if err != nil {
			return err
		}
		if !holdsAll(held, own) {
			r.StalePeers = append(r.StalePeers, m.cluster.Name)
			want = append(want, fmt.Sprintf("zerotrust_federated_trust_domain.peer[%q]", m.cluster.Name+"->"+rotated.cluster.Name))
		}
	}
	sort.Strings(want)
	out, code := planExit(ctx, f.env, f.opts, f.dir)
	if others := r.judgePlan(out, code, want); !r.Exact {
		f.row.Errors = append(f.row.Errors, fmt.Sprintf("rotation: the plan (exit %d, %s) updates %v, want exactly %v; other actions: %v",
			code, r.PlanSummary, r.PlanUpdates, want, others))
	}
	start := time.Now()
	poll := startPairPollOf(ctx, f.ws, n, start, fleetTrustCap)
	p, aout, err := f.timed(ctx, len(want), phaseArgs["apply"]...)
	r.Apply = p
	if err != nil {
		poll.stop()
		return fmt.Errorf("repairing apply: %v\n%s", err, tail(aout, 30))
	}
	all, dials, err := poll.wait()
	r.Dials = dials
	if err != nil {
		return fmt.Errorf("after the repairing apply: %w", err)
	}
	r.AllPairs = round3(all.Seconds())
	_, code = planExit(ctx, f.env, f.opts, f.dir)
	r.PlanAfterEmpty = code == 0
	logf("fleet %d: forced rotation of %s: %d stale peers, plan %s exact %v, apply %.1f s, every pair at %.1f s, plan after empty %v",
		n, r.Cluster, len(r.StalePeers), r.PlanSummary, r.Exact, p.Wall, r.AllPairs, r.PlanAfterEmpty)
	return nil
}

// judgePlan reads the plan of the forced rotation (its output and
// -detailed-exitcode) into r: Exact when it updates exactly the
// federations want (sorted), each with spire_trust going from
// "bundle_stale" to "federated", and plans nothing else. It returns the
// other resource actions it planned.
func (r *FleetRotate) judgePlan(out string, code int, want []string) []string {
	r.PlanSummary = firstMatch(planSummaryRE, out)
	var others []string
	for _, m := range planActionRE.FindAllStringSubmatch(out, -1) {
		if !slices.Contains(want, m[1]) {
			others = append(others, m[0])
		}
	}
	r.PlanUpdates = nil
	for _, m := range planUpdateRE.FindAllStringSubmatch(out, -1) {
		r.PlanUpdates = append(r.PlanUpdates, m[1])
	}
	sort.Strings(r.PlanUpdates)
	seen := map[string]int{}
	for _, m := range planTrustRE.FindAllStringSubmatch(out, -1) {
		seen[m[1]]++
	}
	r.PlanTrust = nil
	for _, k := range sortedKeys(seen) {
		r.PlanTrust = append(r.PlanTrust, k+" -> federated ×"+strconv.Itoa(seen[k]))
	}
	r.Exact = code == 2 && len(want) > 0 && slices.Equal(r.PlanUpdates, want) && len(others) == 0 &&
		seen["bundle_stale"] == len(want) && len(seen) == 1
	return others
}

// holdsAll: held has every authority of own (a peer that fetched the
// rotated cluster's bundle after the prepare can still authenticate it).
func holdsAll(held, own []harness.X509Authority) bool {
	for _, o := range own {
		if !slices.ContainsFunc(held, func(h harness.X509Authority) bool { return h.ID == o.ID }) {
			return false
		}
	}
	return true
}
