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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// Benchmark targets, in the order they appear in tables.
const (
	targetZerotrust = "zerotrust"
	// targetZerotrustFramework is the same provider with its fast path
	// switched off (ZEROTRUST_FASTPATH=off): every request through the
	// framework, to show what internal/fastpath saves in the same run.
	targetZerotrustFramework = "zerotrust_framework"
	// targetPluginFloor is a do-nothing provider with zerotrust's schema on
	// the same framework, served the same way (bench/cmd/floorprovider).
	targetPluginFloor = "plugin_floor"
	targetFloor       = "terraform_data"
	targetKubernetes  = "kubernetes_manifest"
	targetKubectl     = "kubectl_manifest"
)

var allTargets = []string{targetZerotrust, targetZerotrustFramework, targetPluginFloor, targetFloor, targetKubernetes, targetKubectl}

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
	// fullCyclesMaxN and k8sDestroyMaxN shape the schedule (see schedule).
	fullCyclesMaxN int
	k8sDestroyMaxN int
	// scale is which part runs: "objects" (N objects on 3 clusters),
	// "clusters" (full-mesh bootstrap of opts.clusterCounts clusters with
	// real SPIRE) or "all".
	scale         string
	clusterCounts []int
	// trust adds the time-to-trust run to every full-mesh row and the heal
	// cases to the smallest (clusters_trust.go).
	trust bool
	// peersMaxN is the largest N the peer providers run at (kubernetes_manifest
	// also only up to k8sDestroyMaxN): their N=1000 rows alone took 20 of the
	// 45 minutes the whole benchmark may take.
	peersMaxN int
	// alsoTerraform are further CLIs (scripts/tool.sh names) that run the
	// zerotrust and floor targets at alsoN, so the report shows how each
	// Terraform version changes the picture.
	alsoTerraform []string
	alsoN         int
	// meshStates are the state backends the wide mesh runs with, in this
	// order, each with its own objects on the same clusters: "local" (the
	// state file) and "http" (a remote backend, mesh.go).
	meshStates []string
	stateURL   string // the bench's http state store (runMesh)
	// fleetState is the fleet's state backend: pg or local (fleet_state.go).
	fleetState string
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
	flag.IntVar(&opts.fullCyclesMaxN, "full-cycles-max-n", envInt("BENCH_FULL_CYCLES_MAX_N", 300),
		"largest N at which targets run a full apply/plan/destroy cycle in every run; above it each applies once, plans every run and destroys in the last (env BENCH_FULL_CYCLES_MAX_N)")
	flag.IntVar(&opts.k8sDestroyMaxN, "kubernetes-destroy-max-n", envInt("BENCH_KUBERNETES_DESTROY_MAX_N", 100),
		"largest N at which kubernetes_manifest's destroy is timed; above it its objects are deleted through the API (env BENCH_KUBERNETES_DESTROY_MAX_N)")
	flag.StringVar(&opts.scale, "scale", envOr("BENCH_SCALE", "all"), "which part runs: objects, clusters, courier (only the courier mesh of the smallest cluster count), lean (the N=1000 lean pair alone, see lean.go), mesh (the full mesh of BENCH_CLUSTERS clusters on one etcd, no SPIRE, see mesh.go), mesh-dead (that mesh at the largest BENCH_CLUSTERS count with one cluster dead, see dead.go), fleet (examples/n-cluster-mesh with real SPIRE and workloads at each BENCH_CLUSTERS count, see fleet.go) or all (env BENCH_SCALE)")
	clusterList := flag.String("clusters", envOr("BENCH_CLUSTERS", "3,6,10"), "cluster counts of the full-mesh part (env BENCH_CLUSTERS)")
	flag.BoolVar(&opts.trust, "trust", envOr("BENCH_TRUST", "true") == "true", "full-mesh part: also time to trust (workloads in every cluster) and, at the smallest count, time to heal (env BENCH_TRUST)")
	flag.IntVar(&opts.peersMaxN, "peers-max-n", envInt("BENCH_PEERS_MAX_N", 300), "largest N the peer providers run at (env BENCH_PEERS_MAX_N)")
	also := flag.String("also-terraform", envOr("BENCH_ALSO_TERRAFORM", "terraform-1.11"), "comma-separated further CLIs (scripts/tool.sh names) for the zerotrust and floor targets; \"none\" for none (env BENCH_ALSO_TERRAFORM)")
	flag.IntVar(&opts.alsoN, "also-n", envInt("BENCH_ALSO_N", 300), "N at which the further CLIs run (env BENCH_ALSO_N)")
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
	opts.meshStates = strings.Split(envOr("BENCH_MESH_STATE", "http,local"), ",")
	opts.fleetState = envOr("BENCH_FLEET_STATE", fleetStatePG)
	if opts.clusterCounts, err = parseInts(*clusterList); err != nil {
		fatalf("-clusters: %v", err)
	}
	switch opts.scale {
	case "objects", "clusters", "courier", "all":
	case "lean", "mesh", "mesh-dead", "fleet":
		// These need only zerotrust and terraform_data (and build no peer provider).
		*targets = targetZerotrust + "," + targetFloor
	default:
		fatalf("-scale %q: want objects, clusters, courier, lean, mesh, mesh-dead, fleet or all", opts.scale)
	}
	for _, t := range strings.Split(*also, ",") {
		if t = strings.TrimSpace(t); t != "" && t != "none" {
			opts.alsoTerraform = append(opts.alsoTerraform, t)
		}
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
	// Every ratio needs both floors.
	for _, floor := range []string{targetPluginFloor, targetFloor} {
		if !contains(opts.targets, floor) {
			opts.targets = append(opts.targets, floor)
		}
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
	// The flags and environment of .goreleaser.yml (CGO_ENABLED=0 included: a
	// cgo build maps libc and its resolver, ~1.5 MiB more RSS than a release),
	// so the binary measured is the one users get, plus -tags pprof, which compiles in the ZT_PPROF_DIR profiling hook
	// (pprof.go; pass it with -extra-env). Unset, the hook costs nothing at
	// run time; it makes the binary about 0.2 MiB larger than a release.
	logf("building the provider")
	provBin := filepath.Join(work, "bin", "terraform-provider-zerotrust")
	ldflags := "-ldflags=-s -w"
	if opts.noStrip {
		ldflags = "-ldflags="
	}
	buildEnv := append(os.Environ(), "CGO_ENABLED=0")
	if err := runCmd(ctx, root, buildEnv, "go", "build", "-trimpath", "-tags", "pprof", ldflags, "-o", provBin, "."); err != nil {
		return fmt.Errorf("building the provider: %w", err)
	}
	floorBin := filepath.Join(work, "bin", "terraform-provider-ztfloor")
	if err := runCmd(ctx, root, buildEnv, "go", "build", "-trimpath", ldflags, "-o", floorBin, "./bench/cmd/floorprovider"); err != nil {
		return fmt.Errorf("building the plugin floor: %w", err)
	}

	env, err := newTFEnv(work, tools["terraform"], map[string]string{
		targetZerotrust:   provBin,
		targetPluginFloor: floorBin,
		targetKubernetes:  tools["terraform-provider-kubernetes"],
		targetKubectl:     tools["terraform-provider-kubectl"],
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
		Started:               started.UTC(),
		TerraformVersion:      env.version,
		AlsoN:                 opts.alsoN,
		PeersMaxN:             opts.peersMaxN,
		Machine:               machineFacts(ctx, tools["terraform"]),
		Ns:                    opts.ns,
		Runs:                  opts.runs,
		FullCyclesMaxN:        opts.fullCyclesMaxN,
		KubernetesDestroyMaxN: opts.k8sDestroyMaxN,
		Targets:               opts.targets,
		Notes:                 []string{},
	}
	if *extraEnvFlag != "" {
		res.Notes = append(res.Notes, "terraform ran with extra environment: "+*extraEnvFlag)
	}

	switch opts.scale {
	case "lean":
		return runLean(ctx, env, opts, res.Machine)
	case "mesh":
		return runMesh(ctx, env, opts, res.Machine)
	case "mesh-dead":
		return runMeshDead(ctx, env, opts, res.Machine)
	case "fleet":
		return runFleet(ctx, env, opts, res.Machine)
	}
	// Process cost needs no cluster.
	logf("provider start to schema")
	res.Process = measureProcesses(ctx, env)

	if opts.scale == "objects" || opts.scale == "all" {
		if err := runObjectScale(ctx, env, opts, res); err != nil {
			return err
		}
	}
	if opts.scale == "courier" {
		if err := runCourierScale(ctx, env, opts, res); err != nil {
			return err
		}
		if err := writeOutputs(opts.outDir, res); err != nil {
			return err
		}
	}
	if opts.scale == "clusters" || opts.scale == "all" {
		if err := runClusterScale(ctx, env, opts, res); err != nil {
			return err
		}
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
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		res.Machine.LoadAvgEnd = strings.TrimSpace(string(b))
	}
	res.evaluate()
	return writeOutputs(opts.outDir, res)
}

// runObjectScale is the N-objects part: opts.ns ClusterFederatedTrustDomains
// spread over three clusters, every target, interleaved runs.
func runObjectScale(ctx context.Context, env *tfEnv, opts options, res *Results) error {
	logf("starting %d clusters", len(clusterNames))
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

	for _, n := range opts.ns {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := benchN(ctx, env, lab, audit, opts, n, targetsAt(opts, n), res); err != nil {
			return err
		}
		// Partial results survive a later failure or an interrupt.
		if err := writeOutputs(opts.outDir, res); err != nil {
			return err
		}
	}
	for _, name := range opts.alsoTerraform {
		logf("tool %s", name)
		bin, err := harness.Tool(name)
		if err != nil {
			return err
		}
		also, err := env.withTerraform(filepath.Join(env.work, "also-"+name), bin)
		if err != nil {
			return err
		}
		res.AlsoTerraform = append(res.AlsoTerraform, also.version)
		if err := benchN(ctx, also, lab, audit, opts, opts.alsoN, []string{targetZerotrust, targetPluginFloor, targetFloor}, res); err != nil {
			return fmt.Errorf("terraform %s: %w", also.version, err)
		}
		if err := writeOutputs(opts.outDir, res); err != nil {
			return err
		}
	}
	return nil
}

// startAuditedLab starts clusters whose API servers write the audit log the
// request counts come from (auditReader).
func startAuditedLab(ctx context.Context, names []string, dir string) (*harness.Lab, error) {
	return harness.Start(ctx, harness.Options{
		Names:    names,
		Dir:      dir,
		AuditLog: true,
		// The audit log must not rotate under the reader (lumberjack renames the file).
		APIServerFlags: []string{"--audit-log-maxsize=100000", "--audit-log-maxbackup=0"},
	})
}

// targetsAt are the targets that run at n (see options.peersMaxN).
func targetsAt(opts options, n int) []string {
	var out []string
	for _, t := range opts.targets {
		switch {
		case t == targetKubernetes && n > min(opts.peersMaxN, opts.k8sDestroyMaxN):
		case t == targetKubectl && n > opts.peersMaxN:
		default:
			out = append(out, t)
		}
	}
	return out
}

// benchN runs every target at n objects, runs times, interleaved: run r goes
// through the targets in an order rotated by r, so slow drifts in machine
// load spread over all targets instead of biasing one.
func benchN(ctx context.Context, env *tfEnv, lab *harness.Lab, audit *auditReader, opts options, n int, targets []string, res *Results) error {
	dirs := map[string]string{}
	for _, t := range targets {
		d, err := env.prepare(ctx, lab, t, n)
		if err != nil {
			return fmt.Errorf("%s N=%d: %w", t, n, err)
		}
		dirs[t] = d
	}
	samples := map[string][]phaseSample{}
	last := map[string][]string{} // phases of each target's last run
	for r := 0; r < opts.runs; r++ {
		for i := range targets {
			t := targets[(i+r)%len(targets)]
			phases := schedule(t, n, r, opts)
			last[t] = phases
			logf("terraform %s N=%d run %d/%d %s (%s)", env.version, n, r+1, opts.runs, t, strings.Join(phases, ", "))
			s, err := env.cycle(ctx, dirs[t], t, n, audit, opts.timeout, phases)
			if err != nil {
				return fmt.Errorf("%s N=%d run %d: %w", t, n, r+1, err)
			}
			samples[t] = append(samples[t], s...)
		}
	}
	for _, t := range targets {
		if appliesOnce(t, n, opts) {
			note := fmt.Sprintf("%s at N=%d (terraform %s): applied once (run 1), planned in each of the %d runs, ", t, n, env.version, opts.runs)
			if contains(last[t], "destroy") {
				note += fmt.Sprintf("destroyed by terraform in run %d: its apply and destroy are single runs.", opts.runs)
			} else {
				note += "not destroyed by terraform (its objects were deleted through the API afterwards, untimed): its apply is a single run, its destroy not measured at this N."
			}
			res.Notes = append(res.Notes, note)
		}
		if !contains(last[t], "destroy") {
			if err := deleteObjects(ctx, lab, t, n); err != nil {
				return fmt.Errorf("%s N=%d: deleting its objects: %w", t, n, err)
			}
		}
	}
	for _, t := range targets {
		res.Scale = append(res.Scale, summarize(t, env.version, n, samples[t])...)
	}
	return nil
}

// schedule returns the phases target times in run r (0-based) at n objects.
//
// Up to opts.fullCyclesMaxN every run is a full apply, plan, destroy cycle.
// Above it (N=1000 by default) Terraform core alone needs minutes per cycle
// (terraform_data: ~2 min at N=1000 here), so each target applies once,
// plans in every run (the comparison the targets in goals.go are about) and
// destroys in its last run.
//
// kubernetes_manifest is bound by client-go's default rate limit (5
// requests/s per provider alias, not configurable in that provider): about
// 0.9 s per object for one cycle on three clusters, so it always follows the
// apply-once schedule, and above opts.k8sDestroyMaxN its objects are deleted
// through the API instead of by a timed terraform destroy. With full cycles
// it alone would need over an hour.
func schedule(target string, n, r int, opts options) []string {
	if !appliesOnce(target, n, opts) {
		return []string{"apply", "plan", "destroy"}
	}
	var phases []string
	if r == 0 {
		phases = append(phases, "apply")
	}
	phases = append(phases, "plan")
	if r == opts.runs-1 && (target != targetKubernetes || n <= opts.k8sDestroyMaxN) {
		phases = append(phases, "destroy")
	}
	return phases
}

// appliesOnce tells whether target follows the apply-once schedule at n.
func appliesOnce(target string, n int, opts options) bool {
	return n > opts.fullCyclesMaxN || target == targetKubernetes
}

// deleteObjects removes the ClusterFederatedTrustDomains target created at n
// objects directly through the API: untimed, and outside any audit window.
func deleteObjects(ctx context.Context, lab *harness.Lab, target string, n int) error {
	gvr := kube.ClusterFederatedTrustDomain.GVR()
	clients := map[string]dynamic.Interface{}
	for _, name := range clusterNames {
		cfg := lab.Cluster(name).RESTConfig()
		cfg.QPS, cfg.Burst = 500, 1000
		c, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return err
		}
		clients[name] = c
	}
	for _, o := range objects(target, n) {
		err := clients[o.cluster].Resource(gvr).Delete(ctx, o.name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s/%s: %w", o.cluster, o.name, err)
		}
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
