package examplestest

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestAccExampleMixedMesh: examples/n-cluster-mesh federates a mixed fleet in
// ONE apply. mxeast's SPIRE is laid out as the OpenShift operator does;
// mxwest's and mxnorth's as the SPIFFE Helm chart does (server in
// spire-server, bundle in spire-system, the chart's className), which their
// entries in the clusters variable say with spire_install = "helm"; each
// runs spire-controller-manager and a pod workload that the example's
// ClusterSPIFFEIDs (`workloads` set) give its identity. Before the apply
// every ordered pair fails its handshake (no identity, no trust); after it
// every pair handshakes, each side authorizing the other's SPIFFE ID; the
// plan after it is empty (`terraform plan -detailed-exitcode` exits 0) and
// the example's federation check holds.
func TestAccExampleMixedMesh(t *testing.T) {
	m := startPodMesh(t, []string{"mxeast", "mxwest", "mxnorth"}, true, "mxwest", "mxnorth")
	ctx := context.Background()
	workloads := m.workloads(len(m.clusters))

	for _, r := range everyPair(ctx, workloads, false, 10*time.Second) {
		if r.err != nil {
			t.Error(r.err)
			continue
		}
		t.Logf("before apply, %s -> %s: %s", r.from.SPIFFEID, r.to.SPIFFEID, r.detail)
	}
	if t.Failed() {
		t.FailNow()
	}

	m.writeVars(t, len(m.clusters), nil)
	start := time.Now()
	out := mustTerraform(t, m.dir, "apply", "-auto-approve", "-no-color")
	t.Logf("apply of the mixed mesh: %s (%s)", time.Since(start).Round(time.Millisecond), applySummary(out))
	for _, r := range everyPair(ctx, workloads, true, mtlsTimeout) {
		if r.err != nil {
			t.Error(r.err)
			continue
		}
		t.Logf("after apply, %s -> %s: %s", r.from.SPIFFEID, r.to.SPIFFEID, r.detail)
		if want := "ok " + r.to.SPIFFEID + ": hello " + r.from.SPIFFEID; r.detail != want {
			t.Errorf("after apply the handshake said %q, want %q", r.detail, want)
		}
	}
	t.Logf("every one of the 6 pairs handshakes %s after the start of the apply", time.Since(start).Round(time.Millisecond))
	planEmpty(t, m.dir, "after the apply of the mixed mesh")
	// What a scheduled drift job runs: on the converged mesh the plan has
	// no change (exit 0), the health data source being read at plan time,
	// and the example's check holds: every SPIRE server has every
	// relationship and bundle, and every peer's endpoint serves what SPIRE
	// holds.
	out, code := terraform(t, m.dir, "plan", "-detailed-exitcode", "-no-color")
	if code != 0 {
		t.Fatalf("terraform plan -detailed-exitcode on the converged mixed mesh exited %d, want 0:\n%s", code, out)
	}
	t.Logf("terraform plan -detailed-exitcode on the converged mixed mesh: exit 0")
	if strings.Contains(out, "Check block assertion failed") {
		t.Errorf("after the apply the example's federation check fails:\n%s", out)
	}
}
