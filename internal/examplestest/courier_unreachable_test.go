package examplestest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// clusterUnreachable points the provider's connection to north at an
// address where nothing listens (north itself keeps running, as a cluster
// behind a broken network path does) while east prepares a new authority.
// The plan must go on: one warning names north and its address, north's
// bundles and the copies of north's bundle are kept, and only west gets
// east's new bundle. Every pair keeps handshaking. With north's connection
// back, the next plan carries east's bundle to north too, and the plan after
// that apply is empty.
func (m *courierMesh) clusterUnreachable(t *testing.T) {
	ctx := context.Background()
	eastS, westS, northS := m.spires[east], m.spires[1], m.spires[2]
	dead := deadKubeconfig(t, northS.Cluster.Kubeconfig)
	m.writeVars(t, map[string]string{northS.Cluster.Name: dead.path})

	prepared, err := eastS.PrepareX509Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	changes, out := plannedChangesAndOutput(t, m.dir)
	want := []string{fmt.Sprintf("zerotrust_spire_bundle.peer[%q]: update", westS.Cluster.Name+"->"+eastS.Cluster.Name)}
	if !slices.Equal(changes, want) {
		t.Errorf("with %s unreachable, the plan after east's prepare changes %v, want %v:\n%s", northS.Cluster.Name, changes, want, out)
	}
	const summary = "Warning: Cluster Unreachable: Plan-Time Checks Skipped"
	if n := strings.Count(out, summary); n != 1 {
		t.Errorf("want the warning %q once, got %d times:\n%s", summary, n, out)
	}
	for _, s := range []string{
		fmt.Sprintf("Cluster %q at %s did not answer", northS.Cluster.Name, dead.server),
		"instead, zerotrust_spire_bundle keeps the bundles it set",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("want %q in the plan output:\n%s", s, out)
		}
	}
	t.Logf("plan with %s unreachable: %v", northS.Cluster.Name, changes)

	m.apply(t, "with north unreachable")
	waitFor(t, "west's workload to hold east's prepared authority", propagationTimeout, func(ctx context.Context) (bool, string) {
		v, err := m.workloads[1].Show(ctx)
		if err != nil {
			return false, err.Error()
		}
		return slices.Contains(v.Bundles[eastS.TrustDomain], prepared), fmt.Sprintf("west holds %v", v.Bundles[eastS.TrustDomain])
	})
	// North's SPIRE server was not written: it lacks the prepared authority,
	// and the peers still hold north's bundle (nothing deleted it).
	if v, err := m.workloads[2].Show(ctx); err != nil {
		t.Fatal(err)
	} else if slices.Contains(v.Bundles[eastS.TrustDomain], prepared) {
		t.Errorf("north holds east's prepared authority although its cluster did not answer")
	}
	expectEveryPair(ctx, t, m.workloads, "after the apply with north unreachable (every bundle of and in north kept)")

	m.writeVars(t, nil)
	changes = plannedChanges(t, m.dir)
	want = []string{fmt.Sprintf("zerotrust_spire_bundle.peer[%q]: update", northS.Cluster.Name+"->"+eastS.Cluster.Name)}
	if !slices.Equal(changes, want) {
		t.Errorf("with north back, the plan changes %v, want %v", changes, want)
	}
	m.apply(t, "with north back")
	planEmpty(t, m.dir, "after the apply with north back")
	waitFor(t, "north's workload to hold east's prepared authority", propagationTimeout, func(ctx context.Context) (bool, string) {
		v, err := m.workloads[2].Show(ctx)
		if err != nil {
			return false, err.Error()
		}
		return slices.Contains(v.Bundles[eastS.TrustDomain], prepared), fmt.Sprintf("north holds %v", v.Bundles[eastS.TrustDomain])
	})
}

// deadKubeconfigFile is a copy of a kubeconfig whose server is an address
// where nothing listens.
type deadKubeconfigFile struct {
	path   string
	server string
}

var kubeconfigServer = regexp.MustCompile(`(?m)^(\s*server:\s*)\S+$`)

func deadKubeconfig(t *testing.T, kubeconfig string) deadKubeconfigFile {
	t.Helper()
	server := "https://" + acctest.ClosedAddress(t)
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
	return deadKubeconfigFile{path: path, server: server}
}
