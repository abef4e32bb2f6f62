package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// The mesh with one cluster dead (BENCH_SCALE=mesh-dead, make
// bench-mesh-dead): the wide mesh (mesh.go) of the largest BENCH_CLUSTERS
// count, applied with every cluster alive; then a change on every object
// (a suffix on each bundle endpoint URL), planned and applied with every
// cluster alive and with the last cluster's connection pointing at a dead
// address: a closed port on 127.0.0.1 (the connection is refused at once)
// or a listener the bench starts that accepts and never writes (the
// probe waits out kube.PlanReachTimeout). on_unreachable is left at its
// default ("warn"), so the plan keeps the dead cluster's state and the
// apply refuses its changes; a plan after that apply tells whether the
// live clusters' changes landed (only the dead cluster's remain).
//
// Before every case an untimed apply with every cluster alive puts the
// objects back, so each case plans and applies the same change. Cases
// rotate from round to round, so a drift in the machine's load spreads
// over all three.

// deadRounds is how many times each case runs; the verdict uses medians.
var deadRounds = envInt("BENCH_DEAD_ROUNDS", 5)

// Cases of the dead-cluster mesh.
const (
	deadAlive  = "alive"
	deadClosed = "closed port"
	deadSilent = "silent listener"
	// deadRestarted is no dead cluster: the last one's kube-apiserver is
	// restarted mid-apply (dead_blip.go).
	deadRestarted = "restarted mid-apply"
)

var deadCases = []string{deadAlive, deadClosed, deadSilent, deadRestarted}

// DeadRun is one case in one round.
type DeadRun struct {
	Round int    `json:"round"`
	Case  string `json:"case"`
	Plan  Sample `json:"plan"`
	// PlanLoadBefore is the 1-minute load average as the plan started.
	PlanLoadBefore float64 `json:"plan_load1_before"`
	PlanChanges    int     `json:"plan_changes"`
	// PlanKeptWarning: the plan's output carries the warning that the dead
	// cluster's state was kept without a refresh.
	PlanKeptWarning bool   `json:"plan_kept_warning"`
	Apply           Sample `json:"apply"`
	ApplyExit       int    `json:"apply_exit_code"`
	// ApplyUnreachable counts the apply's "Cluster Unreachable" errors, and
	// ApplyNamesDead tells whether they name the dead cluster.
	ApplyUnreachable int  `json:"apply_unreachable_errors"`
	ApplyNamesDead   bool `json:"apply_names_dead_cluster"`
	// ApplyErrors counts every error of the apply.
	ApplyErrors int `json:"apply_errors"`
	// Down is how long the restarted kube-apiserver refused connections
	// (deadRestarted), and ChangedBeforeKill how many of its objects the
	// apply had changed when it was killed.
	Down              float64 `json:"apiserver_down_s,omitempty"`
	ChangedBeforeKill int     `json:"changed_before_kill,omitempty"`
	// Left is the number of changes the plan after the apply still shows:
	// 0 with every cluster alive, the dead cluster's objects otherwise.
	Left int `json:"changes_left_after_apply"`
}

// DeadResult is what bench/dead.json holds.
type DeadResult struct {
	Started  time.Time              `json:"started"`
	Machine  Machine                `json:"machine"`
	Clusters int                    `json:"clusters"`
	Objects  int                    `json:"objects"`
	Dead     string                 `json:"dead_cluster"`
	DeadObjs int                    `json:"dead_cluster_objects"`
	Setup    Sample                 `json:"first_apply"`
	Runs     []DeadRun              `json:"runs"`
	Verdicts map[string]deadVerdict `json:"verdicts"`
}

