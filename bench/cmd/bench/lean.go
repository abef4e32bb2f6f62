package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The lean pair (BENCH_SCALE=lean, make bench-lean): N objects of
// zerotrust_federated_trust_domain against N terraform_data on the bench's
// three clusters, both configured with count and every value inline from
// count.index (tfEnv.config), both applied first; then `terraform plan`
// with refresh, the two interleaved, round after round until the judged
// ratio settles (judgeLean) or leanMaxRounds or leanBudget runs out. Every
// plan records its wall time, the CPU of terraform and of the provider, the
// API requests, and the load average before and during it; a plan that
// fails or is not empty stops the run, since its time would measure
// something other than a plan that changes nothing.

// leanMaxRounds and leanBudget bound the rounds: at N=1000 one round takes
// about 7 s on a quiet machine, and the whole run, clusters and applies
// included, should stay within ten minutes.
var (
	leanMaxRounds = envInt("BENCH_LEAN_MAX_ROUNDS", 20)
	leanBudget    = time.Duration(envInt("BENCH_LEAN_BUDGET_S", 420)) * time.Second
)

// LeanResult is what bench/lean.json holds.
type LeanResult struct {
	Started time.Time         `json:"started"`
	Machine Machine           `json:"machine"`
	N       int               `json:"n"`
	Applies map[string]Sample `json:"applies"`
	Rounds  []leanRound       `json:"rounds"`
	Policy  leanPolicy        `json:"policy"`
	Verdict leanVerdict       `json:"verdict"`
}

// Sample is one untimed-for-the-verdict command's cost (the applies).
type Sample struct {
	Wall float64 `json:"wall_s"`
	CPU  float64 `json:"cpu_s"`
	Load float64 `json:"load1_max"`
}

func runLean(ctx context.Context, env *tfEnv, opts options, machine Machine) error {
	n := opts.ns[len(opts.ns)-1]
	lab, err := startAuditedLab(ctx, clusterNames, filepath.Join(env.work, "lab"))
	if err != nil {
		return err
	}
	defer func() {
		if err := lab.Stop(); err != nil {
			logf("stopping clusters: %v", err)
		}
	}()
	audit := newAuditReader(lab.Clusters)
	res := LeanResult{Started: time.Now().UTC(), Machine: machine, N: n, Applies: map[string]Sample{}, Policy: defaultLeanPolicy}
	targets := []string{targetZerotrust, targetFloor}
	dirs := map[string]string{}
	for _, t := range targets {
		if dirs[t], err = env.prepare(ctx, lab, t, n); err != nil {
			return fmt.Errorf("%s N=%d: %w", t, n, err)
		}
		logf("lean: %s N=%d apply", t, n)
		s, load, out, err := leanMeasured(ctx, env, dirs[t], opts.timeout, phaseArgs["apply"]...)
		if err != nil {
			return fmt.Errorf("%s N=%d apply: %w\n%s", t, n, err, tail(out, 40))
		}
		res.Applies[t] = Sample{Wall: s.Wall, CPU: s.CPUTotal, Load: load.max}
	}
	deadline := time.Now().Add(leanBudget)
	for r := 1; r <= leanMaxRounds && time.Now().Before(deadline); r++ {
		round := leanRound{Round: r}
		order := targets
		if r%2 == 0 {
			order = []string{targets[1], targets[0]}
		}
		for _, t := range order {
			audit.mark()
			s, load, out, err := leanMeasured(ctx, env, dirs[t], opts.timeout, phaseArgs["plan"]...)
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == 2 {
				return fmt.Errorf("%s N=%d round %d: the plan after the apply is not empty, so it measures no unchanged plan:\n%s", t, n, r, tail(out, 40))
			}
			if err != nil {
				return fmt.Errorf("%s N=%d round %d: terraform plan failed, so it measures no plan:\n%s", t, n, r, tail(out, 40))
			}
			time.Sleep(300 * time.Millisecond) // the last audit events land after the responses
			api, err := audit.collect()
			if err != nil {
				return err
			}
			ls := leanSample{Wall: s.Wall, CPU: s.CPUTotal, CPUProvider: s.CPUProvider, CPUTerraform: s.CPUTotal - s.CPUProvider,
				LoadBefore: load.before, LoadMax: load.max, API: api, ProviderRSS: s.ProviderRSS}
			if t == targetZerotrust {
				round.ZT = ls
			} else {
				round.TF = ls
			}
		}
		res.Rounds = append(res.Rounds, round)
		res.Verdict = judgeLean(res.Rounds, machine.CPUs, res.Policy)
		logf("lean: round %d: zerotrust %.2f s (CPU %.2f s), terraform_data %.2f s (CPU %.2f s), load %.2f; judged %s ratio spread %.1f%%",
			r, round.ZT.Wall, round.ZT.CPU, round.TF.Wall, round.TF.CPU, round.load(), res.Verdict.Judged, 100*res.Verdict.Spread)
		if res.Verdict.Settled {
			break
		}
	}
	md := leanMarkdown(res)
	fmt.Print(md)
	return writePart(opts.outDir, "LEAN", res, md)
}

