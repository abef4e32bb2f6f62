package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/bench/internal/statehttp"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// The wide mesh (BENCH_SCALE=mesh, make bench-mesh): the full mesh of
// zerotrust_federated_trust_domain, every cluster federating with every
// other one (N*(N-1) objects), in one apply and one plan, at cluster counts
// up to 50, the most peers the operator allows a SpireServer. The clusters
// are real kube-apiservers sharing one etcd, each under its own prefix
// (harness.Options.SharedEtcd), which is what lets 50 fit in one machine.
//
// Left out, because they need SPIRE and SPIRE is not what this measures:
// no SPIRE server runs, so the federations do not wait for bundles
// (wait_for_bundle = false), check nothing with SPIRE (check_spire = false)
// and delete no bundle on destroy; the trust domains and bundle endpoints
// are names only. The ClusterSPIFFEIDs of the mesh are left out
// too: their create waits until SPIRE's entries federate. The SPIRE-backed
// mesh of 3 to 10 clusters is BENCH_SCALE=clusters.

// MeshRow is one cluster count of the wide mesh with one state backend.
type MeshRow struct {
	Clusters  int     `json:"clusters"`
	State     string  `json:"state"`
	Objects   int     `json:"objects"`
	StartS    float64 `json:"lab_start_s"`
	LabRSSMiB float64 `json:"lab_rss_mib"` // every apiserver and the etcd, after the apply
	APIRSSMiB float64 `json:"apiserver_rss_mib_each"`
	Apply     Phase   `json:"apply"`
	Plan      Phase   `json:"plan"`
	PlanEmpty bool    `json:"plan_empty"`
}

// Phase is one timed terraform command of the wide mesh.
type Phase struct {
	Wall           float64        `json:"wall_s"`
	CPU            float64        `json:"cpu_s"`
	CPUProvider    float64        `json:"cpu_provider_s"`
	MsPerObject    float64        `json:"ms_per_object"`
	CPUMsPerObject float64        `json:"cpu_ms_per_object"`
	ProviderRSS    int64          `json:"provider_peak_rss_bytes"`
	LoadMax        float64        `json:"load1_max"`
	Requests       int            `json:"requests"`
	PerCluster     float64        `json:"requests_per_cluster"`
	RequestsByKey  map[string]int `json:"requests_by_kind"`
}

func runMesh(ctx context.Context, env *tfEnv, opts options, machine Machine) error {
	stateURL, stopState, err := statehttp.Start()
	if err != nil {
		return err
	}
	defer stopState()
	opts.stateURL = stateURL
	var rows []MeshRow
	for _, n := range opts.clusterCounts {
		r, err := meshAt(ctx, env, opts, n)
		rows = append(rows, r...)
		if err != nil {
			return fmt.Errorf("mesh of %d clusters: %w", n, err)
		}
		for _, row := range r {
			logf("mesh: %d clusters, %d objects, %s state: apply %.1f s (%.1f ms/object), plan %.1f s (%.1f ms/object), lab %.0f MiB",
				n, row.Objects, row.State, row.Apply.Wall, row.Apply.MsPerObject, row.Plan.Wall, row.Plan.MsPerObject, row.LabRSSMiB)
		}
		if err := writeMesh(opts.outDir, machine, rows); err != nil {
			return err
		}
	}
	return nil
}

