package main

// deadMedians are one case's medians over its rounds.
type deadMedians struct {
	PlanWall  float64 `json:"plan_wall_s"`
	PlanCPU   float64 `json:"plan_cpu_s"`
	ApplyWall float64 `json:"apply_wall_s"`
	ApplyCPU  float64 `json:"apply_cpu_s"`
	Runs      int     `json:"runs"`
}

// deadVerdict compares one dead case with the runs where every cluster
// was alive.
type deadVerdict struct {
	Alive          deadMedians `json:"alive"`
	Dead           deadMedians `json:"dead"`
	PlanWallRatio  float64     `json:"plan_wall_ratio"`
	PlanCPURatio   float64     `json:"plan_cpu_ratio"`
	ApplyWallRatio float64     `json:"apply_wall_ratio"`
	ApplyCPURatio  float64     `json:"apply_cpu_ratio"`
	// PlanAdded is the dead case's median plan wall time less the alive
	// one's: what the dead cluster cost the plan.
	PlanAdded float64 `json:"plan_wall_added_s"`
	// ApplyAdded is the same for the apply, which is not judged: it walks
	// the graph twice (plan and apply), and its changes on the dead cluster
	// fail instead of being made.
	ApplyAdded float64 `json:"apply_wall_added_s"`
	Bound      float64 `json:"bound_s"`
	// Verdict is "met" when PlanAdded is at most Bound, "not met" when it
	// is more, "no data" when either case has no run.
	Verdict string `json:"verdict"`
}

// judgeDead compares the runs of case c with those of deadAlive: a pure
// function, tested without a cluster (dead_verdict_test.go). Medians, so
// one run slowed by a neighbour's burst does not decide.
func judgeDead(runs []DeadRun, c string, bound float64) deadVerdict {
	v := deadVerdict{Alive: deadMediansOf(runs, deadAlive), Dead: deadMediansOf(runs, c), Bound: bound, Verdict: "no data"}
	if v.Alive.Runs == 0 || v.Dead.Runs == 0 {
		return v
	}
	v.PlanWallRatio = safeRatio(v.Dead.PlanWall, v.Alive.PlanWall)
	v.PlanCPURatio = safeRatio(v.Dead.PlanCPU, v.Alive.PlanCPU)
	v.ApplyWallRatio = safeRatio(v.Dead.ApplyWall, v.Alive.ApplyWall)
	v.ApplyCPURatio = safeRatio(v.Dead.ApplyCPU, v.Alive.ApplyCPU)
	v.PlanAdded = v.Dead.PlanWall - v.Alive.PlanWall
	v.ApplyAdded = v.Dead.ApplyWall - v.Alive.ApplyWall
	if v.PlanAdded <= bound {
		v.Verdict = "met"
	} else {
		v.Verdict = "not met"
	}
	return v
}

func deadMediansOf(runs []DeadRun, c string) deadMedians {
	var pw, pc, aw, ac []float64
	for _, r := range runs {
		if r.Case != c {
			continue
		}
		pw, pc = append(pw, r.Plan.Wall), append(pc, r.Plan.CPU)
		aw, ac = append(aw, r.Apply.Wall), append(ac, r.Apply.CPU)
	}
	return deadMedians{PlanWall: median(pw), PlanCPU: median(pc), ApplyWall: median(aw), ApplyCPU: median(ac), Runs: len(pw)}
}
