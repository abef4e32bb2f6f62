package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// The courier run: the mesh of examples/courier-federation, where Terraform
// carries every cluster's bundle into every peer's SPIRE server
// (zerotrust_spire_bundle) instead of SPIRE fetching it from a bundle
// endpoint. The clusters' SPIRE servers do serve endpoints (the other runs
// use them), but nothing in this configuration makes SPIRE fetch one: no
// ClusterFederatedTrustDomain, no federates_with. One apply creates the
// N*(N-1) bundles and a ClusterSPIFFEID per cluster whose entries federate
// with every peer; time to trust runs from its start until every ordered
// workload pair has handshaken.

// CourierRow is one courier run.
type CourierRow struct {
	Clusters int `json:"clusters"`
	Pairs    int `json:"pairs"`
	// Bundles is how many zerotrust_spire_bundle the apply created.
	Bundles int `json:"bundles"`
	// ApplyWall is the apply; BundlesHeld when every SPIRE server held
	// every peer's bundle; TimeToTrust when every pair had handshaken
	// (zero: not reached), all from the start of the apply.
	ApplyWall   float64 `json:"apply_wall_s"`
	BundlesHeld float64 `json:"bundles_held_s,omitempty"`
	TimeToTrust float64 `json:"time_to_trust_s,omitempty"`
	Dials       int     `json:"dials"`
	Error       string  `json:"error,omitempty"`
}

// meshCourier runs the courier mesh of members in dir (initialized by the
// row's runs, its state empty) and destroys everything after. The error
// means the clusters are not clean afterwards.
func meshCourier(ctx context.Context, env *tfEnv, opts options, dir string, members []*meshMember) (CourierRow, error) {
	n := len(members)
	row := CourierRow{Clusters: n, Pairs: n * (n - 1), Bundles: n * (n - 1)}
	ws := newMeshWorkloads(members)
	err := func() error {
		facts := make([]courierClusterFacts, n)
		for i, m := range members {
			facts[i] = courierClusterFacts{Name: m.cluster.Name, Kubeconfig: m.cluster.Kubeconfig, TrustDomain: m.spire.TrustDomain}
		}
		config := courierConfig(env.providers[targetZerotrust], facts)
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o644); err != nil {
			return err
		}
		if err := ws.startAll(ctx, "courier"); err != nil {
			return err
		}
		t, err := trustApply(ctx, env, opts, dir, members, ws, "the courier apply", func(out string) error {
			if added := meshAdded(out); added != row.Bundles+n {
				return fmt.Errorf("the courier apply added %d resources, want %d bundles and %d ClusterSPIFFEIDs", added, row.Bundles, n)
			}
			return nil
		})
		row.ApplyWall, row.BundlesHeld, row.Dials = t.apply, t.held, t.dials
		if err != nil {
			return err
		}
		row.TimeToTrust = t.all
		logf("clusters %d: courier: every pair at %.1f s (apply %.1f s, all bundles held at %.1f s, %d handshakes for %d pairs)",
			n, row.TimeToTrust, row.ApplyWall, row.BundlesHeld, row.Dials, row.Pairs)
		return nil
	}()
	if err != nil {
		row.Error = err.Error()
		logf("clusters %d: courier: %v", n, err)
	}
	ws.mu.Lock()
	for i, werr := range ws.errs {
		if werr != nil {
			row.Error = strings.TrimPrefix(row.Error+"; "+fmt.Sprintf("%s: %v", members[i].cluster.Name, werr), "; ")
		}
	}
	ws.mu.Unlock()
	ws.stopAll()
	if err := trustCleanup(ctx, env, opts, dir, members); err != nil {
		return row, fmt.Errorf("clusters %d: after the courier run: %w", n, err)
	}
	return row, nil
}

// trustTimes is what trustApply measured, in seconds from the start of the
// apply (held and all zero: not reached).
type trustTimes struct {
	apply, held, all float64
	dials            int
}

// trustApply runs one timed apply in dir while every ordered pair of ws is
// polled and every SPIRE server's bundles are watched, both from the
// apply's start; check, when given, judges the apply's output before the
// waits. It serves the runs that measure time from one apply until every
// pair handshakes (the join, the courier).
func trustApply(ctx context.Context, env *tfEnv, opts options, dir string, members []*meshMember, ws *meshWorkloads,
	what string, check func(out string) error) (trustTimes, error) {
	var t trustTimes
	start := time.Now()
	poll := startPairPoll(ctx, ws, start, trustWaitCap)
	bundles := startBundlePoll(ctx, members, start, trustWaitCap)
	s, out, err := env.measured(ctx, dir, opts.timeout, phaseArgs["apply"]...)
	t.apply = round3(s.Wall)
	if err == nil && check != nil {
		err = check(out)
	} else if err != nil {
		err = fmt.Errorf("%s: %v: %s", what, err, tail(out, 20))
	}
	if err != nil {
		poll.stop()
		bundles.stop()
		return t, err
	}
	if held, _, err := bundles.wait(); err == nil {
		t.held = round3(held.Seconds())
	}
	all, dials, err := poll.wait()
	t.dials = dials
	if err != nil {
		return t, err
	}
	t.all = round3(all.Seconds())
	return t, nil
}

