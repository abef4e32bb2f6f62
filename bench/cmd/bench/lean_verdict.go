package main

import (
	"fmt"
	"math"
)

// leanSample is one timed `terraform plan` of the lean pair.
type leanSample struct {
	Wall         float64        `json:"wall_s"`
	CPU          float64        `json:"cpu_s"`           // terraform and every child it waited for (rusage)
	CPUProvider  float64        `json:"cpu_provider_s"`  // provider processes, sampled from /proc
	CPUTerraform float64        `json:"cpu_terraform_s"` // CPU minus CPUProvider
	LoadBefore   float64        `json:"load1_before"`    // 1-minute load average as the plan started
	LoadMax      float64        `json:"load1_max"`       // its largest value while the plan ran
	API          map[string]int `json:"api_requests,omitempty"`
	ProviderRSS  int64          `json:"provider_peak_rss_bytes,omitempty"`
}

// leanRound is one interleaved round: each target planned once.
type leanRound struct {
	Round int        `json:"round"`
	ZT    leanSample `json:"zerotrust"`
	TF    leanSample `json:"terraform_data"`
}

// load is the highest load average either plan of the round saw.
func (r leanRound) load() float64 { return math.Max(r.ZT.LoadMax, r.TF.LoadMax) }

// leanPolicy holds the rules the verdict applies.
type leanPolicy struct {
	MaxLoadPerCore float64 // above this a round's wall times say more about the machine than the provider
	Target         float64 // zerotrust may take at most this many times terraform_data
	MaxSpread      float64 // the judged ratio has settled when (max-min)/median over the window is below this
	Window         int     // the last this many rounds are judged
	MinRounds      int     // fewer rounds never settle
}

var defaultLeanPolicy = leanPolicy{MaxLoadPerCore: 1.5, Target: 1.2, MaxSpread: 0.10, Window: 5, MinRounds: 3}

// leanVerdict is what the rounds so far say.
type leanVerdict struct {
	Rounds int `json:"rounds"`
	Quiet  int `json:"quiet_rounds"` // rounds whose load stayed at or under the policy's bound
	// Judged is "wall" when enough rounds were quiet to judge wall time,
	// else "cpu": the verdict then rests on CPU time alone.
	Judged string `json:"judged"`
	// Window are the rounds (1-based) the medians and the spread come from.
	Window                     []int   `json:"window"`
	ZTWall, TFWall             float64 // medians over the window
	ZTCPU, TFCPU               float64
	ZTProvider, ZTTerraformCPU float64
	WallRatio                  float64 `json:"wall_ratio"` // ZTWall / TFWall
	CPURatio                   float64 `json:"cpu_ratio"`  // ZTCPU / TFCPU
	Spread                     float64 `json:"spread"`     // of the judged per-round ratio over the window
	Settled                    bool    `json:"settled"`
	MaxLoadPerCore             float64 `json:"max_load_per_core"`
	// WallVerdict is PASS or FAIL, or empty when Refused says why no wall
	// verdict is given. CPUVerdict is always given.
	WallVerdict string `json:"wall_verdict,omitempty"`
	Refused     string `json:"wall_refused,omitempty"`
	CPUVerdict  string `json:"cpu_verdict"`
}

// judgeLean judges the rounds so far on a machine with cores CPUs: a pure
// function, so that the rule that keeps load from passing for the
// provider's cost is tested without a cluster (lean_verdict_test.go).
//
// Wall time is judged only on rounds whose load average stayed at or under
// p.MaxLoadPerCore per core, and only when at least p.MinRounds of them
// exist; otherwise the wall verdict is refused and the CPU-time ratio,
// which load distorts far less, is what settles and what is reported.
func judgeLean(rounds []leanRound, cores int, p leanPolicy) leanVerdict {
	v := leanVerdict{Rounds: len(rounds), Judged: "cpu"}
	if cores < 1 {
		cores = 1
	}
	var quiet []leanRound
	for _, r := range rounds {
		perCore := r.load() / float64(cores)
		v.MaxLoadPerCore = math.Max(v.MaxLoadPerCore, perCore)
		if perCore <= p.MaxLoadPerCore {
			quiet = append(quiet, r)
		}
	}
	v.Quiet = len(quiet)
	judged := rounds
	if len(quiet) >= p.MinRounds {
		v.Judged, judged = "wall", quiet
	}
	if len(judged) > p.Window {
		judged = judged[len(judged)-p.Window:]
	}
	if len(judged) == 0 {
		v.Refused = "no round measured"
		return v
	}
	var ztWall, tfWall, ztCPU, tfCPU, ztProv, ztTF, ratios []float64
	for _, r := range judged {
		v.Window = append(v.Window, r.Round)
		ztWall, tfWall = append(ztWall, r.ZT.Wall), append(tfWall, r.TF.Wall)
		ztCPU, tfCPU = append(ztCPU, r.ZT.CPU), append(tfCPU, r.TF.CPU)
		ztProv, ztTF = append(ztProv, r.ZT.CPUProvider), append(ztTF, r.ZT.CPUTerraform)
		if v.Judged == "wall" {
			ratios = append(ratios, safeRatio(r.ZT.Wall, r.TF.Wall))
		} else {
			ratios = append(ratios, safeRatio(r.ZT.CPU, r.TF.CPU))
		}
	}
	v.ZTWall, v.TFWall, v.ZTCPU, v.TFCPU = median(ztWall), median(tfWall), median(ztCPU), median(tfCPU)
	v.ZTProvider, v.ZTTerraformCPU = median(ztProv), median(ztTF)
	v.WallRatio, v.CPURatio = safeRatio(v.ZTWall, v.TFWall), safeRatio(v.ZTCPU, v.TFCPU)
	v.Spread = spread(ratios)
	v.Settled = len(judged) >= p.MinRounds && v.Spread < p.MaxSpread
	v.CPUVerdict = passFail(v.CPURatio, p.Target)
	if v.Judged == "wall" {
		v.WallVerdict = passFail(v.WallRatio, p.Target)
	} else {
		v.Refused = fmt.Sprintf("the load average went above %.1f per core in %d of %d rounds (highest %.2f per core on %d cores): "+
			"no wall-time verdict, the CPU-time ratio is judged instead", p.MaxLoadPerCore, len(rounds)-len(quiet), len(rounds), v.MaxLoadPerCore, cores)
	}
	return v
}

func passFail(ratio, target float64) string {
	if ratio > 0 && ratio <= target {
		return "PASS"
	}
	return "FAIL"
}

func safeRatio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// spread is (max-min)/median; 1 (unsettled) for fewer than two values.
func spread(xs []float64) float64 {
	if len(xs) < 2 {
		return 1
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	m := median(xs)
	if m <= 0 {
		return 1
	}
	return (hi - lo) / m
}
