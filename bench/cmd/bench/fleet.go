package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// The fleet (BENCH_SCALE=fleet, make bench-fleet): examples/n-cluster-mesh
// as shipped, fed through its variables, on N clusters with real SPIRE, at
// each count of BENCH_CLUSTERS (3 and 25 by default, the small one first so
// the report sets the large one beside it from the same run). Per count, a
// lab of its own with N+1 clusters on one etcd (each apiserver under its own
// prefix, as the wide mesh), and per cluster a SPIRE server,
// spire-controller-manager, the exec endpoint the data sources use, a
// k8s_psat agent and a go-spiffe workload in a Pod labelled for the
// example's `workloads`; every third cluster, starting with the first, is
// laid out as the SPIFFE Helm chart does (spire_install = "helm").
//
// In order, on one lab: one apply of the N clusters timed until every
// ordered pair of workloads handshakes (time to trust); the plan of the
// converged mesh; that plan with one cluster behind a listener that never
// answers, against the same plan with it answering; cluster N+1 joins in
// one apply (its 2N pairs timed from that apply's start) and leaves in the
// next (leaving = true, then its entry removed); a forced rotation of one
// cluster, whose plan must show exactly the repairs of the peers left
// holding its old bundle, healed by one apply; a destroy.

const (
	// fleetSpireBatch is how many SPIRE servers start at once: each start
	// runs the server, spire-controller-manager and the exec endpoint, and
	// applies objects to its cluster; a 2-core machine starting 26 at once
	// spends its time switching between them.
	fleetSpireBatch = 5
	// fleetPlanRounds is how many times the healthy plan and the plan with
	// one cluster dead run, alternating (medians reported).
	fleetPlanRounds = 3
	// fleetTrustCap bounds the waits for handshakes and bundles, from the
	// start of the apply, and how long a workload may wait for its SVID
	// (from before the apply): at 25 clusters the apply alone may take
	// minutes on a loaded machine.
	fleetTrustCap = 12 * time.Minute
	// fleetReserveMiB is the memory left to everything but the lab
	// (terraform, the provider, the rest of the machine) when the size a
	// machine holds is worked out (fleetFits).
	fleetReserveMiB = 2048
	// fleetClusterMiB is a cluster's share of the lab's memory before a
	// row has measured it: an apiserver, its part of etcd, a SPIRE server,
	// spire-controller-manager, an agent, a workload (the RSS summed at 6
	// clusters, bench/FLEET.md, rounded up; their proportional set size is
	// less).
	fleetClusterMiB = 700
	// fleetApp is the label value of the workloads' Pods (the example's
	// workloads.pod_labels).
	fleetApp = trustCSID
)

// FleetResult is bench/fleet.json.
type FleetResult struct {
	Started time.Time `json:"started"`
	// State is the state backend every row kept its state in.
	State      string     `json:"state"`
	Finished   time.Time  `json:"finished"`
	Machine    Machine    `json:"machine"`
	LoadBefore string     `json:"loadavg_before"`
	LoadAfter  string     `json:"loadavg_after"`
	Rows       []FleetRow `json:"rows"`
}

