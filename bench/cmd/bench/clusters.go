package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/standin"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

const (
	// meshBundleWaitCap bounds the wait for every SPIRE server to hold every
	// peer's bundle, counted from the start of the apply.
	meshBundleWaitCap = 5 * time.Minute
	// meshPollEvery is how often each SPIRE server is asked; its admin API
	// answers in about a millisecond, so even ten servers cost the machine
	// little next to the apply being measured (a spire-server CLI process
	// per question would cost about 70 ms of CPU each).
	meshPollEvery = 250 * time.Millisecond
	// meshCleanWait bounds the check, before and after a row, that nothing of
	// a mesh is left.
	meshCleanWait = time.Minute
	// meshProviderAgent starts the User-Agent of the provider's requests; in
	// the lab spire-controller-manager and SPIRE's bundle notifier use the
	// same admin credentials, so the user alone does not tell them apart.
	meshProviderAgent = "terraform-provider-zerotrust/"
)

// meshMember is one cluster of the mesh part with its SPIRE installation,
// and a connection to the SPIRE server's admin API for the bundle poll.
type meshMember struct {
	cluster *harness.Cluster
	spire   *harness.Spire
	admin   *grpc.ClientConn
	// stopOperator stops the cluster's ZTWIM stand-in, which gives
	// zerotrust_spire_federation's applies the operator's verdict they wait for.
	stopOperator func()
}

func meshClusterName(i int) string { return fmt.Sprintf("mesh%02d", i+1) }