// meshAt starts n clusters and runs the wide mesh on them once per state
// backend of opts.meshStates, each with trust domains of its own (so its
// objects are its own): one row per backend, in that order.
func meshAt(ctx context.Context, env *tfEnv, opts options, n int) ([]MeshRow, error) {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("m%02d", i+1)
	}
	start := time.Now()
	logf("mesh: starting %d clusters on one etcd", n)
	lab, err := harness.Start(ctx, harness.Options{Names: names, Dir: filepath.Join(env.work, fmt.Sprintf("mesh-%d", n)), AuditLog: true, SharedEtcd: true,
		APIServerFlags: []string{"--audit-log-maxsize=100000", "--audit-log-maxbackup=0"}})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := lab.Stop(); err != nil {
			logf("stopping clusters: %v", err)
		}
	}()
	started := time.Since(start).Seconds()
	audit := newAuditReader(lab.Clusters)
	var rows []MeshRow
	for _, state := range opts.meshStates {
		row := MeshRow{Clusters: n, State: state, Objects: n * (n - 1), StartS: started}
		v := meshVariant{Infix: state + "."}
		switch state {
		case "local":
		case "http":
			v.Backend = fmt.Sprintf("  backend \"http\" {\n    address = %q\n  }\n", fmt.Sprintf("%s/mesh-%d", opts.stateURL, n))
		default:
			return rows, fmt.Errorf("BENCH_MESH_STATE: unknown state backend %q (local, http)", state)
		}
		dir := filepath.Join(env.work, "cfg", fmt.Sprintf("mesh-%d-%s", n, state))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return rows, err
		}
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(wideMeshVariant(env.providers[targetZerotrust], lab, v)), 0o644); err != nil {
			return rows, err
		}
		if out, err := env.tf(ctx, dir, 10*time.Minute, "init", "-input=false", "-no-color"); err != nil {
			return rows, fmt.Errorf("terraform init: %w\n%s", err, tail(out, 40))
		}
		for _, phase := range []string{"apply", "plan"} {
			audit.mark()
			s, load, out, err := leanMeasured(ctx, env, dir, opts.timeout, phaseArgs[phase]...)
			if phase == "plan" {
				row.PlanEmpty = err == nil
			}
			if err != nil {
				return rows, fmt.Errorf("terraform %s (%s state): %w\n%s", phase, state, err, tail(out, 40))
			}
			time.Sleep(300 * time.Millisecond)
			api, err := audit.collect()
			if err != nil {
				return rows, err
			}
			p := Phase{Wall: s.Wall, CPU: s.CPUTotal, CPUProvider: s.CPUProvider, MsPerObject: 1000 * s.Wall / float64(row.Objects),
				CPUMsPerObject: 1000 * s.CPUTotal / float64(row.Objects),
				ProviderRSS:    s.ProviderRSS, LoadMax: load.max, Requests: sumCounts(api), RequestsByKey: api}
			p.PerCluster = float64(p.Requests) / float64(n)
			if phase == "apply" {
				row.Apply = p
			} else {
				row.Plan = p
			}
		}
		var total, apis int64
		for _, c := range lab.Clusters {
			hwm, _ := procMem(c.APIServerPID)
			total, apis = total+hwm, apis+hwm
		}
		if hwm, _ := procMem(lab.Clusters[0].EtcdPID); hwm > 0 {
			total += hwm
		}
		row.LabRSSMiB = float64(total) / (1 << 20)
		row.APIRSSMiB = float64(apis) / float64(n) / (1 << 20)
		rows = append(rows, row)
	}
	return rows, nil
}

// wideMeshConfig federates every cluster of lab with every other one, the
// trust domains named after the clusters.
func wideMeshConfig(p provider, lab *harness.Lab) string {
	return wideMeshVariant(p, lab, meshVariant{})
}

// meshVariant is what the dead-cluster mesh (dead.go) changes in the wide
// mesh's configuration; its zero value is the wide mesh.
type meshVariant struct {
	// Dead names the cluster whose connection points at DeadHost (an
	// https:// URL) instead of its apiserver.
	Dead, DeadHost string
	// Suffix is appended to every bundle endpoint URL: a change on every
	// object without a new one.
	Suffix string
	// Infix goes before "mesh.bench.example.org" in every trust domain:
	// objects of their own for one more configuration on the same lab.
	Infix string
	// Backend is the terraform block's backend block; empty for the
	// local state file.
	Backend string
}