// FleetRow is one cluster count.
type FleetRow struct {
	Clusters int `json:"clusters"`
	// Asked is the count asked for; when the machine's memory cannot hold
	// it, Clusters is the largest count it holds and Reduced says why.
	Asked   int      `json:"asked"`
	Reduced string   `json:"reduced,omitempty"`
	Helm    []string `json:"helm_layout"`
	// LabStart is the start of the N+1 clusters with their SPIRE
	// installations; MemAvailable* what /proc/meminfo said before it and
	// after the apply.
	LabStart             float64 `json:"lab_start_s"`
	MemAvailableBeforeMi float64 `json:"mem_available_before_mib"`
	// OtherAPIServers is how many kube-apiservers of others (tests of other
	// checkouts sharing the machine) ran when the row started.
	OtherAPIServers     int     `json:"other_apiservers"`
	MemAvailableAfterMi float64 `json:"mem_available_after_mib"`
	// Resources the apply creates: N*(N-1) federations and N
	// ClusterSPIFFEIDs; DataSources it reads (three per cluster, and the
	// mesh's status).
	Resources   int        `json:"resources"`
	DataSources int        `json:"data_sources"`
	Pairs       int        `json:"pairs"`
	Apply       FleetPhase `json:"apply"`
	// TimeToTrust runs from the start of the apply until the last ordered
	// pair completed its first handshake; AfterApply is the part of it
	// after the apply ended; PairTimes spreads the pairs' own times.
	TimeToTrust float64     `json:"time_to_trust_s"`
	AfterApply  float64     `json:"after_apply_s"`
	PairTimes   FleetSpread `json:"pair_times_s"`
	BundlesHeld float64     `json:"bundles_held_s"`
	Dials       int         `json:"dials"`
	// SweepWall is one more handshake of every pair, all trusting: the
	// floor of the poll (trustDialers at a time, each a process the agent
	// attests), which bounds how soon the last pair can be seen.
	SweepWall float64     `json:"sweep_wall_s"`
	SweepOK   int         `json:"sweep_ok"`
	Plan      FleetPhase  `json:"plan"`
	PlanEmpty bool        `json:"plan_empty"`
	Dead      FleetDead   `json:"dead"`
	Join      FleetJoin   `json:"join"`
	Leave     FleetLeave  `json:"leave"`
	Rotation  FleetRotate `json:"rotation"`
	// Procs are the lab's processes after the time-to-trust apply, by
	// program.
	Procs   []ProcGroup `json:"procs"`
	Destroy float64     `json:"destroy_s"`
	Errors  []string    `json:"errors,omitempty"`
}

// FleetPhase is one timed terraform command of the fleet.
type FleetPhase struct {
	Wall           float64 `json:"wall_s"`
	CPU            float64 `json:"cpu_s"` // terraform and its providers
	CPUProvider    float64 `json:"cpu_provider_s"`
	ProviderRSSMiB float64 `json:"provider_peak_rss_mib"`
	LabCPU         float64 `json:"lab_cpu_s"` // every long-running lab process, during the command
	// LabShortCPU is the lab's processes that started and ended during the
	// command: the spire-server CLI runs behind pod exec (wait_for_bundle,
	// check_spire, the data sources' bundle reads) and the handshake polls.
	LabShortCPU    float64 `json:"lab_short_lived_cpu_s"`
	LoadMax        float64 `json:"load1_max"`
	MsPerObject    float64 `json:"ms_per_object"`
	CPUMsPerObject float64 `json:"cpu_ms_per_object"`
}

// FleetSpread is the median, 90th percentile and largest of some times.
type FleetSpread struct {
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	Max    float64 `json:"max"`
}

func pairSpread(ds []time.Duration) FleetSpread {
	if len(ds) == 0 {
		return FleetSpread{}
	}
	v := make([]float64, len(ds))
	for i, d := range ds {
		v[i] = d.Seconds()
	}
	slices.Sort(v)
	p90 := max(0, (len(v)*9+9)/10-1) // nearest rank
	return FleetSpread{Median: round3(median(v)), P90: round3(v[p90]), Max: round3(v[len(v)-1])}
}

// fleet is one row's lab: the clusters (the last one joins later), their
// SPIRE installations and workloads, and the example's directory.
type fleet struct {
	env     *tfEnv
	opts    options
	dir     string
	lab     *harness.Lab
	members []*meshMember
	helm    []bool
	ws      *meshWorkloads
	row     *FleetRow
	state   *fleetState
}