func runMeshDead(ctx context.Context, env *tfEnv, opts options, machine Machine) error {
	n := opts.clusterCounts[len(opts.clusterCounts)-1]
	if n < 2 {
		return fmt.Errorf("mesh-dead needs at least 2 clusters, got %d", n)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("m%02d", i+1)
	}
	res := DeadResult{Started: time.Now().UTC(), Machine: machine, Clusters: n, Objects: n * (n - 1), Dead: names[n-1], DeadObjs: n - 1,
		Verdicts: map[string]deadVerdict{}}
	logf("mesh-dead: starting %d clusters on one etcd", n)
	lab, err := harness.Start(ctx, harness.Options{Names: names, Dir: filepath.Join(env.work, fmt.Sprintf("mesh-dead-%d", n)), SharedEtcd: true})
	if err != nil {
		return err
	}
	defer func() {
		if err := lab.Stop(); err != nil {
			logf("stopping clusters: %v", err)
		}
	}()
	closed, err := closedAddress()
	if err != nil {
		return err
	}
	silent, err := startSilentListener()
	if err != nil {
		return err
	}
	defer silent.stop()
	hosts := map[string]string{deadClosed: "https://" + closed, deadSilent: "https://" + silent.addr()}

	dir := filepath.Join(env.work, "cfg", fmt.Sprintf("mesh-dead-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(v meshVariant) error {
		return os.WriteFile(filepath.Join(dir, "main.tf"), []byte(wideMeshVariant(env.providers[targetZerotrust], lab, v)), 0o644)
	}
	if err := write(meshVariant{}); err != nil {
		return err
	}
	if out, err := env.tf(ctx, dir, 10*time.Minute, "init", "-input=false", "-no-color"); err != nil {
		return fmt.Errorf("terraform init: %w\n%s", err, tail(out, 40))
	}
	s, load, out, err := leanMeasured(ctx, env, dir, opts.timeout, phaseArgs["apply"]...)
	if err != nil {
		return fmt.Errorf("first apply: %w\n%s", err, tail(out, 40))
	}
	res.Setup = Sample{Wall: s.Wall, CPU: s.CPUTotal, Load: load.max}
	logf("mesh-dead: %d clusters, %d objects applied in %.1f s", n, res.Objects, s.Wall)

	for r := 1; r <= deadRounds; r++ {
		for i := range deadCases {
			c := deadCases[(i+r-1)%len(deadCases)]
			// Back to the first configuration, every cluster alive, untimed.
			if err := write(meshVariant{}); err != nil {
				return err
			}
			if out, err := env.tf(ctx, dir, opts.timeout, phaseArgs["apply"]...); err != nil {
				return fmt.Errorf("round %d, %s: resetting apply: %w\n%s", r, c, err, tail(out, 40))
			}
			v := meshVariant{Suffix: "/v2"}
			var restart *harness.Cluster
			if c == deadRestarted {
				restart = lab.Cluster(res.Dead)
			} else if c != deadAlive {
				v.Dead, v.DeadHost = res.Dead, hosts[c]
			}
			if err := write(v); err != nil {
				return err
			}
			run, err := deadCase(ctx, env, dir, opts, res.Dead, r, c, restart)
			if err != nil {
				return err
			}
			res.Runs = append(res.Runs, run)
			logf("mesh-dead: round %d, %s: plan %.2f s (CPU %.2f s, load %.2f), %d changes; apply %.2f s (CPU %.2f s) exit %d, %d unreachable errors; %d changes left",
				r, c, run.Plan.Wall, run.Plan.CPU, run.Plan.Load, run.PlanChanges, run.Apply.Wall, run.Apply.CPU, run.ApplyExit, run.ApplyUnreachable, run.Left)
		}
	}
	for _, c := range deadCases[1:] {
		res.Verdicts[c] = judgeDead(res.Runs, c, kube.PlanReachTimeout.Seconds())
	}
	res.Verdicts[deadRestarted] = judgeBlip(res.Runs)
	md := deadMarkdown(res)
	fmt.Print(md)
	return writePart(opts.outDir, "DEAD", res, md)
}

// deadCase times the plan and the apply of the configuration in dir, then
// plans once more, untimed, to count what the apply left. With restart, that
// cluster's kube-apiserver is restarted during the apply (restartMidApply).
func deadCase(ctx context.Context, env *tfEnv, dir string, opts options, dead string, round int, c string,
	restart *harness.Cluster) (DeadRun, error) {
	run := DeadRun{Round: round, Case: c}
	s, load, out, err := leanMeasured(ctx, env, dir, opts.timeout, phaseArgs["plan"]...)
	if code := exitCode(err); code != 2 {
		return run, fmt.Errorf("round %d, %s: want a plan with changes (exit 2), got exit %d: %v\n%s", round, c, code, err, tail(out, 40))
	}
	run.Plan = Sample{Wall: s.Wall, CPU: s.CPUTotal, Load: load.max}
	run.PlanLoadBefore = load.before
	run.PlanChanges = planChanges(out)
	run.PlanKeptWarning = strings.Contains(out, "Unreachable: State Kept Without Refresh")

	applied := make(chan struct{})
	restarted := make(chan error, 1)
	if restart != nil {
		go func() {
			down, changed, err := restartMidApply(ctx, restart, "/v2", applied)
			run.Down, run.ChangedBeforeKill = down.Seconds(), changed
			restarted <- err
		}()
	} else {
		restarted <- nil
	}
	s, load, out, err = leanMeasured(ctx, env, dir, opts.timeout, phaseArgs["apply"]...)
	close(applied)
	if rerr := <-restarted; rerr != nil {
		return run, fmt.Errorf("round %d, %s: %w", round, c, rerr)
	}
	run.Apply = Sample{Wall: s.Wall, CPU: s.CPUTotal, Load: load.max}
	run.ApplyExit = exitCode(err)
	if run.ApplyExit < 0 {
		return run, fmt.Errorf("round %d, %s: apply: %w", round, c, err)
	}
	flat := strings.Join(strings.Fields(out), " ")
	run.ApplyUnreachable = strings.Count(flat, "Error: Cluster Unreachable")
	run.ApplyErrors = strings.Count(flat, "Error: ")
	run.ApplyNamesDead = strings.Contains(flat, fmt.Sprintf("cluster %q", dead))

	out, err = env.tf(ctx, dir, opts.timeout, phaseArgs["plan"]...)
	switch code := exitCode(err); code {
	case 0:
	case 2:
		run.Left = planChanges(out)
	default:
		return run, fmt.Errorf("round %d, %s: the plan after the apply failed (exit %d):\n%s", round, c, code, tail(out, 40))
	}
	return run, nil
}

// exitCode is the exit code err carries: 0 for no error, -1 when the
// command did not run to an exit.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

var planSummary = regexp.MustCompile(`Plan: (\d+) to add, (\d+) to change, (\d+) to destroy`)

// planChanges is the number of changes in terraform plan's summary line
// (adds, changes and destroys), 0 when there is none.
func planChanges(out string) int {
	m := planSummary.FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	total := 0
	for _, f := range m[1:] {
		v, _ := strconv.Atoi(f)
		total += v
	}
	return total
}

// closedAddress is a host:port on 127.0.0.1 where nothing listens: that of
// a listener closed again at once.
func closedAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// silentListener accepts connections and never writes to them, not even a
// TLS handshake: a hung apiserver, or a firewall that lets SYNs through
// and drops the rest.
type silentListener struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

func startSilentListener() (*silentListener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &silentListener{l: l, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
		}
	}()
	return s, nil
}