// runCourierScale runs only the courier mesh, on the smallest cluster count
// (-scale courier): the courier row without the full-mesh part before it.
func runCourierScale(ctx context.Context, env *tfEnv, opts options, res *Results) error {
	k := slices.Min(opts.clusterCounts)
	lab, members, err := startMeshMembers(ctx, env.work, 0, k)
	defer func() {
		var labs []*harness.Lab
		if lab != nil {
			labs = append(labs, lab)
		}
		stopMesh(members, labs)
	}()
	if err != nil {
		return err
	}
	dir := filepath.Join(env.work, "mesh", fmt.Sprintf("courier-%02d", k))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeMeshConfig(env, dir, members, false); err != nil {
		return err
	}
	if out, err := env.tf(ctx, dir, 10*time.Minute, "init", "-input=false", "-no-color"); err != nil {
		return fmt.Errorf("courier: terraform init: %w\n%s", err, tail(out, 40))
	}
	row, err := meshCourier(ctx, env, opts, dir, members)
	res.ClusterCourier = append(res.ClusterCourier, row)
	return err
}

// courierClusterFacts is what examples/courier-federation's var.clusters
// holds of one cluster.
type courierClusterFacts struct {
	Name, Kubeconfig, TrustDomain string
}

// courierConfig is examples/courier-federation's configuration for
// clusters (without its outputs and check block, which verify rather than
// federate; the benchmark asks SPIRE itself), with its workloads selecting
// the benchmark's pods.
func courierConfig(p provider, clusters []courierClusterFacts) string {
	var b strings.Builder
	fmt.Fprintf(&b, `terraform {
  required_providers {
    zerotrust = {
      source  = %q
      version = "= %s"
    }
  }
}

# What var.clusters of examples/courier-federation holds.
locals {
  clusters = {
`, strings.TrimPrefix(p.source, "registry.terraform.io/"), p.version)
	for _, c := range clusters {
		fmt.Fprintf(&b, "    %s = { config_path = %q, config_context = %q, trust_domain = %q }\n",
			c.Name, c.Kubeconfig, c.Name, c.TrustDomain)
	}
	b.WriteString("  }\n}\n")
	fmt.Fprintf(&b, courierConfigBody, trustCSID, trustTemplate, trustLabels["app"])
	return b.String()
}

const courierConfigBody = `
provider "zerotrust" {
  clusters = {
    for name, c in local.clusters : name => { config_path = c.config_path, config_context = c.config_context }
  }
}

data "zerotrust_trust_bundle" "this" {
  for_each = local.clusters

  cluster        = each.key
  trust_domain   = each.value.trust_domain
  spire_server   = {}
  on_unreachable = "warn"
}

locals {
  # "a->b": cluster a holds (trusts) b's bundle.
  pairs = {
    for pair in setproduct(keys(local.clusters), keys(local.clusters)) :
    "${pair[0]}->${pair[1]}" => { cluster = pair[0], peer = pair[1] }
    if pair[0] != pair[1]
  }
}

resource "zerotrust_spire_bundle" "peer" {
  for_each = local.pairs

  cluster      = each.value.cluster
  trust_domain = local.clusters[each.value.peer].trust_domain
  bundle       = data.zerotrust_trust_bundle.this[each.value.peer].spiffe_bundle
}

resource "zerotrust_cluster_spiffe_id" "workloads" {
  for_each = local.clusters

  cluster            = each.key
  name               = %q
  spiffe_id_template = %q
  pod_selector = {
    match_labels = { app = %q }
  }
  federates_with = [
    for b in zerotrust_spire_bundle.peer : b.trust_domain if b.cluster == each.key
  ]
}
`

// courierGoal: the courier mesh trusts after one apply.
func (r *Results) courierGoal(add func(Goal)) {
	if len(r.ClusterCourier) == 0 {
		return
	}
	var parts []string
	ok := true
	for _, c := range r.ClusterCourier {
		ok = ok && c.TimeToTrust > 0
		if c.TimeToTrust > 0 {
			parts = append(parts, fmt.Sprintf("%d clusters (%d bundles carried, %d pairs) %.1f s", c.Clusters, c.Bundles, c.Pairs, c.TimeToTrust))
		} else {
			parts = append(parts, fmt.Sprintf("%d clusters: not reached", c.Clusters))
		}
	}
	add(Goal{Goal: "Terraform as the courier (no bundle endpoint fetched): every ordered workload pair handshakes after one apply (time to trust)",
		Measured: strings.Join(parts, "; "), Status: status(ok),
		Note: "examples/courier-federation's shape: zerotrust_spire_bundle for every ordered pair and a ClusterSPIFFEID per cluster, from the start of the apply"})
}

// courierMarkdown is the report's courier section.
func courierMarkdown(r *Results) string {
	if len(r.ClusterCourier) == 0 {
		return ""
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n### Time to trust when Terraform carries the bundles\n\n")
	p("After the join run, on clean clusters of the smallest row: the configuration of `examples/courier-federation` "+
		"(each cluster's bundle read from its own SPIRE server by pod exec, set in every peer's SPIRE server by "+
		"`zerotrust_spire_bundle`, and a ClusterSPIFFEID per cluster federating with every peer). No relationship "+
		"exists, so SPIRE fetches no endpoint. Agents and workloads run before the apply. *Time to trust* runs from "+
		"the start of the one `terraform apply` until every ordered workload pair has handshaken (polled as in the "+
		"time-to-trust run, at most %.0f s). Single runs.\n\n", trustWaitCap.Seconds())
	p("| Clusters | Bundles carried | Pairs | Apply (s) | All bundles held (s) | Time to trust (s) | Handshakes tried |\n")
	p("|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range r.ClusterCourier {
		ttt := "not reached"
		if c.TimeToTrust > 0 {
			ttt = fmt.Sprintf("%.1f", c.TimeToTrust)
		}
		p("| %d | %d | %d | %.1f | %.1f | %s | %d |\n", c.Clusters, c.Bundles, c.Pairs, c.ApplyWall, c.BundlesHeld, ttt, c.Dials)
	}
	p("\n")
	for _, c := range r.ClusterCourier {
		if c.Error != "" {
			p("- %d clusters: %s\n", c.Clusters, esc(c.Error))
		}
	}
	return b.String()
}
