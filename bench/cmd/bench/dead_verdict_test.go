package main

import (
	"math"
	"strings"
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

func deadRun(c string, plan, planCPU, apply float64) DeadRun {
	return DeadRun{Case: c, Plan: Sample{Wall: plan, CPU: planCPU}, Apply: Sample{Wall: apply, CPU: apply / 2}}
}

func TestJudgeDead(t *testing.T) {
	runs := []DeadRun{
		deadRun(deadAlive, 1, 1, 3), deadRun(deadAlive, 9, 1, 3), deadRun(deadAlive, 2, 1.2, 4),
		deadRun(deadSilent, 4.5, 1.1, 6), deadRun(deadSilent, 4, 1.1, 6), deadRun(deadSilent, 30, 1.1, 6),
		deadRun(deadClosed, 2.5, 1, 3), deadRun(deadClosed, 2, 1, 3), deadRun(deadClosed, 2.2, 1, 3),
	}
	silent := judgeDead(runs, deadSilent, 3)
	// Medians: the alive plan's 9 s and the silent one's 30 s are outliers.
	if silent.Alive.PlanWall != 2 || silent.Dead.PlanWall != 4.5 || silent.Dead.Runs != 3 {
		t.Fatalf("medians: %+v", silent)
	}
	if silent.PlanAdded != 2.5 || silent.Verdict != "met" || math.Abs(silent.PlanWallRatio-2.25) > 1e-9 || silent.ApplyWallRatio != 2 || silent.ApplyAdded != 3 {
		t.Errorf("silent listener: %+v", silent)
	}
	if closed := judgeDead(runs, deadClosed, 3); closed.Verdict != "met" || math.Abs(closed.PlanAdded-0.2) > 1e-9 {
		t.Errorf("closed port: %+v", closed)
	}
	// More than the bound is not met, however small the ratio looks.
	if v := judgeDead(runs, deadSilent, 2); v.Verdict != "not met" {
		t.Errorf("bound 2 s, added 2.5 s: %+v", v)
	}
	if v := judgeDead(runs[:3], deadSilent, 3); v.Verdict != "no data" || v.PlanWallRatio != 0 {
		t.Errorf("no dead runs: %+v", v)
	}
}

func TestPlanChanges(t *testing.T) {
	for out, want := range map[string]int{
		"Plan: 0 to add, 9 to change, 0 to destroy.":                 9,
		"...\nPlan: 1 to add, 90 to change, 2 to destroy.\n":         93,
		"No changes. Your infrastructure matches the configuration.": 0,
	} {
		if got := planChanges(out); got != want {
			t.Errorf("planChanges(%q) = %d, want %d", out, got, want)
		}
	}
}

// TestWideMeshVariant: the zero variant is the wide mesh as it was; the
// dead cluster's entry points at the dead address and the suffix lands on
// every bundle endpoint URL.
func TestWideMeshVariant(t *testing.T) {
	p := provider{source: "registry.terraform.io/ztfabric/zerotrust", version: "0.0.1"}
	lab := &harness.Lab{Clusters: []*harness.Cluster{{Name: "m01", Kubeconfig: "/k/m01"}, {Name: "m02", Kubeconfig: "/k/m02"}}}
	wide := wideMeshConfig(p, lab)
	if strings.Contains(wide, "host") || !strings.Contains(wide, `m02 = { config_path = "/k/m02", config_context = "m02" }`) || !strings.Contains(wide, `:8443"`) {
		t.Errorf("wide mesh:\n%s", wide)
	}
	dead := wideMeshVariant(p, lab, meshVariant{Dead: "m02", DeadHost: "https://127.0.0.1:1", Suffix: "/v2"})
	for _, want := range []string{
		`m02 = { config_path = null, config_context = null, host = "https://127.0.0.1:1", token = "x", insecure = true }`,
		`m01 = { config_path = "/k/m01", config_context = "m01", host = null, token = null, insecure = null }`,
		`:8443/v2"`,
	} {
		if !strings.Contains(dead, want) {
			t.Errorf("want %q in:\n%s", want, dead)
		}
	}
}

// TestJudgeBlip: the restarted case is met only when every apply exited 0
// with no error, left nothing, and met the restart.
func TestJudgeBlip(t *testing.T) {
	ok := func(apply float64) DeadRun {
		r := deadRun(deadRestarted, 2, 1, apply)
		r.Down = 6
		return r
	}
	runs := []DeadRun{deadRun(deadAlive, 2, 1, 4), deadRun(deadAlive, 2, 1, 4), ok(9), ok(10)}
	v := judgeBlip(runs)
	if v.Verdict != "met" || v.ApplyWallRatio != 2.375 {
		t.Errorf("clean runs: %+v", v)
	}
	failed := ok(8)
	failed.ApplyExit, failed.ApplyErrors = 1, 3
	if v := judgeBlip(append(runs, failed)); v.Verdict != "not met" {
		t.Errorf("a run with errors: %+v", v)
	}
	missed := ok(4)
	missed.Down = 0
	if v := judgeBlip(append(runs, missed)); v.Verdict != "not met" {
		t.Errorf("a run the restart missed: %+v", v)
	}
	if v := judgeBlip(runs[:2]); v.Verdict != "no data" {
		t.Errorf("no restarted runs: %+v", v)
	}
}
