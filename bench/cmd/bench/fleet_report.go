package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// fleetMarkdown is bench/FLEET.md: one column per cluster count, the
// smallest first, so the large fleet reads against the small one of the
// same run.
func fleetMarkdown(res FleetResult) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## Fleet: examples/n-cluster-mesh with real SPIRE and workloads\n\n")
	p("Started %s, finished %s, on %d CPUs (%s), %s memory. Load average before %s; after %s.\n\n",
		res.Started.Format(time.RFC3339), res.Finished.Format(time.RFC3339), res.Machine.CPUs, res.Machine.CPUModel, res.Machine.MemTotal,
		res.LoadBefore, res.LoadAfter)
	p("Per count N, a lab of N+1 clusters on one etcd (one prefix each); per cluster a SPIRE server, spire-controller-manager, "+
		"a k8s_psat agent and a go-spiffe workload in a Pod; every third cluster (the first, fourth, ...) in the SPIFFE Helm chart's layout. "+
		"`examples/n-cluster-mesh` as shipped, given through `terraform.tfvars.json` (clusters with kubeconfig, bundle endpoint URL, "+
		"trust domain and spire_install; workloads by Pod label). Handshakes are polled %d at a time, each a `ztworkload dial` the agent attests; "+
		"times count from the start of the apply named. Single runs; the plans with one cluster dead are medians of %d.\n\n", trustDialers, fleetPlanRounds)
	p("State backend: %s.\n\n", fleetStateText(res.State))
	if len(res.Rows) == 0 {
		return b.String()
	}
	p("| | %s |\n|---|%s\n", join(res.Rows, func(r FleetRow) string { return fmt.Sprintf("%d clusters", r.Clusters) }), strings.Repeat("---:|", len(res.Rows)))
	line := func(name string, f func(r FleetRow) string) {
		p("| %s | %s |\n", name, join(res.Rows, f))
	}
	s1 := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	reached := func(v float64) string {
		if v == 0 {
			return "not reached"
		}
		return s1(v)
	}
	line("clusters in the chart's layout", func(r FleetRow) string { return fmt.Sprintf("%d (%s)", len(r.Helm), strings.Join(r.Helm, " ")) })
	line("lab start, N+1 clusters with SPIRE (s)", func(r FleetRow) string { return s1(r.LabStart) })
	line("resources created (federations + ClusterSPIFFEIDs); data sources", func(r FleetRow) string {
		return fmt.Sprintf("%d; %d", r.Resources, r.DataSources)
	})
	line("**apply (s)**", func(r FleetRow) string { return "**" + s1(r.Apply.Wall) + "**" })
	line("apply ms per resource (CPU ms per resource)", func(r FleetRow) string {
		return fmt.Sprintf("%.1f (%.1f)", r.Apply.MsPerObject, r.Apply.CPUMsPerObject)
	})
	line("apply CPU: terraform+provider, provider, lab's long-running processes, its short-lived ones (s)", func(r FleetRow) string {
		return fmt.Sprintf("%.1f, %.1f, %.1f, %.1f", r.Apply.CPU, r.Apply.CPUProvider, r.Apply.LabCPU, r.Apply.LabShortCPU)
	})
	line("provider peak RSS (MiB)", func(r FleetRow) string { return s1(r.Apply.ProviderRSSMiB) })
	line("load1 max during the apply", func(r FleetRow) string { return fmt.Sprintf("%.2f", r.Apply.LoadMax) })
	line("every SPIRE server holds every peer's bundle (s)", func(r FleetRow) string { return reached(r.BundlesHeld) })
	line("**time to trust: all ordered pairs handshook (s)**", func(r FleetRow) string {
		return fmt.Sprintf("**%s** (%d pairs)", reached(r.TimeToTrust), r.Pairs)
	})
	line("of which after the apply ended (s)", func(r FleetRow) string { return reached(r.AfterApply) })
	line("per pair: median, p90, max (s)", func(r FleetRow) string {
		return fmt.Sprintf("%.1f, %.1f, %.1f", r.PairTimes.Median, r.PairTimes.P90, r.PairTimes.Max)
	})
	line("time to trust per pair (ms)", func(r FleetRow) string {
		if r.Pairs == 0 || r.TimeToTrust == 0 {
			return ""
		}
		return fmt.Sprintf("%.0f", 1000*r.TimeToTrust/float64(r.Pairs))
	})
	line("handshakes tried; one sweep of every pair, all trusting (s)", func(r FleetRow) string {
		return fmt.Sprintf("%d; %.1f (%d ok)", r.Dials, r.SweepWall, r.SweepOK)
	})
	line("**plan of the converged mesh (s)**, empty", func(r FleetRow) string { return fmt.Sprintf("**%.1f**, %v", r.Plan.Wall, r.PlanEmpty) })
	line("plan ms per resource (CPU ms per resource)", func(r FleetRow) string {
		return fmt.Sprintf("%.1f (%.1f)", r.Plan.MsPerObject, r.Plan.CPUMsPerObject)
	})
	line("plan CPU: terraform+provider, provider, lab's long-running processes, its short-lived ones (s)", func(r FleetRow) string {
		return fmt.Sprintf("%.1f, %.1f, %.1f, %.1f", r.Plan.CPU, r.Plan.CPUProvider, r.Plan.LabCPU, r.Plan.LabShortCPU)
	})
	line("**one cluster dead (silent listener): plan (s)**", func(r FleetRow) string {
		// Each run beside the medians: at 25 clusters the same healthy plan
		// varies by seconds with the lab's own load.
		return fmt.Sprintf("**%.1f** (%s) against %.1f (%s) answering: %+.1f (bound %.0f) %s", r.Dead.DeadWall, joinFloats(r.Dead.DeadWalls),
			r.Dead.Alive, joinFloats(r.Dead.AliveWalls), r.Dead.Added, r.Dead.Bound, verdict(r.Dead.WithinBound))
	})
	line("dead plan: exit, resource changes, warned once each", func(r FleetRow) string {
		outputs := ""
		if r.Dead.OutputsOnly {
			outputs = " (outputs only)"
		}
		return fmt.Sprintf("%d, %d%s, %v (%s dead)", r.Dead.DeadExit, r.Dead.DeadChanges, outputs, r.Dead.Warned, r.Dead.Cluster)
	})
	line("**join: apply (s)**", func(r FleetRow) string { return fmt.Sprintf("**%.1f** (%s)", r.Join.Apply.Wall, r.Join.Summary) })
	line("**join: its new pairs handshook (s from the apply's start)**", func(r FleetRow) string {
		return fmt.Sprintf("**%s** (%d pairs, %s)", reached(r.Join.NewPairsAt), r.Join.NewPairs, r.Join.Cluster)
	})
	line("leave (leaving = true): apply (s)", func(r FleetRow) string {
		return fmt.Sprintf("%.1f (%s), peers unfederated %v", r.Leave.Apply.Wall, r.Leave.Summary, r.Leave.Unfederated)
	})
	line("entry removed: apply (s); pairs after", func(r FleetRow) string {
		return fmt.Sprintf("%.1f (%s); %d of %d", r.Leave.RemoveWall, r.Leave.RemoveSummary, r.Leave.PairsAfter, r.Leave.PairsAfterWant)
	})
	line("**forced rotation: plan shows exactly its repairs**", func(r FleetRow) string {
		return fmt.Sprintf("**%v**: %s, %s (%d stale peers of %s)", r.Rotation.Exact, r.Rotation.PlanSummary,
			strings.Join(r.Rotation.PlanTrust, ", "), len(r.Rotation.StalePeers), r.Rotation.Cluster)
	})
	line("**forced rotation: one apply (s); every pair again (s)**", func(r FleetRow) string {
		return fmt.Sprintf("**%.1f; %s**, plan after empty %v", r.Rotation.Apply.Wall, reached(r.Rotation.AllPairs), r.Rotation.PlanAfterEmpty)
	})
	line("destroy (s)", func(r FleetRow) string { return s1(r.Destroy) })
	line("MemAvailable before the lab; after the apply (MiB)", func(r FleetRow) string {
		return fmt.Sprintf("%.0f; %.0f", r.MemAvailableBeforeMi, r.MemAvailableAfterMi)
	})
	line("kube-apiservers of others running when the row started", func(r FleetRow) string { return strconv.Itoa(r.OtherAPIServers) })
	p("\nGoals: the apply ends within 120 s and every pair handshakes within 60 s after it; a join's new pairs within 30 s of its apply's start; " +
		"a dead cluster adds at most the reachability bound to a plan.\n\n")
	for _, r := range res.Rows {
		if r.Reduced != "" {
			p("**%d clusters asked, %d ran**: %s.\n\n", r.Asked, r.Clusters, r.Reduced)
		}
	}
	for _, r := range res.Rows {
		p("Goals at %d clusters: apply %s, pairs after the apply %s, join %s, dead cluster %s.\n\n", r.Clusters,
			verdict(r.Apply.Wall > 0 && r.Apply.Wall <= 120), verdict(r.TimeToTrust > 0 && r.AfterApply <= 60),
			verdict(r.Join.NewPairsAt > 0 && r.Join.NewPairsAt <= 30), verdict(r.Dead.WithinBound))
	}
	for _, r := range res.Rows {
		p("### Lab processes at %d clusters, after the time-to-trust apply\n\n", r.Clusters)
		p("| program | processes | RSS (MiB) | PSS (MiB) | largest peak RSS of one (MiB) | CPU since start (s) |\n|---|---:|---:|---:|---:|---:|\n")
		var rss, pss float64
		for _, g := range r.Procs {
			rss, pss = rss+g.RSSMiB, pss+g.PSSMiB
			p("| %s | %d | %.0f | %.0f | %.0f | %.1f |\n", g.Program, g.Procs, g.RSSMiB, g.PSSMiB, g.PeakMiB, g.CPU)
		}
		p("| all | | %.0f | %.0f | | |\n\n", rss, pss)
		for _, e := range r.Errors {
			// The first lines say what failed; the logs' tails are in fleet.json.
			if len(e) > 600 {
				e = e[:600] + " ..."
			}
			p("- error: %s\n", esc(e))
		}
		if len(r.Errors) > 0 {
			p("\n")
		}
	}
	return b.String()
}

func join(rows []FleetRow, f func(FleetRow) string) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = f(r)
	}
	return strings.Join(parts, " | ")
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// fleetStateText names the state backend of a run in the report.
func fleetStateText(state string) string {
	switch state {
	case fleetStatePG:
		return "Terraform's `pg` backend on a PostgreSQL server (Debian's package) the bench starts on 127.0.0.1, each row in a schema of its own " +
			"(`backend.tf` beside the example's `main.tf`, as a user adds one); Terraform persists a remote state every 20 s and at the end of a command. " +
			"`BENCH_FLEET_STATE=local make bench-fleet` runs the state file instead and writes bench/FLEET-local.md"
	case fleetStateLocal:
		return "the local state file, as the example is shipped; Terraform writes and fsyncs the whole file after every object it applies"
	}
	return state
}
