package main

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// clusterScaleMarkdown is the REPORT.md section of the cluster part: how it
// was measured and a table per row, then the requests by kind.
func clusterScaleMarkdown(r *Results) string {
	rows := r.ClusterScale
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	counts := make([]int, len(rows))
	for i, row := range rows {
		counts[i] = row.Clusters
	}
	cores := r.Machine.CPUs
	if cores == 0 {
		cores = runtime.NumCPU()
	}
	runs := 0
	for _, row := range rows {
		runs = max(runs, row.Runs)
	}
	p("## Clusters: a full mesh in one apply\n\n")
	p("Each row federates k clusters (k = %s) with each other in ONE `terraform apply`: per cluster a "+
		"`zerotrust_spire_federation` (its bundle endpoint) and per ordered pair a "+
		"`zerotrust_federated_trust_domain` bootstrapped with the peer's bundle, k² resources. As in "+
		"`examples/n-cluster-mesh`, data sources read each cluster's SPIRE facts (`zerotrust_spire_server`) and current "+
		"bundle (`zerotrust_trust_bundle`, from its bundle ConfigMap), so 2k data sources; only the bundle endpoint URLs "+
		"are given, because these clusters serve no OpenShift Route to read them from. One provider block reaches every "+
		"cluster; Terraform runs with its default parallelism (10); `wait_for_bundle = true`, so each federation is done "+
		"when SPIRE holds the peer's bundle, asked through pod exec. Each row runs apply, plan and destroy %d times; "+
		"the table shows medians (the apply column lists every run), the largest RSS and busiest cluster.\n\n", joinInts(counts), runs)
	p("Every cluster is a local kube-apiserver with a real SPIRE server (bundle endpoint on 127.0.0.1), the real "+
		"spire-controller-manager reconciling ClusterFederatedTrustDomains into it, and pod exec of spire-server-0 "+
		"reaching the real binary. *All bundles held* is the time from the start of the apply until every SPIRE server "+
		"lists the bundle of every peer, asked of all servers in parallel through their admin API (`ListFederatedBundles`, "+
		"what `spire-server bundle list` calls) every %.2g s. *Requests per cluster* are the audit-log requests with the "+
		"provider's user agent during the apply (spire-controller-manager and SPIRE's bundle notifier use the same "+
		"credentials and are left out), divided by k; *max* is the busiest cluster. *Apply CPU* is first the rusage of the "+
		"benchmark's children that ended during the apply: terraform, the provider, and the spire-server processes pod "+
		"exec runs (the lab's exec endpoint is part of the benchmark); then the provider alone, sampled from /proc. "+
		"*Lab* is the CPU of the lab's etcd, kube-apiserver, spire-server and spire-controller-manager processes. "+
		"*Machine busy* is the busy time of the machine's %d cores during the apply (/proc/stat, everything included) over wall "+
		"time × cores: near 100%% the machine, not the provider, sets the pace. "+
		"*RSS* is the provider's peak VmHWM. After the apply a plan with refresh must be empty; a timed destroy (with "+
		"`delete_bundle_on_destroy`) removes everything.\n\n", meshPollEvery.Seconds(), cores)
	p("Clusters are started once and kept: a row starts only the clusters it lacks (in parallel, before and outside " +
		"its timed commands; *new* and *start* below), so no idle cluster runs during a row, and the first clusters of a " +
		"larger row served the smaller rows before it. Before each row the benchmark checks that no SPIRE server holds a " +
		"peer bundle and no cluster has a ClusterFederatedTrustDomain.\n\n")

	p("| Clusters | Terraform | Resources | Apply (s): median (runs) | ms per resource | Apply CPU total / provider / lab (s) | Machine busy | Provider peak RSS (MiB) | All bundles held (s), first server | Requests per cluster (max) | Plan after apply (s) | Destroy (s) | New clusters, start (s) |\n")
	p("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range rows {
		plan := fmt.Sprintf("%.1f", row.PlanWall)
		if row.PlanWall > 0 && !row.PlanEmpty {
			plan += " (not empty)"
		}
		held := "not reached"
		if row.AllBundlesHeld > 0 {
			held = fmt.Sprintf("%.1f", row.AllBundlesHeld)
			if len(row.BundlesHeldPerCluster) > 0 {
				held += fmt.Sprintf(", %.1f", slices.Min(row.BundlesHeldPerCluster))
			}
		}
		perResource := 0.0
		if row.Resources > 0 {
			perResource = row.ApplyWall * 1000 / float64(row.Resources)
		}
		apply := fmt.Sprintf("%.1f", row.ApplyWall)
		if len(row.ApplyWalls) > 1 {
			walls := make([]string, len(row.ApplyWalls))
			for i, w := range row.ApplyWalls {
				walls[i] = fmt.Sprintf("%.1f", w)
			}
			apply += " (" + strings.Join(walls, ", ") + ")"
		}
		started := "-"
		if row.NewClusters > 0 {
			started = fmt.Sprintf("%d, %.0f", row.NewClusters, row.StartWall)
		}
		p("| %d | %s | %d | %s | %.0f | %.1f / %.1f / %.1f | %.0f%% | %.1f | %s | %.0f (%d) | %s | %.1f | %s |\n",
			row.Clusters, orDash(row.Terraform), row.Resources, apply, perResource,
			row.ApplyCPUTotal, row.ApplyCPUProvider, row.ApplyLabCPU, row.ApplyMachineBusy*100, float64(row.ProviderRSS)/(1<<20), held,
			row.RequestsPerClusterTotal, row.RequestsMaxCluster, plan, row.DestroyWall, started)
	}
	p("\n")

	kinds := map[string]bool{}
	for _, row := range rows {
		for kind := range row.RequestsPerCluster {
			kinds[kind] = true
		}
	}
	if len(kinds) > 0 {
		p("Provider requests per cluster during the apply, by kind:\n\n| Request |")
		for _, row := range rows {
			p(" %d clusters |", row.Clusters)
		}
		p("\n|---|%s\n", strings.Repeat("---:|", len(rows)))
		for _, kind := range sortedKeys(kinds) {
			p("| %s |", kind)
			for _, row := range rows {
				p(" %s |", strconv.FormatFloat(row.RequestsPerCluster[kind], 'f', -1, 64))
			}
			p("\n")
		}
		p("\n")
	}
	for _, row := range rows {
		if row.Error != "" {
			p("- %d clusters: %s\n", row.Clusters, esc(row.Error))
		}
	}
	b.WriteString(trustMarkdown(r))
	b.WriteString(joinMarkdown(r))
	b.WriteString(courierMarkdown(r))
	return b.String()
}

