// Command bench measures the provider against Terraform's own floor
// (terraform_data) and against the peer providers kubernetes_manifest and
// kubectl_manifest on real local kube-apiservers, and writes bench/REPORT.md,
// bench/results.json and bench/scaling.png. Run it through scripts/bench.sh
// (make bench); it is never part of make test.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/harness"
)

// Benchmark targets, in the order they appear in tables.
const (
	targetZerotrust  = "zerotrust"
	targetFloor      = "terraform_data"
	targetKubernetes = "kubernetes_manifest"
	targetKubectl    = "kubectl_manifest"
)

var allTargets = []string{targetZerotrust, targetFloor, targetKubernetes, targetKubectl}

var clusterNames = []string{"c1", "c2", "c3"}

// extraEnvFlag is -extra-env.
var extraEnvFlag = new(string)

type options struct {
	ns       []int
	runs     int
	targets  []string
	outDir   string
	workDir  string
	keepWork bool
	skipGo   bool
	noStrip  bool
	timeout  time.Duration
}

func main() {
	var opts options
	nList := flag.String("n", envOr("BENCH_N", "100,300,1000"), "comma-separated object counts (env BENCH_N)")
	runs := flag.Int("runs", envInt("BENCH_RUNS", 3), "runs per target and N, interleaved (env BENCH_RUNS)")
	targets := flag.String("targets", envOr("BENCH_TARGETS", strings.Join(allTargets, ",")), "comma-separated targets (env BENCH_TARGETS)")
	flag.StringVar(&opts.outDir, "out", "bench", "directory for REPORT.md, results.json and scaling.png")
	flag.StringVar(&opts.workDir, "work", "", "scratch directory (default: a new temporary directory)")
	flag.BoolVar(&opts.keepWork, "keep", false, "keep the scratch directory")
	flag.BoolVar(&opts.skipGo, "skip-go-bench", false, "skip the bundle fetch Go benchmark")
	flag.BoolVar(&opts.noStrip, "no-strip", false, "keep symbols in the provider binary (for perf record; sizes then differ from a release)")
	flag.DurationVar(&opts.timeout, "command-timeout", 30*time.Minute, "limit for one terraform command")
	extraEnv := flag.String("extra-env", "", "comma-separated K=V added to terraform's environment (for experiments; recorded in the notes)")
	reportFrom := flag.String("report-from", "", "only rewrite REPORT.md and scaling.png from this results.json (after editing ANALYSIS.md)")
	flag.Parse()

	if *reportFrom != "" {
		if err := rewriteReport(*reportFrom, opts.outDir); err != nil {
			fatalf("%v", err)
		}
		return
	}

	var err error
	if opts.ns, err = parseInts(*nList); err != nil {
		fatalf("-n: %v", err)
	}
	opts.runs = *runs
	if opts.runs < 1 {
		fatalf("-runs must be at least 1")
	}
	for _, t := range strings.Split(*targets, ",") {
		t = strings.TrimSpace(t)
		if !contains(allTargets, t) {
			fatalf("unknown target %q (known: %s)", t, strings.Join(allTargets, ", "))
		}
		opts.targets = append(opts.targets, t)
	}
	if !contains(opts.targets, targetFloor) {
		opts.targets = append(opts.targets, targetFloor) // every ratio needs the floor
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	extraEnvFlag = extraEnv
	if err := run(ctx, opts); err != nil {
		fatalf("%v", err)
	}
}

func run(ctx context.Context, opts options) error {
	started := time.Now()
	root, err := harness.RepoRoot()
	if err != nil {
		return err
	}
	if !filepath.IsAbs(opts.outDir) {
		opts.outDir = filepath.Join(root, opts.outDir)
	}
	work := opts.workDir
	if work == "" {
		if work, err = os.MkdirTemp("", "zt-bench-"); err != nil {
			return err
		}
	}
	if !opts.keepWork {
		defer os.RemoveAll(work)
	}
	logf("scratch directory %s", work)

	// Tools first: the first run builds the peers (minutes), later runs reuse the cache.
	tools := map[string]string{}
	names := []string{"terraform"}
	if contains(opts.targets, targetKubernetes) {
		names = append(names, "terraform-provider-kubernetes")
	}
	if contains(opts.targets, targetKubectl) {
		names = append(names, "terraform-provider-kubectl")
	}
	for _, name := range names {
		logf("tool %s", name)
		p, err := harness.Tool(name)
		if err != nil {
			return err
		}
		tools[name] = p
	}
	// The flags of .goreleaser.yml, so the binary measured is the one users get.
	logf("building the provider")
	provBin := filepath.Join(work, "bin", "terraform-provider-zerotrust")
	ldflags := "-ldflags=-s -w"
	if opts.noStrip {
		ldflags = "-ldflags="
	}
	if err := runCmd(ctx, root, nil, "go", "build", "-trimpath", ldflags, "-o", provBin, "."); err != nil {
		return fmt.Errorf("building the provider: %w", err)
	}

	env, err := newTFEnv(work, tools["terraform"], map[string]string{
		targetZerotrust:  provBin,
		targetKubernetes: tools["terraform-provider-kubernetes"],
		targetKubectl:    tools["terraform-provider-kubectl"],
	}, root)
	if err != nil {
		return err
	}

	if *extraEnvFlag != "" {
		for _, kv := range strings.Split(*extraEnvFlag, ",") {
			env.env = append(env.env, strings.TrimSpace(kv))
		}
	}
	res := &Results{
		Started: started.UTC(),
		Machine: machineFacts(ctx, tools["terraform"]),
		Ns:      opts.ns,
		Runs:    opts.runs,
		Targets: opts.targets,
		Notes:   []string{},
	}
	if *extraEnvFlag != "" {
		res.Notes = append(res.Notes, "terraform ran with extra environment: "+*extraEnvFlag)
	}

	// Process cost needs no cluster.
	logf("provider start to schema")
	res.Process = measureProcesses(ctx, env)

	logf("starting %d clusters", len(clusterNames))
	lab, err := harness.Start(ctx, harness.Options{
		Names:    clusterNames,
		Dir:      filepath.Join(work, "lab"),
		AuditLog: true,
		// The audit log must not rotate under the reader (lumberjack renames the file).
		APIServerFlags: []string{"--audit-log-maxsize=100000", "--audit-log-maxbackup=0"},
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := lab.Stop(); err != nil {
			logf("stopping clusters: %v", err)
		}
	}()
	audit := newAuditReader(lab)

	for _, n := range opts.ns {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := benchN(ctx, env, lab, audit, opts, n, res); err != nil {
			return err
		}
		// Partial results survive a later failure or an interrupt.
		if err := writeOutputs(opts.outDir, res); err != nil {
			return err
		}
	}

	if !opts.skipGo {
		logf("bundle fetch Go benchmark")
		gb, err := bundleFetchBench(ctx, root)
		if err != nil {
			res.Notes = append(res.Notes, "bundle fetch benchmark failed: "+err.Error())
		}
		res.BundleFetch = gb
	}
	res.Finished = time.Now().UTC()
	res.evaluate()
	return writeOutputs(opts.outDir, res)
}

// benchN runs every target at n objects, runs times, interleaved: run r goes
// through the targets in an order rotated by r, so slow drifts in machine
// load spread over all targets instead of biasing one.
func benchN(ctx context.Context, env *tfEnv, lab *harness.Lab, audit *auditReader, opts options, n int, res *Results) error {
	dirs := map[string]string{}
	for _, t := range opts.targets {
		d, err := env.prepare(ctx, lab, t, n)
		if err != nil {
			return fmt.Errorf("%s N=%d: %w", t, n, err)
		}
		dirs[t] = d
	}
	samples := map[string][]phaseSample{}
	for r := 0; r < opts.runs; r++ {
		for i := range opts.targets {
			t := opts.targets[(i+r)%len(opts.targets)]
			logf("N=%d run %d/%d %s", n, r+1, opts.runs, t)
			s, err := env.cycle(ctx, dirs[t], t, n, audit, opts.timeout)
			if err != nil {
				return fmt.Errorf("%s N=%d run %d: %w", t, n, r+1, err)
			}
			samples[t] = append(samples[t], s...)
		}
	}
	for _, t := range opts.targets {
		res.Scale = append(res.Scale, summarize(t, n, samples[t])...)
	}
	return nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list")
	}
	sort.Ints(out)
	return out, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil {
		return v
	}
	return def
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: %s %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: error: %s\n", fmt.Sprintf(format, args...))
	os.Exit(1)
}
