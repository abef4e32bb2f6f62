package examplestest

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// clusterUnreachable sets the example's workloads (a ClusterSPIFFEID per
// cluster federating with every peer), then points the provider's
// connection to north at an address where nothing listens (north itself
// keeps running, as a cluster behind a broken network path does) while east
// prepares a new authority. The plan must go on, within the reachability
// bound of the same plan with north answering: one warning names north and
// its address, north's objects keep their state (one more warning, shown
// once), north's bundles and the copies of north's bundle are kept, and only
// west gets east's new bundle. Every pair keeps handshaking. With north's
// connection back, the next plan carries east's bundle to north too, and the
// plan after that apply is empty. The workloads are removed at the end.
func (m *courierMesh) clusterUnreachable(t *testing.T) {
	ctx := context.Background()
	eastS, westS, northS := m.spires[east], m.spires[1], m.spires[2]
	m.podLabels = map[string]string{"app": "courier-federated"}
	m.writeVars(t, nil)
	m.apply(t, "adding the workloads")
	start := time.Now()
	planEmpty(t, m.dir, "after the apply adding the workloads")
	alive := time.Since(start)

	dead := deadKubeconfig(t, northS.Cluster.Kubeconfig)
	m.writeVars(t, map[string]string{northS.Cluster.Name: dead.path})

	prepared, err := eastS.PrepareX509Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	changes, out := plannedChangesAndOutput(t, m.dir)
	took := time.Since(start)
	t.Logf("plan with %s unreachable: %s (with it answering: %s)", northS.Cluster.Name, took.Round(time.Millisecond), alive.Round(time.Millisecond))
	if took > alive+kube.PlanReachTimeout+5*time.Second {
		t.Errorf("with %s unreachable the plan took %s, with it answering %s: more than the reachability bound apart",
			northS.Cluster.Name, took, alive)
	}
	kept := fmt.Sprintf("Warning: Cluster %q Unreachable: State Kept Without Refresh", northS.Cluster.Name)
	if n := strings.Count(out, kept); n != 1 {
		t.Errorf("want %q once, got %d times:\n%s", kept, n, out)
	}
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
	t.Cleanup(func() {
		m.podLabels = nil
		m.writeVars(t, nil)
		m.apply(t, "removing the workloads")
	})
	waitFor(t, "north's workload to hold east's prepared authority", propagationTimeout, func(ctx context.Context) (bool, string) {
		v, err := m.workloads[2].Show(ctx)
		if err != nil {
			return false, err.Error()
		}
		return slices.Contains(v.Bundles[eastS.TrustDomain], prepared), fmt.Sprintf("north holds %v", v.Bundles[eastS.TrustDomain])
	})
}

// clusterSilent is clusterUnreachable's plan and apply with north's
// connection pointed at a listener that accepts connections and never
// answers (a firewall that drops, a hung server): no TLS handshake ever
// completes, so each request could wait for client-go's handshake timeout.
// The plan must stay within the reachability bound of the same plan with
// north answering, warn once that north's objects keep their state and once
// that its checks were skipped, and plan no change; the apply changes
// nothing and every pair keeps handshaking. With north back the plan is
// empty.
func (m *courierMesh) clusterSilent(t *testing.T) {
	ctx := context.Background()
	northS := m.spires[2]
	m.podLabels = map[string]string{"app": "courier-federated"}
	m.writeVars(t, nil)
	m.apply(t, "adding the workloads")
	t.Cleanup(func() {
		m.podLabels = nil
		m.writeVars(t, nil)
		m.apply(t, "removing the workloads")
	})
	start := time.Now()
	planEmpty(t, m.dir, "after the apply adding the workloads")
	alive := time.Since(start)

	server := "https://" + acctest.SilentAddress(t)
	m.writeVars(t, map[string]string{northS.Cluster.Name: kubeconfigAt(t, northS.Cluster.Kubeconfig, server)})
	start = time.Now()
	changes, out := plannedChangesAndOutput(t, m.dir)
	took := time.Since(start)
	t.Logf("plan with %s silent: %s (with it answering: %s)", northS.Cluster.Name, took.Round(time.Millisecond), alive.Round(time.Millisecond))
	if took > alive+kube.PlanReachTimeout+5*time.Second {
		t.Errorf("with %s silent the plan took %s, with it answering %s: more than the reachability bound apart",
			northS.Cluster.Name, took, alive)
	}
	if len(changes) != 0 {
		t.Errorf("with %s silent and nothing changed, the plan changes %v:\n%s", northS.Cluster.Name, changes, out)
	}
	for _, warning := range []string{
		fmt.Sprintf("Warning: Cluster %q Unreachable: State Kept Without Refresh", northS.Cluster.Name),
		"Warning: Cluster Unreachable: Plan-Time Checks Skipped",
	} {
		if n := strings.Count(out, warning); n != 1 {
			t.Errorf("want %q once, got %d times:\n%s", warning, n, out)
		}
	}
	if want := fmt.Sprintf("Cluster %q at %s did not answer", northS.Cluster.Name, server); !strings.Contains(out, want) {
		t.Errorf("want %q in the plan output:\n%s", want, out)
	}
	m.apply(t, "with north silent")
	expectEveryPair(ctx, t, m.workloads, "after the apply with north silent")

	m.writeVars(t, nil)
	planEmpty(t, m.dir, "with north back after it was silent")
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
	return deadKubeconfigFile{path: kubeconfigAt(t, kubeconfig, server), server: server}
}