// trustMarkdown is the time-to-trust and time-to-heal part of the cluster
// section; empty when the run had no time-to-trust runs.
func trustMarkdown(r *Results) string {
	var rows []ClusterScaleRow
	for _, row := range r.ClusterScale {
		if row.TrustPairs > 0 || row.TrustError != "" {
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n### Time to trust: workloads of every cluster handshake\n\n")
	p("After its timed runs, each row applies its mesh once more, into clusters where a platform team has already "+
		"deployed its applications: per cluster a k8s_psat spire-agent and a Pod whose workload (a go-spiffe mTLS "+
		"server, `internal/testkit/cmd/ztworkload`) runs and waits for its SVID. The apply creates, besides the federations, "+
		"a ClusterSPIFFEID per cluster (`zerotrust_cluster_spiffe_id`, template `%s`, federating with every peer trust "+
		"domain) after that cluster's federations, as `examples/n-cluster-mesh` does, and waits until SPIRE's entries "+
		"for the selected Pods carry every federation; then the "+
		"agent issues the SVID (with every peer bundle) and the workload serves. *Time to trust* runs from the start of "+
		"the one `terraform apply` until every ordered pair of workloads has completed an mTLS handshake (each side "+
		"authorizing the other's trust domain): all pairs are tried as soon as both of their workloads serve, %d handshakes "+
		"at a time (each is a process start), again %.0f s after a failure. *Serving* is when the last workload got its SVID. "+
		"*All bundles held* (polled as in the table above) is where the provider's part ends. Single runs.\n\n", trustTemplate, trustDialers, trustRetry.Seconds())
	p("| Clusters | Ordered pairs | Apply (s) | All bundles held (s) | Last workload serving (s) | Time to trust (s) | Handshakes tried |\n")
	p("|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range rows {
		ttt := "not reached"
		if row.TimeToTrust > 0 {
			ttt = fmt.Sprintf("%.1f", row.TimeToTrust)
		}
		p("| %d | %d | %.1f | %.1f | %.1f | %s | %d |\n", row.Clusters, row.TrustPairs, row.TrustApplyWall, row.TrustBundlesHeld, row.TrustWorkloadsServing, ttt, row.TrustDials)
	}
	p("\n")
	for _, row := range rows {
		if row.TrustError != "" {
			p("- %d clusters: %s\n", row.Clusters, esc(row.TrustError))
		}
	}
	if len(r.ClusterHeal) == 0 {
		return b.String()
	}
	p("\n### Time to heal: one apply repairs SPIRE's side\n\n")
	p("On the mesh of the smallest time-to-trust run, while every pair handshakes, one SPIRE server is damaged, then "+
		"`terraform plan -detailed-exitcode` and one `terraform apply` of the unchanged configuration run. "+
		"`zerotrust_federated_trust_domain` reads SPIRE's side on refresh (`spire_trust`), so the plan should show the "+
		"damage as `spire_trust` changing to `federated` (exit 2), and the apply repairs it (re-seeds the bundle from "+
		"`trust_domain_bundle`, then refreshes it). *Every pair* is the time from the start of that apply until every "+
		"ordered pair of workloads has handshaken again, polled as above for at most %.0f s; after it a plan must be empty, "+
		"and %.0f s later (more than an agent's sync interval) every pair is tried once more (*pairs after*): a pair that "+
		"handshook during the apply, before the repair reached its workloads, may fail then. "+
		"The cases run in this order on the same mesh; *broke* says a handshake of the damaged pair failed (within %.0f s) "+
		"before the plan. Single runs.\n\n", healWaitCap.Seconds(), healSettle.Seconds(), trustBreakWait.Seconds())
	p("| Case | Damage | Broke | Plan before: exit, spire_trust | Shows repair | Apply (s) | Every pair handshakes (s) | Plan after empty | Pairs after |\n")
	p("|---|---|---|---|---|---:|---:|---|---:|\n")
	for _, c := range r.ClusterHeal {
		all := "not reached"
		if c.AllPairs > 0 {
			all = fmt.Sprintf("%.1f", c.AllPairs)
		}
		trust := strings.Join(c.PlanTrust, ", ")
		if trust == "" {
			trust = "no spire_trust change"
		}
		p("| %s (%d clusters) | %s | %v | %d, %s (%d to change) | %v | %.1f | %s | %v | %d of %d |\n", c.Case, c.Clusters, esc(c.Damage),
			c.Broke, c.PlanExit, trust, c.PlanChanges, c.PlanShowsRepair, c.ApplyWall, all, c.PlanAfterEmpty, c.PairsAfter, c.Pairs)
	}
	p("\n")
	for _, c := range r.ClusterHeal {
		if c.Error != "" {
			p("- %s: %s\n", c.Case, esc(c.Error))
		}
	}
	return b.String()
}