func (s *silentListener) addr() string { return s.l.Addr().String() }

func (s *silentListener) stop() {
	_ = s.l.Close()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
}

// deadMarkdown is bench/DEAD.md: every run with its load, then the
// medians, ratios and verdicts.
func deadMarkdown(res DeadResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Wide mesh with one cluster dead: %d clusters, %d objects, %s dead\n\n", res.Clusters, res.Objects, res.Dead)
	fmt.Fprintf(&b, "Started %s on %d CPUs (%s), load average at start %s. One etcd for all apiservers, no SPIRE "+
		"(bench/cmd/bench/mesh.go). First apply, every cluster alive: %.1f s (CPU %.1f s, load up to %.2f). "+
		"Each run changes every object's bundle endpoint URL; with %s dead, %d of the changes are on it "+
		"(on_unreachable at its default, \"warn\").\n\n",
		res.Started.Format(time.RFC3339), res.Machine.CPUs, res.Machine.CPUModel, res.Machine.LoadAvg, res.Setup.Wall, res.Setup.CPU, res.Setup.Load, res.Dead, res.DeadObjs)
	b.WriteString("| round | case | plan wall | plan CPU | load (before, max) | changes planned | kept-state warning | apply wall | apply CPU | load | apply exit | unreachable errors (names the cluster) | all errors | apiserver down (changed before the kill) | changes left after apply |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range res.Runs {
		down := ""
		if r.Case == deadRestarted {
			down = fmt.Sprintf("%.1f s (%d)", r.Down, r.ChangedBeforeKill)
		}
		fmt.Fprintf(&b, "| %d | %s | %.2f s | %.2f s | %.2f, %.2f | %d | %v | %.2f s | %.2f s | %.2f | %d | %d (%v) | %d | %s | %d |\n",
			r.Round, r.Case, r.Plan.Wall, r.Plan.CPU, r.PlanLoadBefore, r.Plan.Load, r.PlanChanges, r.PlanKeptWarning,
			r.Apply.Wall, r.Apply.CPU, r.Apply.Load, r.ApplyExit, r.ApplyUnreachable, r.ApplyNamesDead, r.ApplyErrors, down, r.Left)
	}
	b.WriteString("\n| medians | plan wall | plan CPU | apply wall | apply CPU | plan wall ratio to alive | plan CPU ratio | apply wall ratio | apply CPU ratio | plan wall added | apply wall added | verdict (dead: plan added at most the bound; restarted: every apply exit 0, no error) |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range deadCases[1:] {
		v := res.Verdicts[c]
		fmt.Fprintf(&b, "| %s | %.2f s | %.2f s | %.2f s | %.2f s | %.2fx | %.2fx | %.2fx | %.2fx | %+.2f s | %+.2f s | **%s** |\n",
			c, v.Dead.PlanWall, v.Dead.PlanCPU, v.Dead.ApplyWall, v.Dead.ApplyCPU, v.PlanWallRatio, v.PlanCPURatio, v.ApplyWallRatio, v.ApplyCPURatio, v.PlanAdded, v.ApplyAdded, v.Verdict)
	}
	if v, ok := res.Verdicts[deadClosed]; ok {
		fmt.Fprintf(&b, "| alive | %.2f s | %.2f s | %.2f s | %.2f s | | | | | | | |\n", v.Alive.PlanWall, v.Alive.PlanCPU, v.Alive.ApplyWall, v.Alive.ApplyCPU)
	}
	fmt.Fprintf(&b, "\nTarget: a dead cluster adds at most the reachability bound (kube.PlanReachTimeout, %s) to a plan's wall time, judged on the medians of %d rounds. "+
		"A kube-apiserver restarted mid-apply (%s, killed once the apply changed %d of its objects, started again %s later) is waited for: "+
		"every such apply exits 0 with no error; its apply wall ratio is what the restart costs.\n",
		kube.PlanReachTimeout, deadRounds, res.Dead, blipKillAfter, blipDown)
	return b.String()
}