func runFleet(ctx context.Context, env *tfEnv, opts options, machine Machine) error {
	res := FleetResult{Started: time.Now().UTC(), State: opts.fleetState, Machine: machine, LoadBefore: loadavg()}
	state, err := startFleetState(ctx, opts.fleetState)
	if err != nil {
		return err
	}
	defer state.stop()
	write := func() error {
		res.Finished, res.LoadAfter = time.Now().UTC(), loadavg()
		md := fleetMarkdown(res)
		return writePart(opts.outDir, fleetReport(res.State), res, md)
	}
	for _, n := range opts.clusterCounts {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n < 2 {
			return fmt.Errorf("fleet: %d clusters: a mesh needs at least two", n)
		}
		row := FleetRow{Clusters: n, Asked: n}
		if fit, why := fleetFits(n, res.Rows); fit < n {
			if fit < 2 {
				return fmt.Errorf("fleet: %s", why)
			}
			row.Clusters, row.Reduced = fit, why
			logf("fleet: %s", why)
		}
		err := fleetRow(ctx, env, opts, state, row.Clusters, &row)
		if err != nil {
			row.Errors = append(row.Errors, err.Error())
			logf("fleet %d: %v", n, err)
		}
		res.Rows = append(res.Rows, row)
		if werr := write(); werr != nil {
			return werr
		}
	}
	fmt.Print(fleetMarkdown(res))
	var failed []string
	for _, r := range res.Rows {
		if len(r.Errors) > 0 {
			failed = append(failed, strconv.Itoa(r.Clusters))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("fleet: the rows of %s clusters have errors (bench/FLEET.md lists them)", strings.Join(failed, ", "))
	}
	return nil
}

// fleetFits is the largest count up to n whose lab (n+1 clusters) fits
// in the memory the machine has available now, less fleetReserveMiB, each
// cluster taking what the largest row before measured per cluster (else
// fleetClusterMiB); and, when that is less than n, why.
func fleetFits(n int, before []FleetRow) (int, string) {
	per, from := float64(fleetClusterMiB), "estimated"
	for _, r := range before {
		var pss float64
		for _, g := range r.Procs {
			pss += g.PSSMiB
		}
		if pss > 0 {
			per, from = pss/float64(r.Clusters+1), fmt.Sprintf("the lab's proportional set size at %d clusters", r.Clusters)
		}
	}
	avail := memAvailableMiB()
	fit := int((avail-fleetReserveMiB)/per) - 1
	if fit >= n {
		return n, ""
	}
	return fit, fmt.Sprintf("%d clusters (a lab of %d) need about %.0f MiB at %.0f MiB per cluster (%s); the machine has %.0f MiB available, "+
		"%d MiB of it kept for terraform, the provider and the rest of the machine: ran %d clusters, the most that fit",
		n, n+1, float64(n+1)*per, per, from, avail, fleetReserveMiB, max(fit, 0))
}

// fleetRow starts the lab of n+1 clusters, runs the row's cases on it and
// stops it. The error is what ended the row early.
func fleetRow(ctx context.Context, env *tfEnv, opts options, state *fleetState, n int, row *FleetRow) error {
	row.MemAvailableBeforeMi, row.OtherAPIServers = memAvailableMiB(), countProcs("kube-apiserver")
	f := &fleet{env: env, opts: opts, row: row, state: state, dir: filepath.Join(env.work, "fleet", fmt.Sprintf("n%02d", n))}
	defer f.stop()
	start := time.Now()
	logf("fleet %d: starting %d clusters on one etcd, each with SPIRE", n, n+1)
	if err := f.start(ctx, n+1); err != nil {
		return fmt.Errorf("starting %d clusters with SPIRE (MemAvailable %.0f MiB before, %.0f MiB now): %w",
			n+1, row.MemAvailableBeforeMi, memAvailableMiB(), err)
	}
	row.LabStart = round3(time.Since(start).Seconds())
	for i, h := range f.helm[:n] {
		if h {
			row.Helm = append(row.Helm, f.members[i].cluster.Name)
		}
	}
	logf("fleet %d: %d clusters ready in %.0f s (%d in the chart's layout)", n, n+1, row.LabStart, len(row.Helm))
	if err := f.prepare(ctx); err != nil {
		return err
	}
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"time to trust", f.trust},
		{"plan", f.plan},
		{"dead cluster", f.dead},
		{"join and leave", f.joinLeave},
		{"forced rotation", f.rotate},
	}
	for _, s := range steps {
		if err := s.run(ctx); err != nil {
			// What follows would start from a broken mesh.
			row.Errors = append(row.Errors, s.name+": "+err.Error())
			logf("fleet %d: %s: %v", n, s.name, err)
			break
		}
	}
	f.ws.stopAll()
	s, out, err := env.measured(ctx, f.dir, opts.timeout, phaseArgs["destroy"]...)
	row.Destroy = round3(s.Wall)
	if err != nil {
		return fmt.Errorf("terraform destroy: %w\n%s", err, tail(out, 30))
	}
	return nil
}

