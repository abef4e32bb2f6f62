package examplestest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// TestAccExampleNClusterMeshUnreachable: examples/n-cluster-mesh with its
// `workloads` set and every cluster's trust_domain given, on three clusters
// whose pod workloads handshake. Then the provider's connection to north
// points at a dead address (north keeps running, as behind a broken network
// path), once where nothing listens and once at a listener that never
// answers: the plan warns that north's data source was not read and its
// objects were kept, plans nothing (no federation with north is torn down,
// no ClusterSPIFFEID narrowed), and ends within the reachability bound of
// the same plan with north answering; the apply succeeds and every pair
// still handshakes. With north's connection back, one apply (it carries
// north's facts into the outputs again), and the plan after it is empty.
func TestAccExampleNClusterMeshUnreachable(t *testing.T) {
	m := startPodMesh(t, []string{"ureast", "urwest", "urnorth"}, false)
	clusters, dir := m.clusters, m.dir
	ctx := context.Background()
	north := clusters[2]
	writeVars := func(northKubeconfig string) {
		m.writeVars(t, len(clusters), func(i int, v map[string]any) {
			v["trust_domain"] = m.spires[i].TrustDomain
			if clusters[i] == north && northKubeconfig != "" {
				v["config_path"] = northKubeconfig
			}
		})
	}

	writeVars("")
	mustTerraform(t, dir, "apply", "-auto-approve", "-no-color")
	workloads := m.workloads(3)
	expectEveryPair(ctx, t, workloads, "after the apply of 3 clusters")
	start := time.Now()
	planEmpty(t, dir, "with every cluster answering")
	alive := time.Since(start)

	for mode, server := range map[string]string{
		"closed port":     "https://" + acctest.ClosedAddress(t),
		"silent listener": "https://" + acctest.SilentAddress(t),
	} {
		dead := kubeconfigAt(t, north.Kubeconfig, server)
		writeVars(dead)
		start := time.Now()
		changes, out := plannedChangesAndOutput(t, dir)
		took := time.Since(start)
		t.Logf("plan with %s at %s (%s): %s, changes %v; with it answering: %s", north.Name, server, mode,
			took.Round(time.Millisecond), changes, alive.Round(time.Millisecond))
		if len(changes) != 0 {
			t.Errorf("%s: with %s unreachable the plan changes %v, want nothing", mode, north.Name, changes)
		}
		if took > alive+kube.PlanReachTimeout+5*time.Second {
			t.Errorf("%s: the plan took %s, with %s answering %s: more than the reachability bound apart", mode, took, north.Name, alive)
		}
		for _, summary := range []string{
			fmt.Sprintf("Warning: Cluster %q Unreachable: Data Source Not Read", north.Name),
			fmt.Sprintf("Warning: Cluster %q Unreachable: State Kept Without Refresh", north.Name),
		} {
			if n := strings.Count(out, summary); n != 1 {
				t.Errorf("%s: want %q once, got %d times:\n%s", mode, summary, n, out)
			}
		}
		start = time.Now()
		mustTerraform(t, dir, "apply", "-auto-approve", "-no-color")
		t.Logf("apply with %s unreachable (%s): %s", north.Name, mode, time.Since(start).Round(time.Millisecond))
		expectEveryPair(ctx, t, workloads, "after the apply with "+north.Name+" unreachable ("+mode+")")

		writeVars("")
		start = time.Now()
		mustTerraform(t, dir, "apply", "-auto-approve", "-no-color")
		t.Logf("apply with %s back after the %s: %s", north.Name, mode, time.Since(start).Round(time.Millisecond))
		planEmpty(t, dir, "after the apply with "+north.Name+" back after the "+mode)
	}
}

// kubeconfigAt is a copy of kubeconfig whose server is server.
func kubeconfigAt(t *testing.T, kubeconfig, server string) string {
	t.Helper()
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if !kubeconfigServer.Match(data) {
		t.Fatalf("%s names no server", kubeconfig)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfigServer.ReplaceAll(data, []byte("${1}"+server)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
