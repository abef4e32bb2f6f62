package examplestest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAccExampleQuickstart applies examples/quickstart, the README's quick
// starts, as written, to two clusters of each layout the README names: both
// SPIRE installs laid out as the OpenShift operator does, both as the SPIFFE
// Helm chart does, and one of each. Each cluster runs real SPIRE,
// spire-controller-manager and a pod workload labelled as the test's
// `workloads` variable says. Before the apply the two workloads cannot
// handshake; after it they do, each authorizing the other's SPIFFE ID from
// the other trust domain; after `terraform apply -refresh-only` (which reads
// the example's zerotrust_federation_status again) the plan is empty (exit
// 0 of -detailed-exitcode), federation_ok is true and trust_graph draws both
// edges healthy.
func TestAccExampleQuickstart(t *testing.T) {
	for _, layout := range []struct {
		name  string
		names []string
		helm  []string
	}{
		{"operator", []string{"qsopeast", "qsopwest"}, nil},
		{"helm", []string{"qshelmeks", "qshelmgke"}, []string{"qshelmeks", "qshelmgke"}},
		{"mixed", []string{"qsmxocp", "qsmxaks"}, []string{"qsmxaks"}},
	} {
		t.Run(layout.name, func(t *testing.T) {
			m := startPodMesh(t, layout.names, true, layout.helm...)
			// The mesh's cleanup destroys whatever m.dir holds when it runs.
			m.dir = filepath.Join(copyExamples(t, "quickstart"), "quickstart")
			ctx := context.Background()
			workloads := m.workloads(2)
			for _, r := range everyPair(ctx, workloads, false, 10*time.Second) {
				if r.err != nil {
					t.Error(r.err)
				}
			}
			if t.Failed() {
				t.FailNow()
			}

			m.writeVars(t, 2, nil)
			start := time.Now()
			out := mustTerraform(t, m.dir, "apply", "-auto-approve", "-no-color")
			t.Logf("%s: apply %s (%s)", layout.name, time.Since(start).Round(time.Millisecond), applySummary(out))
			for _, r := range everyPair(ctx, workloads, true, mtlsTimeout) {
				if r.err != nil {
					t.Error(r.err)
					continue
				}
				if want := "ok " + r.to.SPIFFEID + ": hello " + r.from.SPIFFEID; r.detail != want {
					t.Errorf("after the apply the handshake said %q, want %q", r.detail, want)
				}
				t.Logf("%s: after the apply, %s -> %s: %s", layout.name, r.from.SPIFFEID, r.to.SPIFFEID, r.detail)
			}

			mustTerraform(t, m.dir, "apply", "-refresh-only", "-auto-approve", "-no-color")
			if out, code := terraform(t, m.dir, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
				t.Errorf("%s: terraform plan -detailed-exitcode exited %d after the apply, want 0:\n%s", layout.name, code, out)
			}
			if ok := strings.TrimSpace(mustTerraform(t, m.dir, "output", "-raw", "federation_ok")); ok != "true" {
				t.Errorf("%s: federation_ok is %s: %s", layout.name, ok, mustTerraform(t, m.dir, "output", "-no-color", "federation_problems"))
			}
			graph := mustTerraform(t, m.dir, "output", "-raw", "trust_graph")
			t.Logf("%s: trust_graph:\n%s", layout.name, graph)
			for _, edge := range []string{`c0 -->|"ok"| c1`, `c1 -->|"ok"| c0`} {
				if !strings.Contains(graph, edge) {
					t.Errorf("%s: trust_graph lacks %s", layout.name, edge)
				}
			}
		})
	}
}