// loadSeen is the 1-minute load average as a command started and the
// largest value it reached while the command ran.
type loadSeen struct{ before, max float64 }

// leanMeasured is tfEnv.measured with the load average sampled every half
// second while the command runs.
func leanMeasured(ctx context.Context, env *tfEnv, dir string, limit time.Duration, args ...string) (phaseSample, loadSeen, string, error) {
	seen := loadSeen{before: load1()}
	seen.max = seen.before
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				l := load1()
				mu.Lock()
				seen.max = max(seen.max, l)
				mu.Unlock()
			}
		}
	}()
	s, out, err := env.measured(ctx, dir, limit, args...)
	close(done)
	wg.Wait()
	seen.max = max(seen.max, load1())
	return s, seen, out, err
}

// load1 is the 1-minute load average, 0 when /proc/loadavg cannot be read.
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// leanMarkdown is the lean pair's table in the shape the issue that asked
// for it used, with CPU, load and requests beside each plan.
func leanMarkdown(res LeanResult) string {
	var b strings.Builder
	v := res.Verdict
	fmt.Fprintf(&b, "## Lean pair: N = %d, `terraform plan` with refresh\n\n", res.N)
	fmt.Fprintf(&b, "Started %s on %d CPUs (%s), load average at start %s. Applies (once each, before the rounds): ",
		res.Started.Format(time.RFC3339), res.Machine.CPUs, res.Machine.CPUModel, res.Machine.LoadAvg)
	for _, t := range []string{targetZerotrust, targetFloor} {
		a := res.Applies[t]
		fmt.Fprintf(&b, "%s %.1f s (CPU %.1f s, load up to %.2f); ", t, a.Wall, a.CPU, a.Load)
	}
	b.WriteString("\n\n| round | zerotrust wall | CPU (terraform + provider) | load | requests | terraform_data wall | CPU | load | wall ratio | CPU ratio |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range res.Rounds {
		fmt.Fprintf(&b, "| %d | %.2f s | %.2f s (%.2f + %.2f) | %.2f | %d | %.2f s | %.2f s | %.2f | %.2fx | %.2fx |\n",
			r.Round, r.ZT.Wall, r.ZT.CPU, r.ZT.CPUTerraform, r.ZT.CPUProvider, r.ZT.LoadMax, sumCounts(r.ZT.API),
			r.TF.Wall, r.TF.CPU, r.TF.LoadMax, safeRatio(r.ZT.Wall, r.TF.Wall), safeRatio(r.ZT.CPU, r.TF.CPU))
	}
	fmt.Fprintf(&b, "\n| rounds %v (medians) | wall | CPU | of which provider |\n|---|---|---|---|\n", v.Window)
	fmt.Fprintf(&b, "| zerotrust | %.2f s | %.2f s | %.2f s |\n| terraform_data | %.2f s | %.2f s | |\n", v.ZTWall, v.ZTCPU, v.ZTProvider, v.TFWall, v.TFCPU)
	fmt.Fprintf(&b, "| **ratio** | **%.2fx** | **%.2fx** | |\n\n", v.WallRatio, v.CPURatio)
	settled := "settled"
	if !v.Settled {
		settled = "did NOT settle (round or time limit reached)"
	}
	fmt.Fprintf(&b, "Judged: %s ratio, spread %.1f%% over the window, %s. Highest load %.2f per core.\n\n", v.Judged, 100*v.Spread, settled, v.MaxLoadPerCore)
	if v.WallVerdict != "" {
		fmt.Fprintf(&b, "Wall-time verdict (at most %.1fx): **%s** (%.2fx).\n", res.Policy.Target, v.WallVerdict, v.WallRatio)
	} else {
		fmt.Fprintf(&b, "Wall-time verdict: refused: %s.\n", v.Refused)
	}
	fmt.Fprintf(&b, "CPU-time verdict (at most %.1fx): **%s** (%.2fx).\n", res.Policy.Target, v.CPUVerdict, v.CPURatio)
	return b.String()
}

func sumCounts(m map[string]int) int {
	total := 0
	for _, c := range m {
		total += c
	}
	return total
}