func wideMeshVariant(p provider, lab *harness.Lab, v meshVariant) string {
	var b strings.Builder
	fmt.Fprintf(&b, "terraform {\n%s  required_providers {\n    zerotrust = {\n      source  = %q\n      version = \"= %s\"\n    }\n  }\n}\n\nlocals {\n  clusters = {\n",
		v.Backend, strings.TrimPrefix(p.source, "registry.terraform.io/"), p.version)
	for _, c := range lab.Clusters {
		if c.Name == v.Dead {
			fmt.Fprintf(&b, "    %s = { config_path = null, config_context = null, host = %q, token = \"x\", insecure = true }\n", c.Name, v.DeadHost)
			continue
		}
		// The dead cluster's entry has other attributes; with them null here
		// every entry is of one object type.
		nulls := ""
		if v.Dead != "" {
			nulls = ", host = null, token = null, insecure = null"
		}
		fmt.Fprintf(&b, "    %s = { config_path = %q, config_context = %q%s }\n", c.Name, c.Kubeconfig, c.Name, nulls)
	}
	fmt.Fprintf(&b, `  }
  pairs = {
    for pair in setproduct(keys(local.clusters), keys(local.clusters)) :
    "${pair[0]}->${pair[1]}" => { cluster = pair[0], peer = pair[1] }
    if pair[0] != pair[1]
  }
}

provider "zerotrust" {
  clusters = local.clusters
}

resource "zerotrust_federated_trust_domain" "peer" {
  for_each = local.pairs

  cluster             = each.value.cluster
  trust_domain        = "${each.value.peer}.%[2]smesh.bench.example.org"
  bundle_endpoint_url = "https://${each.value.peer}.%[2]smesh.bench.example.org:8443%[1]s"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = "spiffe://${each.value.peer}.%[2]smesh.bench.example.org/spire/server"
  }
  wait_for_bundle          = false
  check_spire              = false
  delete_bundle_on_destroy = false
}
`, v.Suffix, v.Infix)
	return b.String()
}

// writeMesh writes bench/MESH.md and bench/mesh.json.
func writeMesh(dir string, machine Machine, rows []MeshRow) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(map[string]any{"machine": machine, "rows": rows}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "mesh.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Wide mesh: every cluster federates with every other, one etcd for all apiservers\n\n%d CPUs, load average at start %s. No SPIRE (see bench/cmd/bench/mesh.go for what is left out).\n\n", machine.CPUs, machine.LoadAvg)
	b.WriteString("State: `local` is the state file, which Terraform writes whole after every object it applies; `http` is a remote backend (bench/internal/statehttp), which keeps writes in memory and persists at most every 20 s, as S3, GCS, azurerm and Terraform Cloud do. Both run on the same clusters, each with objects of its own, in the order listed.\n\n")
	b.WriteString("| clusters | state | objects | lab start | apiserver RSS each | lab RSS | apply | apply ms/object | apply CPU (provider) | apply CPU ms/object | plan | plan ms/object | plan CPU (provider) | plan CPU ms/object | provider peak RSS | plan requests per cluster | apply requests per cluster | load (apply, plan) | plan empty |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %d | %s | %d | %.0f s | %.0f MiB | %.0f MiB | %.1f s | %.1f | %.1f s (%.1f s) | %.1f | %.1f s | %.2f | %.1f s (%.1f s) | %.2f | %.1f MiB | %.1f | %.1f | %.1f, %.1f | %v |\n",
			r.Clusters, r.State, r.Objects, r.StartS, r.APIRSSMiB, r.LabRSSMiB, r.Apply.Wall, r.Apply.MsPerObject, r.Apply.CPU, r.Apply.CPUProvider, r.Apply.CPUMsPerObject,
			r.Plan.Wall, r.Plan.MsPerObject, r.Plan.CPU, r.Plan.CPUProvider, r.Plan.CPUMsPerObject, float64(r.Plan.ProviderRSS)/(1<<20), r.Plan.PerCluster, r.Apply.PerCluster,
			r.Apply.LoadMax, r.Plan.LoadMax, r.PlanEmpty)
	}
	return os.WriteFile(filepath.Join(dir, "MESH.md"), []byte(b.String()), 0o644)
}
