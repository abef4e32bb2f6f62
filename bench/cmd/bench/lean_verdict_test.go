package main

import (
	"strings"
	"testing"
)

// pair is a round whose plans took ztWall/tfWall seconds, ztCPU/tfCPU CPU
// seconds, under load (the 1-minute load average, both plans).
func pair(round int, ztWall, tfWall, ztCPU, tfCPU, load float64) leanRound {
	return leanRound{Round: round,
		ZT: leanSample{Wall: ztWall, CPU: ztCPU, LoadMax: load},
		TF: leanSample{Wall: tfWall, CPU: tfCPU, LoadMax: load}}
}

func TestJudgeLeanQuietRoundsGetAWallVerdict(t *testing.T) {
	rounds := []leanRound{
		pair(1, 2.9, 2.5, 4.0, 3.5, 2.0),
		pair(2, 2.8, 2.45, 4.1, 3.6, 2.2),
		pair(3, 2.85, 2.5, 4.0, 3.5, 1.9),
	}
	v := judgeLean(rounds, 2, defaultLeanPolicy)
	if v.Judged != "wall" || v.WallVerdict != "PASS" || v.Refused != "" {
		t.Fatalf("judged %q, wall verdict %q (refused %q); want wall, PASS", v.Judged, v.WallVerdict, v.Refused)
	}
	if !v.Settled || v.Spread >= 0.10 {
		t.Errorf("settled %v with spread %.3f; want settled under 10%%", v.Settled, v.Spread)
	}
	if v.WallRatio < 1.13 || v.WallRatio > 1.15 {
		t.Errorf("wall ratio %.3f; want 2.85/2.5 = 1.14", v.WallRatio)
	}
	if v.CPUVerdict != "PASS" {
		t.Errorf("CPU verdict %q; want PASS at %.2f", v.CPUVerdict, v.CPURatio)
	}
}

// The case of the report the lean pair replaced: a loaded machine slowed
// the floor more than the provider and the ratio came out as a pass. Above
// 1.5 per core the wall verdict is refused and the CPU ratio decides.
func TestJudgeLeanRefusesWallTimeUnderLoad(t *testing.T) {
	rounds := []leanRound{
		pair(1, 6.0, 7.8, 8.0, 5.5, 21),
		pair(2, 6.2, 7.7, 8.1, 5.4, 18),
		pair(3, 6.1, 7.9, 8.0, 5.5, 12),
		pair(4, 2.9, 2.4, 8.0, 5.5, 2.5),
	}
	v := judgeLean(rounds, 2, defaultLeanPolicy)
	if v.WallVerdict != "" || v.Judged != "cpu" {
		t.Fatalf("wall verdict %q judged %q under load; want none, cpu", v.WallVerdict, v.Judged)
	}
	if !strings.Contains(v.Refused, "3 of 4 rounds") || !strings.Contains(v.Refused, "10.50 per core") {
		t.Errorf("refusal %q does not say how many rounds and how high", v.Refused)
	}
	if v.CPUVerdict != "FAIL" || v.Quiet != 1 {
		t.Errorf("CPU verdict %q (ratio %.2f), quiet %d; want FAIL, 1", v.CPUVerdict, v.CPURatio, v.Quiet)
	}
}

func TestJudgeLeanSettlesOnTheLastRoundsOnly(t *testing.T) {
	p := defaultLeanPolicy
	// A noisy start, then five rounds within 10%.
	rounds := []leanRound{pair(1, 5, 2.5, 6, 3, 1), pair(2, 3, 2.5, 4, 3, 1)}
	if v := judgeLean(rounds, 2, p); v.Settled {
		t.Fatalf("settled after %d rounds; want at least %d", len(rounds), p.MinRounds)
	}
	for i := 3; i <= 7; i++ {
		rounds = append(rounds, pair(i, 3.0+0.02*float64(i%2), 2.5, 4, 3, 1))
	}
	v := judgeLean(rounds, 2, p)
	if !v.Settled || len(v.Window) != p.Window || v.Window[0] != 3 {
		t.Fatalf("settled %v over rounds %v (spread %.3f); want the last %d rounds, settled", v.Settled, v.Window, v.Spread, p.Window)
	}
	if v.WallVerdict != "FAIL" {
		t.Errorf("wall verdict %q at ratio %.2f; want FAIL above %.1f", v.WallVerdict, v.WallRatio, p.Target)
	}
}

func TestJudgeLeanWithoutRounds(t *testing.T) {
	v := judgeLean(nil, 2, defaultLeanPolicy)
	if v.Settled || v.WallVerdict != "" || v.Refused == "" {
		t.Fatalf("verdict %+v from no rounds; want none, refused", v)
	}
}
