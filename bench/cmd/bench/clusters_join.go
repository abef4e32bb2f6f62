package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The join run: a cluster joins a mesh whose workloads already trust each
// other, with one apply of the configuration that adds it (as a user adds
// one to examples/n-cluster-mesh's `clusters`). Its workload is deployed
// and waits for its SVID before the apply; the apply creates its
// federations both ways and its ClusterSPIFFEID, and adds it to every other
// cluster's ClusterSPIFFEID. Time to join runs from the start of that apply
// until every ordered pair of the grown mesh has handshaken.

// JoinRow is one join run.
type JoinRow struct {
	// Clusters after the join; Pairs its ordered pairs, NewPairs those
	// with the new cluster.
	Clusters int `json:"clusters"`
	Pairs    int `json:"pairs"`
	NewPairs int `json:"new_pairs"`
	// ApplyWall is the joining apply; BundlesHeld when every SPIRE server
	// held every peer's bundle; TimeToJoin when every pair had handshaken
	// (zero: not reached), all from the start of the apply.
	ApplyWall   float64 `json:"apply_wall_s"`
	BundlesHeld float64 `json:"bundles_held_s,omitempty"`
	TimeToJoin  float64 `json:"time_to_join_s,omitempty"`
	Dials       int     `json:"dials"`
	Error       string  `json:"error,omitempty"`
}

// meshJoin runs the join of the last of members into a mesh of the others,
// in dir (initialized by the row's runs), and destroys everything after.
// The error means the clusters are not clean afterwards.
func meshJoin(ctx context.Context, env *tfEnv, opts options, dir string, members []*meshMember) (JoinRow, error) {
	n := len(members)
	row := JoinRow{Clusters: n, Pairs: n * (n - 1), NewPairs: 2 * (n - 1)}
	fail := func(format string, args ...any) {
		row.Error = strings.TrimPrefix(row.Error+"; "+fmt.Sprintf(format, args...), "; ")
	}
	// Every workload accepts every trust domain of the grown mesh from the
	// start, as the joiner's peers would once they know it.
	ws := newMeshWorkloads(members)
	err := func() error {
		if err := writeMeshConfig(env, dir, members[:n-1], true); err != nil {
			return err
		}
		if err := ws.startAll(ctx, fmt.Sprintf("join%d", n)); err != nil {
			return err
		}
		// The mesh before the join, untimed.
		start := time.Now()
		before := startPairPollOf(ctx, ws, n-1, start, trustWaitCap)
		if out, err := env.tf(ctx, dir, opts.timeout, phaseArgs["apply"]...); err != nil {
			before.stop()
			return fmt.Errorf("apply of the %d clusters before the join: %v: %s", n-1, err, tail(out, 20))
		}
		if _, _, err := before.wait(); err != nil {
			return fmt.Errorf("the %d clusters before the join: %w", n-1, err)
		}

		if err := writeMeshConfig(env, dir, members, true); err != nil {
			return err
		}
		t, err := trustApply(ctx, env, opts, dir, members, ws, "the joining apply", nil)
		row.ApplyWall, row.BundlesHeld, row.Dials = t.apply, t.held, t.dials
		if err != nil {
			return err
		}
		row.TimeToJoin = t.all
		logf("clusters %d: join of %s: every pair at %.1f s (apply %.1f s, all bundles held at %.1f s, %d handshakes for %d pairs)",
			n, members[n-1].cluster.Name, row.TimeToJoin, row.ApplyWall, row.BundlesHeld, row.Dials, row.Pairs)
		return nil
	}()
	if err != nil {
		fail("%v", err)
		logf("clusters %d: join: %v", n, err)
	}
	ws.mu.Lock()
	for i, werr := range ws.errs {
		if werr != nil {
			fail("%s: %v", members[i].cluster.Name, werr)
		}
	}
	ws.mu.Unlock()
	ws.stopAll()
	if err := trustCleanup(ctx, env, opts, dir, members); err != nil {
		return row, fmt.Errorf("clusters %d: after the join run: %w", n, err)
	}
	return row, nil
}

// joinGoal is the join's goal: the grown mesh trusts after one apply.
func (r *Results) joinGoal(add func(Goal)) {
	if len(r.ClusterJoin) == 0 {
		return
	}
	var parts []string
	ok := true
	for _, j := range r.ClusterJoin {
		ok = ok && j.TimeToJoin > 0
		if j.TimeToJoin > 0 {
			parts = append(parts, fmt.Sprintf("%d -> %d clusters (%d pairs, %d new) %.1f s", j.Clusters-1, j.Clusters, j.Pairs, j.NewPairs, j.TimeToJoin))
		} else {
			parts = append(parts, fmt.Sprintf("%d -> %d clusters: not reached", j.Clusters-1, j.Clusters))
		}
	}
	add(Goal{Goal: "a cluster joins with one apply: every ordered workload pair of the grown mesh handshakes (time to join)",
		Measured: strings.Join(parts, "; "), Status: status(ok),
		Note: "from the start of the joining apply, which creates the federations both ways and the ClusterSPIFFEIDs' changes; the new cluster's agent and workload exist before it"})
}

// joinMarkdown is the report's join section.
func joinMarkdown(r *Results) string {
	if len(r.ClusterJoin) == 0 {
		return ""
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n### Time to join: a cluster joins a trusting mesh with one apply\n\n")
	p("After the heal cases, on clean clusters: a mesh of the smallest row's clusters is applied (with its "+
		"ClusterSPIFFEIDs) until every pair handshakes, untimed; agents and workloads run on those clusters and on one "+
		"more, whose workload waits for its SVID. Then the configuration gains that cluster (one more entry in "+
		"`clusters`, as in `examples/n-cluster-mesh`) and one `terraform apply` runs: it creates the federations both "+
		"ways and the new cluster's ClusterSPIFFEID, and adds the new trust domain to every other ClusterSPIFFEID. "+
		"*Time to join* runs from the start of that apply until every ordered pair of the grown mesh has handshaken "+
		"(polled as in the time-to-trust run, at most %.0f s). Single runs.\n\n", trustWaitCap.Seconds())
	p("| Clusters | Pairs (new) | Apply (s) | All bundles held (s) | Time to join (s) | Handshakes tried |\n")
	p("|---:|---:|---:|---:|---:|---:|\n")
	for _, j := range r.ClusterJoin {
		ttj := "not reached"
		if j.TimeToJoin > 0 {
			ttj = fmt.Sprintf("%.1f", j.TimeToJoin)
		}
		p("| %d -> %d | %d (%d) | %.1f | %.1f | %s | %d |\n", j.Clusters-1, j.Clusters, j.Pairs, j.NewPairs, j.ApplyWall, j.BundlesHeld, ttj, j.Dials)
	}
	p("\n")
	for _, j := range r.ClusterJoin {
		if j.Error != "" {
			p("- %d -> %d clusters: %s\n", j.Clusters-1, j.Clusters, esc(j.Error))
		}
	}
	return b.String()
}