// start starts count clusters on one etcd and a SPIRE installation in each.
func (f *fleet) start(ctx context.Context, count int) error {
	names := make([]string, count)
	for i := range names {
		names[i] = fmt.Sprintf("f%02d", i+1)
	}
	lab, err := harness.Start(ctx, harness.Options{Names: names, Dir: filepath.Join(f.env.work, "fleet", fmt.Sprintf("lab-%02d", count)), SharedEtcd: true})
	if err != nil {
		return err
	}
	f.lab = lab
	for from := 0; from < count; from += fleetSpireBatch {
		batch := lab.Clusters[from:min(count, from+fleetSpireBatch)]
		spires, err := harness.StartSpires(ctx, batch, func(c *harness.Cluster) harness.SpireOptions {
			return harness.SpireOptions{TrustDomain: c.Name + ".zt.test", ControllerManager: true, Helm: fleetHelm(slices.Index(names, c.Name))}
		})
		if err != nil {
			return fmt.Errorf("SPIRE of %s to %s: %w", batch[0].Name, batch[len(batch)-1].Name, err)
		}
		for i, s := range spires {
			m := &meshMember{cluster: batch[i], spire: s}
			f.members = append(f.members, m)
			f.helm = append(f.helm, fleetHelm(from+i))
			if m.admin, err = grpc.NewClient("unix://"+s.SocketPath, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
				return err
			}
		}
		logf("fleet: SPIRE ready on %d of %d clusters", len(f.members), count)
	}
	return nil
}

// fleetHelm: every third cluster, the first among them, has the chart's layout.
func fleetHelm(i int) bool { return i%3 == 0 }

func (f *fleet) stop() {
	stopMesh(f.members, nil)
	if f.lab != nil {
		if err := f.lab.Stop(); err != nil {
			logf("fleet: stopping clusters: %v", err)
		}
	}
}

// prepare copies the example, initializes it and starts every cluster's
// agent (the joiner's too) and the mesh's workloads, which wait for SVIDs.
func (f *fleet) prepare(ctx context.Context) error {
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return err
	}
	src, err := os.ReadFile(filepath.Join(f.env.root, "examples", "n-cluster-mesh", "main.tf"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(f.dir, "main.tf"), src, 0o644); err != nil {
		return err
	}
	n := len(f.members) - 1
	if err := f.state.configure(f.env, f.dir, fmt.Sprintf("fleet_n%02d", n)); err != nil {
		return err
	}
	if err := f.writeVars(n, nil); err != nil {
		return err
	}
	if out, err := f.env.tf(ctx, f.dir, 10*time.Minute, "init", "-input=false", "-no-color"); err != nil {
		return fmt.Errorf("terraform init: %w\n%s", err, tail(out, 40))
	}
	f.ws = newMeshWorkloads(f.members)
	f.ws.readyTimeout = fleetTrustCap
	// The joiner's workload is deployed just before its join (joinLeave):
	// one waiting from now would give up on its SVID during a long run.
	if err := f.ws.startFirst(ctx, "fleet", n); err != nil {
		return fmt.Errorf("agents and workloads: %w", err)
	}
	return nil
}

// writeVars writes terraform.tfvars.json: the first n clusters (kubeconfig,
// context, bundle endpoint URL, since the lab serves no Route or Ingress to
// read it from, trust domain, so that a cluster that does not answer keeps
// its peers' federations, spire_install on the chart's) as edit changes
// cluster i's entry, and the workloads selected by their Pods' label.
func (f *fleet) writeVars(n int, edit func(i int, v map[string]any)) error {
	clusters := map[string]any{}
	for i, m := range f.members[:n] {
		v := map[string]any{
			"config_path": m.cluster.Kubeconfig, "config_context": m.cluster.Name,
			"bundle_endpoint_url": m.spire.BundleEndpointURL, "trust_domain": m.spire.TrustDomain,
		}
		if f.helm[i] {
			v["spire_install"] = "helm"
		}
		if edit != nil {
			edit(i, v)
		}
		clusters[m.cluster.Name] = v
	}
	data, err := json.MarshalIndent(map[string]any{
		"clusters":  clusters,
		"workloads": map[string]any{"pod_labels": map[string]string{"app": fleetApp}},
	}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(f.dir, "terraform.tfvars.json"), data, 0o600)
}