// runClusterScale is the cluster part: for each count k of
// opts.clusterCounts (ascending), one apply of a full mesh of k clusters,
// then a plan and a destroy, each row appended to res.ClusterScale.
//
// Clusters are started once and kept: the row with k clusters starts only
// the clusters it lacks, so during a row every running cluster takes part
// and none idles, and ten clusters are started in all instead of nineteen.
// A row that leaves anything behind (objects, bundles in SPIRE) ends the
// part with an error, since the next row would start dirty.
func runClusterScale(ctx context.Context, env *tfEnv, opts options, res *Results) error {
	if env.version == "" {
		return fmt.Errorf("terraform %s: no version from `terraform version -json`", env.terraform)
	}
	version := env.version
	var (
		members []*meshMember
		labs    []*harness.Lab
	)
	defer func() { stopMesh(members, labs) }()
	for _, k := range opts.clusterCounts {
		if err := ctx.Err(); err != nil {
			return err
		}
		if k < 2 {
			return fmt.Errorf("clusters %d: a mesh needs at least two", k)
		}
		row := ClusterScaleRow{Clusters: k, Terraform: version, Resources: k * k}
		if have := len(members); have < k {
			logf("clusters: starting %d more clusters with SPIRE (%d in all)", k-have, k)
			start := time.Now()
			lab, added, err := startMeshMembers(ctx, env.work, have, k)
			if lab != nil {
				labs = append(labs, lab)
			}
			members = append(members, added...)
			if err != nil {
				return err
			}
			row.NewClusters, row.StartWall = k-have, round3(time.Since(start).Seconds())
			logf("clusters: %d clusters with SPIRE ready in %.1f s", k-have, row.StartWall)
		}
		err := meshRow(ctx, env, opts, members[:k], &row)
		if err == nil && opts.trust {
			dir := filepath.Join(env.work, "mesh", fmt.Sprintf("cfg-%02d", k))
			// Heal cases once, on the smallest mesh (the counts ascend).
			var cases []HealCase
			cases, err = meshTrust(ctx, env, opts, dir, members[:k], &row, k == opts.clusterCounts[0])
			res.ClusterHeal = append(res.ClusterHeal, cases...)
			// The join once too, on the smallest mesh: one more cluster
			// joins it (started now if no row has it yet).
			if err == nil && k == opts.clusterCounts[0] {
				if have := len(members); have < k+1 {
					lab, added, serr := startMeshMembers(ctx, env.work, have, k+1)
					if lab != nil {
						labs = append(labs, lab)
					}
					members = append(members, added...)
					err = serr
				}
				if err == nil {
					var join JoinRow
					join, err = meshJoin(ctx, env, opts, dir, members[:k+1])
					res.ClusterJoin = append(res.ClusterJoin, join)
				}
				// And the same mesh with Terraform carrying the bundles.
				if err == nil {
					var courier CourierRow
					courier, err = meshCourier(ctx, env, opts, dir, members[:k])
					res.ClusterCourier = append(res.ClusterCourier, courier)
				}
			}
		}
		res.ClusterScale = append(res.ClusterScale, row)
		if werr := writeOutputs(opts.outDir, res); werr != nil {
			return werr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// startMeshMembers starts clusters from+1..to (names mesh<NN>) as one lab
// with audit logs, and in each a SPIRE server with spire-controller-manager
// and the exec endpoint, all in parallel. On error it returns what it
// started, for stopMesh.
func startMeshMembers(ctx context.Context, work string, from, to int) (*harness.Lab, []*meshMember, error) {
	var names []string
	for i := from; i < to; i++ {
		names = append(names, meshClusterName(i))
	}
	lab, err := startAuditedLab(ctx, names, filepath.Join(work, "mesh", fmt.Sprintf("lab-%02d-%02d", from+1, to)))
	if err != nil {
		return nil, nil, err
	}
	spires, err := harness.StartSpires(ctx, lab.Clusters, func(c *harness.Cluster) harness.SpireOptions {
		return harness.SpireOptions{TrustDomain: c.Name + ".zt.test", ControllerManager: true}
	})
	if err != nil {
		return lab, nil, err
	}
	members := make([]*meshMember, len(spires))
	for i, s := range spires {
		members[i] = &meshMember{cluster: lab.Clusters[i], spire: s}
		// The admin API is the socket the spire-server CLI uses: local
		// callers are trusted, no TLS. (No connection is made yet.)
		if members[i].admin, err = grpc.NewClient("unix://"+s.SocketPath, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			return lab, members, err
		}
		dyn, err := dynamic.NewForConfig(lab.Clusters[i].RESTConfig())
		if err != nil {
			return lab, members, err
		}
		if _, members[i].stopOperator, err = standin.StartZTWIM(context.Background(), standin.ZTWIMDeps{Dynamic: dyn}); err != nil {
			return lab, members, fmt.Errorf("%s: ZTWIM stand-in: %w", lab.Clusters[i].Name, err)
		}
	}
	return lab, members, nil
}

// stopMesh stops the SPIRE installations before their clusters.
func stopMesh(members []*meshMember, labs []*harness.Lab) {
	for _, m := range members {
		if m.stopOperator != nil {
			m.stopOperator()
		}
		if m.admin != nil {
			_ = m.admin.Close()
		}
		if err := m.spire.Stop(); err != nil {
			logf("clusters: %v", err)
		}
	}
	for _, l := range labs {
		if err := l.Stop(); err != nil {
			logf("clusters: stopping clusters: %v", err)
		}
	}
}

// meshRow measures one row on members: opts.runs cycles of apply, plan and
// destroy, summarized by medians. Failures of an apply, a plan or a bundle
// wait are recorded in row.Error; the returned error means the clusters are
// not clean afterwards.
func meshRow(ctx context.Context, env *tfEnv, opts options, members []*meshMember, row *ClusterScaleRow) error {
	k := len(members)
	if err := meshClean(ctx, members, meshCleanWait); err != nil {
		return fmt.Errorf("clusters %d: before the apply: %w", k, err)
	}
	dir := filepath.Join(env.work, "mesh", fmt.Sprintf("cfg-%02d", k))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeMeshConfig(env, dir, members, false); err != nil {
		return err
	}
	if out, err := env.tf(ctx, dir, 10*time.Minute, "init", "-input=false", "-no-color"); err != nil {
		return fmt.Errorf("clusters %d: terraform init: %w\n%s", k, err, tail(out, 40))
	}
	var (
		runs   []meshRun
		errs   []string
		broken error
	)
	for r := 1; r <= opts.runs && broken == nil; r++ {
		var run meshRun
		run, broken = meshCycle(ctx, env, opts, dir, members, row.Resources, func(format string, args ...any) {
			msg := fmt.Sprintf("run %d: ", r) + fmt.Sprintf(format, args...)
			errs = append(errs, msg)
			logf("clusters %d: %s", k, msg)
		})
		runs = append(runs, run)
		logf("clusters %d run %d/%d: apply %.1f s (machine %.0f%% busy), all bundles held at %.1f s, %.0f requests per cluster, provider peak RSS %.1f MiB, plan %.1f s, destroy %.1f s",
			k, r, opts.runs, run.apply.Wall, run.machineBusy*100, run.held.Seconds(), meshTotal(run.requests)/float64(k),
			float64(run.apply.ProviderRSS)/(1<<20), run.plan, run.destroy)
	}
	row.Runs = len(runs)
	row.summarize(runs)
	row.Error = strings.Join(errs, "; ")
	if broken != nil {
		return fmt.Errorf("clusters %d: the clusters are not clean for the next run: %w", k, broken)
	}
	return nil
}

// meshRun is one apply, plan and destroy of a row.
type meshRun struct {
	apply              phaseSample
	machineCPU, labCPU float64
	machineBusy        float64
	held               time.Duration // zero: not reached
	heldPerCluster     []time.Duration
	requests           map[string]int
	requestsMaxCluster int
	plan, destroy      float64
	applied, planEmpty bool
}

// meshCycle runs one apply (timed, with the bundle poll and the audit
// window), a plan and a destroy in dir. It reports measurement failures
// through fail and returns an error when the clusters are not clean after it.
func meshCycle(ctx context.Context, env *tfEnv, opts options, dir string, members []*meshMember, resources int,
	fail func(format string, args ...any)) (meshRun, error) {
	var run meshRun
	clusters := make([]*harness.Cluster, len(members))
	for i, m := range members {
		clusters[i] = m.cluster
	}
	audit := newAuditReader(clusters)
	audit.mark()
	poll := startBundlePoll(ctx, members, time.Now(), meshBundleWaitCap)
	busyBefore, labBefore := machineBusySeconds(), labCPU(members)
	s, out, err := env.measured(ctx, dir, opts.timeout, phaseArgs["apply"]...)
	run.apply, run.labCPU = s, labCPU(members)-labBefore
	if busy := machineBusySeconds() - busyBefore; busy > 0 && s.Wall > 0 {
		run.machineCPU, run.machineBusy = busy, busy/(s.Wall*float64(runtime.NumCPU()))
	}
	run.applied = err == nil
	if err != nil {
		poll.stop()
		fail("apply: %v: %s", err, tail(out, 20))
	} else if added := meshAdded(out); added != resources {
		fail("apply added %d resources, want %d", added, resources)
	}
	var herr error
	run.held, run.heldPerCluster, herr = poll.wait()
	if herr != nil && run.applied {
		fail("bundles: %v", herr)
	}
	// The apiserver writes an audit event after its response; give the last
	// ones a moment to land.
	time.Sleep(300 * time.Millisecond)
	byKind, perCluster, err := meshProviderRequests(audit)
	if err != nil {
		return run, err
	}
	run.requests, run.requestsMaxCluster = byKind, slices.Max(perCluster)

	if run.applied {
		s, out, err := env.measured(ctx, dir, opts.timeout, phaseArgs["plan"]...)
		run.plan = s.Wall
		// -detailed-exitcode: 0 = no changes, 2 = changes present.
		var ee *exec.ExitError
		switch {
		case err == nil:
			run.planEmpty = true
		case errors.As(err, &ee) && ee.ExitCode() == 2:
			fail("the plan after the apply is not empty: %s", tail(out, 20))
		default:
			fail("plan: %v: %s", err, tail(out, 20))
		}
	}

	s, out, err = env.measured(ctx, dir, opts.timeout, phaseArgs["destroy"]...)
	run.destroy = s.Wall
	if err != nil {
		err = fmt.Errorf("terraform destroy: %w\n%s", err, tail(out, 40))
	} else {
		err = meshClean(ctx, members, meshCleanWait)
	}
	if err != nil {
		fail("after the destroy: %v", err)
	}
	return run, err
}

// summarize fills row from its runs: medians of times, CPU and requests
// (each on its own), the largest peak RSS and busiest cluster; a wait for
// bundles that was not reached in some run leaves the held time at zero
// ("not reached"). The per-cluster held times are those of the run whose
// all-held time is the median.
func (row *ClusterScaleRow) summarize(runs []meshRun) {
	if len(runs) == 0 {
		return
	}
	pick := func(f func(meshRun) float64) float64 {
		v := make([]float64, len(runs))
		for i, run := range runs {
			v[i] = f(run)
		}
		return round3(median(v))
	}
	for _, run := range runs {
		row.ApplyWalls = append(row.ApplyWalls, round3(run.apply.Wall))
		row.ProviderRSS = max(row.ProviderRSS, run.apply.ProviderRSS)
		row.ProviderAnon = max(row.ProviderAnon, run.apply.ProviderAnon)
		row.RequestsMaxCluster = max(row.RequestsMaxCluster, run.requestsMaxCluster)
	}
	row.ApplyWall = pick(func(r meshRun) float64 { return r.apply.Wall })
	// This report's CPU total includes the spire-server processes behind pod
	// exec (its text says so), which the fleet reports apart.
	row.ApplyCPUTotal = pick(func(r meshRun) float64 { return r.apply.CPUTotal + r.apply.CPUOthers })
	row.ApplyCPUProvider = pick(func(r meshRun) float64 { return r.apply.CPUProvider })
	row.ApplyMachineCPU = pick(func(r meshRun) float64 { return r.machineCPU })
	row.ApplyMachineBusy = pick(func(r meshRun) float64 { return r.machineBusy })
	row.ApplyLabCPU = pick(func(r meshRun) float64 { return r.labCPU })
	row.DestroyWall = pick(func(r meshRun) float64 { return r.destroy })

	reached := true
	for _, run := range runs {
		reached = reached && run.held > 0
	}
	if reached {
		row.AllBundlesHeld = pick(func(r meshRun) float64 { return r.held.Seconds() })
		mid := slices.Clone(runs)
		slices.SortFunc(mid, func(a, b meshRun) int { return cmp.Compare(a.held, b.held) })
		for _, h := range mid[len(mid)/2].heldPerCluster {
			row.BundlesHeldPerCluster = append(row.BundlesHeldPerCluster, round3(h.Seconds()))
		}
	}

	var planned []meshRun
	row.PlanEmpty = true
	for _, run := range runs {
		if run.applied {
			planned = append(planned, run)
			row.PlanEmpty = row.PlanEmpty && run.planEmpty
		}
	}
	if len(planned) == 0 {
		row.PlanEmpty = false
	} else {
		v := make([]float64, len(planned))
		for i, run := range planned {
			v[i] = run.plan
		}
		row.PlanWall = round3(median(v))
	}

	kinds := map[string]bool{}
	for _, run := range runs {
		for kind := range run.requests {
			kinds[kind] = true
		}
	}
	k := float64(row.Clusters)
	row.RequestsPerCluster = map[string]float64{}
	for kind := range kinds {
		row.RequestsPerCluster[kind] = pick(func(r meshRun) float64 { return float64(r.requests[kind]) / k })
	}
	row.RequestsPerClusterTotal = pick(func(r meshRun) float64 { return meshTotal(r.requests) / k })
}

func meshTotal(counts map[string]int) float64 {
	var n int
	for _, v := range counts {
		n += v
	}
	return float64(n)
}

var meshAddedRE = regexp.MustCompile(`Resources: (\d+) added`)

// meshAdded reads how many resources an apply's summary line says it added.
func meshAdded(out string) int {
	m := meshAddedRE.FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// meshClean waits until no SPIRE server of members holds a federated bundle
// and no cluster has a ClusterFederatedTrustDomain: how every row starts,
// and what a destroy (with delete_bundle_on_destroy) must leave.
func meshClean(ctx context.Context, members []*meshMember, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	gvr := kube.ClusterFederatedTrustDomain.GVR()
	for {
		var dirty []string
		for _, m := range members {
			tds, err := m.federatedTrustDomains(ctx)
			switch {
			case err != nil:
				dirty = append(dirty, err.Error())
			case len(tds) > 0:
				dirty = append(dirty, fmt.Sprintf("SPIRE %s holds bundles of %s", m.spire.TrustDomain, strings.Join(tds, ", ")))
			}
			d, err := dynamic.NewForConfig(m.cluster.RESTConfig())
			if err != nil {
				return err
			}
			list, err := d.Resource(gvr).List(ctx, metav1.ListOptions{})
			switch {
			case err != nil:
				dirty = append(dirty, fmt.Sprintf("%s: listing ClusterFederatedTrustDomains: %v", m.cluster.Name, err))
			case len(list.Items) > 0:
				dirty = append(dirty, fmt.Sprintf("%s has %d ClusterFederatedTrustDomains", m.cluster.Name, len(list.Items)))
			}
		}
		if len(dirty) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not clean after %v: %s", limit, strings.Join(dirty, "; "))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// machineBusySeconds is the CPU time all cores have spent busy since boot:
// the first line of /proc/stat without idle and iowait.
func machineBusySeconds() float64 {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var busy float64
	// user nice system idle iowait irq softirq steal; guest time is in user.
	for i, v := range f[1:9] {
		if i == 3 || i == 4 {
			continue
		}
		ticks, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0
		}
		busy += ticks
	}
	return busy / clockTicks
}

// labCPU is the CPU time the long-running lab processes of members have
// used so far.
func labCPU(members []*meshMember) float64 {
	var total float64
	for _, m := range members {
		for _, pid := range []int{m.cluster.EtcdPID, m.cluster.APIServerPID, m.spire.ServerPID(), m.spire.ControllerManagerPID()} {
			if _, cpu, ok := procCPU(pid); pid > 0 && ok {
				total += cpu
			}
		}
	}
	return total
}

// meshAuditExtra is what the cluster part reads of an audit event beyond auditEvent.
type meshAuditExtra struct {
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
}

// meshProviderRequests counts the provider's requests since the last mark
// of a, by kind as classify names them (with "/<subresource>" appended:
// pod exec is "create pods/exec"), and per log (cluster).
func meshProviderRequests(a *auditReader) (map[string]int, []int, error) {
	counts := map[string]int{}
	perCluster := make([]int, len(a.paths))
	err := a.scan(func(i int, line []byte) {
		var ev auditEvent
		var extra meshAuditExtra
		if json.Unmarshal(line, &ev) != nil || json.Unmarshal(line, &extra) != nil ||
			ev.Stage != "ResponseComplete" || ev.User.Username != benchUser ||
			!strings.HasPrefix(extra.UserAgent, meshProviderAgent) {
			return
		}
		kind := classify(ev)
		if extra.ObjectRef != nil && extra.ObjectRef.Subresource != "" {
			kind += "/" + extra.ObjectRef.Subresource
		}
		counts[kind]++
		perCluster[i]++
	})
	if err != nil {
		return nil, nil, err
	}
	return counts, perCluster, nil
}
