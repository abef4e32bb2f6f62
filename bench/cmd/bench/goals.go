package main

import (
	"fmt"
	"strings"
)

// Goal is one of the provider's performance targets (goals), checked against
// this run.
type Goal struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Status   string `json:"status"` // met, not met, not measured
	Note     string `json:"note,omitempty"`
}

const (
	met         = "met"
	notMet      = "not met"
	notMeasured = "not measured"
	goalN       = 1000
	mib         = 1 << 20
	// maxFixedCalls bounds the requests a phase may make that are not about
	// one object (discovery, CRD reads, one LIST per cluster): a constant per
	// cluster, so they cannot be per-resource.
	maxFixedCallsPerCluster = 10
)

func status(ok bool) string {
	if ok {
		return met
	}
	return notMet
}

// goalN returns the N the scale targets are checked at: 1000, or the largest
// N of this run (with a note that says so).
func (r *Results) checkN() (int, string) {
	largest := 0
	for _, n := range r.measuredNs() {
		if n == goalN {
			return n, ""
		}
		largest = max(largest, n)
	}
	return largest, fmt.Sprintf("this run did not include N=%d; checked at N=%d instead", goalN, largest)
}

// measuredNs are the Ns with results (all of r.Ns once the run is complete).
func (r *Results) measuredNs() []int {
	var out []int
	for _, n := range r.Ns {
		for _, s := range r.Scale {
			if s.N == n {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

func (r *Results) evaluate() {
	r.Goals = nil
	n, nNote := r.checkN()
	add := func(g Goal) {
		if nNote != "" && g.Status != notMeasured && strings.Contains(g.Goal, "N=1000") {
			g.Note = strings.TrimPrefix(g.Note+"; "+nNote, "; ")
		}
		r.Goals = append(r.Goals, g)
	}

	zt, pf, floor := r.find(targetZerotrust, n, "plan"), r.find(targetPluginFloor, n, "plan"), r.find(targetFloor, n, "plan")
	// ratioGoal checks zerotrust's median plan against one floor's, and
	// says how many milliseconds per object zerotrust spends above it.
	ratioGoal := func(goal string, base *Summary, limit float64) {
		if zt == nil || base == nil || base.WallMedian <= 0 {
			add(Goal{Goal: goal, Status: notMeasured})
			return
		}
		ratio := zt.WallMedian / base.WallMedian
		add(Goal{Goal: goal,
			Measured: fmt.Sprintf("%.2fx (%.2f s vs %.2f s, N=%d; %+.2f ms per object; CPU %.2f s vs %.2f s)", ratio, zt.WallMedian, base.WallMedian, n,
				(zt.WallMedian-base.WallMedian)*1000/float64(n), zt.CPUTotalMedian, base.CPUTotalMedian),
			Status: status(ratio <= limit),
			Note:   fmt.Sprintf("medians of %d runs, Terraform %s", zt.Runs, r.TerraformVersion)})
	}
	ratioGoal("plan+refresh at N=1000 <= 1.2x the plugin floor (same framework and schema, no API calls)", pf, 1.2)
	ratioGoal("plan+refresh at N=1000 <= 2x terraform_data (lean configuration)", floor, 2)

	// kubernetes_manifest runs only at small N (options.peersMaxN): compared
	// at the largest N it ran.
	k8sN := 0
	for _, s := range r.Scale {
		if s.Target == targetKubernetes && s.Phase == "plan" && r.find(targetZerotrust, s.N, "plan") != nil {
			k8sN = max(k8sN, s.N)
		}
	}
	if k8s, z := r.find(targetKubernetes, k8sN, "plan"), r.find(targetZerotrust, k8sN, "plan"); k8s != nil && z != nil && z.WallMedian > 0 {
		speedup := k8s.WallMedian / z.WallMedian
		add(Goal{Goal: "plan+refresh >= 10x faster than kubernetes_manifest",
			Measured: fmt.Sprintf("%.1fx (%.2f s vs %.2f s, N=%d)", speedup, z.WallMedian, k8s.WallMedian, k8sN),
			Status:   status(speedup >= 10),
			Note:     "kubernetes_manifest runs only up to the N in the Method section (its client-go rate limit of 5 requests/s makes larger N cost most of the benchmark's time budget)"})
	}

	if zt != nil {
		get := zt.APIPerObject["get cftd"]
		add(Goal{Goal: "<= 1 GET per object on refresh", Measured: fmt.Sprintf("%.3f GET/object (plan, N=%d)", get, n), Status: status(get <= 1)})
		other := 0
		for k, v := range zt.APITotal {
			if k != "get cftd" {
				other += v
			}
		}
		limit := maxFixedCallsPerCluster * len(clusterNames)
		add(Goal{Goal: "0 requests for unchanged objects beyond the refresh GET",
			Measured: fmt.Sprintf("%d other requests in the whole plan of %d objects (%s)", other, n, fmtCounts(zt.APITotal)),
			Status:   status(other <= limit),
			Note:     fmt.Sprintf("met when the other requests are a per-cluster constant (<= %d per cluster), not per object", maxFixedCallsPerCluster)})
	}
	if ap := r.find(targetZerotrust, n, "apply"); ap != nil {
		w := ap.APIPerObject["patch cftd"] + ap.APIPerObject["create cftd"] + ap.APIPerObject["update cftd"]
		add(Goal{Goal: "<= 1 PATCH per created object", Measured: fmt.Sprintf("%.3f writes/object (apply, N=%d; %s)", w, n, fmtCounts(ap.APITotal)), Status: status(w <= 1)})
	}
	discovery := 0
	for _, phase := range []string{"apply", "plan", "destroy"} {
		if s := r.find(targetZerotrust, n, phase); s != nil {
			for k, v := range s.APITotal {
				if k == "discovery" || strings.HasSuffix(k, " crd") {
					discovery += v
				}
			}
		}
	}
	if zt != nil {
		limit := 3 * maxFixedCallsPerCluster * len(clusterNames)
		add(Goal{Goal: "no per-resource discovery or CRD LIST calls",
			Measured: fmt.Sprintf("%d discovery/CRD requests over apply+plan+destroy of %d objects", discovery, n),
			Status:   status(discovery <= limit)})
	}

	for _, p := range r.Process {
		if p.Target != targetZerotrust {
			continue
		}
		if p.Error != "" {
			add(Goal{Goal: "provider start to schema <= 50 ms", Status: notMeasured, Note: p.Error})
		} else {
			add(Goal{Goal: "provider start to schema <= 50 ms", Measured: fmt.Sprintf("%.1f ms (median of %d)", p.SchemaMedianMs, len(p.SchemaSamples)), Status: status(p.SchemaMedianMs <= 50)})
		}
		add(Goal{Goal: "binary <= 40 MB", Measured: fmt.Sprintf("%.1f MiB", float64(p.BinaryBytes)/mib), Status: status(p.BinaryBytes <= 40*mib)})
	}
	if zt != nil && zt.PeakRSS > 0 {
		g := Goal{Goal: "peak RSS <= 40 MiB during the N=1000 plan (VmHWM)", Measured: fmt.Sprintf("%.1f MiB (N=%d)", float64(zt.PeakRSS)/mib, n), Status: status(zt.PeakRSS <= 40*mib)}
		if zt.PeakAnon > 0 {
			g.Note = fmt.Sprintf("VmHWM counts the mapped pages of the binary; the process's own (anonymous) memory peaked at %.1f MiB", float64(zt.PeakAnon)/mib)
			if pf != nil && pf.PeakRSS > 0 {
				g.Note += fmt.Sprintf("; the plugin floor: %.1f MiB VmHWM, %.1f MiB anonymous", float64(pf.PeakRSS)/mib, float64(pf.PeakAnon)/mib)
			}
		}
		add(g)
	} else {
		add(Goal{Goal: "peak RSS <= 40 MiB during the N=1000 plan (VmHWM)", Status: notMeasured})
	}

	r.clusterGoals(add)

	g := Goal{Goal: "bundle fetch p50 <= 5 ms on loopback (https_spiffe)", Status: notMeasured}
	if r.BundleFetch != nil {
		for _, c := range r.BundleFetch.Cases {
			if strings.Contains(c.Name, "https_spiffe") {
				if len(c.P50Ns) > 0 {
					g.Measured = fmt.Sprintf("p50 %.2f ms, p99 %.2f ms (medians over %d runs of per-fetch percentiles), mean %.2f ms, %.0f allocs/op",
						c.MedianP50Ns/1e6, c.MedianP99Ns/1e6, len(c.P50Ns), c.MedianNsPerOp/1e6, c.AllocsPerOp)
					g.Status = status(c.MedianP50Ns <= 5e6)
				} else {
					g.Measured = fmt.Sprintf("%.2f ms (median of %d runs' mean ns/op), %.0f allocs/op", c.MedianNsPerOp/1e6, len(c.NsPerOp), c.AllocsPerOp)
					g.Status = status(c.MedianNsPerOp <= 5e6)
					g.Note = "no per-fetch percentiles in this run's output; the median of the runs' means stands in for p50"
				}
			}
		}
	}
	add(g)
}

func fmtCounts(m map[string]int) string {
	keys := sortedKeys(m)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// clusterGoals checks the full-mesh rows: the apply's cost per resource at
// the most clusters stays within 1.5x of that at the fewest (it grows with
// the number of objects, not with a serial step per cluster), every SPIRE
// server ends up holding every peer bundle, and the plan after the apply is
// empty.
func (r *Results) clusterGoals(add func(Goal)) {
	var rows []ClusterScaleRow
	for _, c := range r.ClusterScale {
		if c.Error == "" && c.Resources > 0 {
			rows = append(rows, c)
		}
	}
	const goal = "full mesh in one apply: cost grows with the objects, no serial per-cluster step"
	if len(rows) < 2 {
		add(Goal{Goal: goal, Status: notMeasured, Note: fmt.Sprintf("%d usable cluster-scale rows", len(rows))})
		return
	}
	first, last := rows[0], rows[len(rows)-1]
	perFirst := first.ApplyWall / float64(first.Resources)
	perLast := last.ApplyWall / float64(last.Resources)
	growth := perLast / perFirst
	add(Goal{Goal: goal,
		Measured: fmt.Sprintf("apply %.1f s for %d resources on %d clusters -> %.1f s for %d on %d: %.0f -> %.0f ms per resource (%.2fx)",
			first.ApplyWall, first.Resources, first.Clusters, last.ApplyWall, last.Resources, last.Clusters, perFirst*1000, perLast*1000, growth),
		Status: status(growth <= 1.5),
		Note:   "met when the time per resource at the most clusters is within 1.5x of that at the fewest"})
	held, empty := true, true
	var worst float64
	for _, c := range r.ClusterScale {
		held = held && c.Error == "" && c.AllBundlesHeld > 0
		empty = empty && c.PlanEmpty
		worst = max(worst, c.AllBundlesHeld)
	}
	add(Goal{Goal: "every SPIRE server holds every peer bundle after the one apply, and the next plan is empty",
		Measured: fmt.Sprintf("all bundles held in every row: %v (slowest %.1f s after the apply started); plans empty: %v", held, worst, empty),
		Status:   status(held && empty)})
	r.trustGoals(add)
	r.joinGoal(add)
	r.courierGoal(add)
}

// trustGoals checks the time-to-trust runs (every ordered workload pair
// handshakes after the one apply) and the heal cases (the plan shows the
// damage, one apply repairs it, the next plan is empty).
func (r *Results) trustGoals(add func(Goal)) {
	var parts []string
	reached, rows := true, 0
	for _, c := range r.ClusterScale {
		if c.TrustPairs == 0 && c.TrustError == "" {
			continue
		}
		rows++
		reached = reached && c.TimeToTrust > 0
		if c.TimeToTrust > 0 {
			in := ""
			if c.TrustClusterSPIFFEIDsInApply {
				in = " (ClusterSPIFFEIDs in the apply)"
			}
			parts = append(parts, fmt.Sprintf("%d clusters (%d pairs) %.1f s%s", c.Clusters, c.TrustPairs, c.TimeToTrust, in))
		} else {
			parts = append(parts, fmt.Sprintf("%d clusters: not reached", c.Clusters))
		}
	}
	if rows > 0 {
		add(Goal{Goal: "every ordered workload pair handshakes after the one apply (time to trust)",
			Measured: strings.Join(parts, "; "), Status: status(reached),
			Note: "from the start of the apply; agents and workloads exist before it, the ClusterSPIFFEIDs too unless the row says they are in the apply"})
	}
	if len(r.ClusterHeal) == 0 {
		return
	}
	ok := len(r.ClusterHeal) == len(healCaseList)
	parts = nil
	for _, c := range r.ClusterHeal {
		ok = ok && c.PlanShowsRepair && c.AllPairs > 0 && c.PlanAfterEmpty && c.PairsAfter == c.Pairs
		all := "not reached"
		if c.AllPairs > 0 {
			all = fmt.Sprintf("%.1f s", c.AllPairs)
		}
		parts = append(parts, fmt.Sprintf("%s: plan shows repair %v, every pair %s, plan after empty %v, %d of %d pairs after",
			c.Case, c.PlanShowsRepair, all, c.PlanAfterEmpty, c.PairsAfter, c.Pairs))
	}
	add(Goal{Goal: "after a lost bundle, a forced rotation or a rebuilt cluster, the plan shows the repair and one apply restores every pair",
		Measured: strings.Join(parts, "; "), Status: status(ok),
		Note: fmt.Sprintf("%d clusters; time from the start of the repairing apply", r.ClusterHeal[0].Clusters)})
}