// timed runs one terraform command, with the lab's CPU and the load over it.
func (f *fleet) timed(ctx context.Context, objects int, args ...string) (FleetPhase, string, error) {
	labBefore := labProcs().cpu()
	s, load, out, err := leanMeasured(ctx, f.env, f.dir, f.opts.timeout, args...)
	p := FleetPhase{
		Wall: round3(s.Wall), CPU: round3(s.CPUTotal), CPUProvider: round3(s.CPUProvider),
		ProviderRSSMiB: round3(float64(s.ProviderRSS) / (1 << 20)), LabCPU: round3(labProcs().cpu() - labBefore), LoadMax: load.max,
		LabShortCPU: round3(s.CPUOthers),
	}
	if objects > 0 {
		p.MsPerObject = round3(1000 * s.Wall / float64(objects))
		p.CPUMsPerObject = round3(1000 * s.CPUTotal / float64(objects))
	}
	return p, out, err
}

// trust is the time-to-trust run: one apply of the first n clusters, every
// pair among them polled from its start.
func (f *fleet) trust(ctx context.Context) error {
	n, row := len(f.members)-1, f.row
	row.Pairs, row.Resources, row.DataSources = n*(n-1), n*(n-1)+n, 3*n+1
	start := time.Now()
	poll := startPairPollOf(ctx, f.ws, n, start, fleetTrustCap)
	bundles := startBundlePoll(ctx, f.members[:n], start, fleetTrustCap)
	p, out, err := f.timed(ctx, row.Resources, phaseArgs["apply"]...)
	row.Apply = p
	if err != nil {
		poll.stop()
		bundles.stop()
		return fmt.Errorf("apply: %v\n%s", err, tail(out, 30))
	}
	if added := meshAdded(out); added != row.Resources {
		row.Errors = append(row.Errors, fmt.Sprintf("the apply added %d resources, want %d", added, row.Resources))
	}
	if held, _, err := bundles.wait(); err == nil {
		row.BundlesHeld = round3(held.Seconds())
	}
	all, dials, err := poll.wait()
	row.Dials = dials
	row.Procs = labProcs().groups()
	row.MemAvailableAfterMi = memAvailableMiB()
	if err != nil {
		return err
	}
	row.TimeToTrust, row.PairTimes = round3(all.Seconds()), pairSpread(poll.each)
	row.AfterApply = round3(row.TimeToTrust - row.Apply.Wall)
	logf("fleet %d: apply %.1f s, every one of %d pairs handshook at %.1f s (%.1f s after the apply), bundles held at %.1f s, %d handshakes",
		n, row.Apply.Wall, row.Pairs, row.TimeToTrust, row.AfterApply, row.BundlesHeld, dials)
	sweep := time.Now()
	ok, failed := sweepPairsWhere(ctx, f.ws, func(i, j int) bool { return i < n && j < n })
	row.SweepWall, row.SweepOK = round3(time.Since(sweep).Seconds()), ok
	if len(failed) > 0 {
		row.Errors = append(row.Errors, fmt.Sprintf("sweep after trust: %d pairs fail: %s", len(failed), strings.Join(failed[:min(3, len(failed))], "; ")))
	}
	return nil
}

// plan times the plan of the converged mesh, which must be empty.
func (f *fleet) plan(ctx context.Context) error {
	p, out, err := f.timed(ctx, f.row.Resources, phaseArgs["plan"]...)
	f.row.Plan, f.row.PlanEmpty = p, err == nil
	if err != nil {
		return fmt.Errorf("the plan of the converged mesh: exit %d: %v\n%s", exitCode(err), err, tail(out, 30))
	}
	logf("fleet %d: plan of the converged mesh %.1f s, empty", len(f.members)-1, p.Wall)
	return nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
