package main

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWritePlots(t *testing.T) {
	r := &Results{
		Machine: Machine{Terraform: "Terraform v1.11.4"},
		Ns:      []int{100, 1000},
		Targets: []string{targetZerotrust, targetPluginFloor, targetFloor, targetKubernetes},
		Scale: []Summary{
			{Target: targetZerotrust, N: 100, Phase: "plan", WallMedian: 0.8},
			{Target: targetZerotrust, N: 1000, Phase: "plan", WallMedian: 6.1},
			// A second Terraform version of one target is a line of its own.
			{Target: targetZerotrust, N: 100, Phase: "plan", WallMedian: 0.7, Terraform: "1.16.0"},
			{Target: targetZerotrust, N: 1000, Phase: "plan", WallMedian: 5.2, Terraform: "1.16.0"},
			{Target: targetPluginFloor, N: 100, Phase: "plan", WallMedian: 0.6},
			{Target: targetPluginFloor, N: 1000, Phase: "plan", WallMedian: 5.5},
			{Target: targetFloor, N: 100, Phase: "plan", WallMedian: 0.3},
			{Target: targetFloor, N: 1000, Phase: "plan", WallMedian: 3.4},
			{Target: targetKubernetes, N: 100, Phase: "plan", WallMedian: 13},
			{Target: targetKubernetes, N: 1000, Phase: "plan", WallMedian: 190},
			// Not a plan: must not be drawn, and must not break the axes.
			{Target: targetZerotrust, N: 1000, Phase: "apply", WallMedian: 0.001},
		},
		ClusterScale: []ClusterScaleRow{
			{Clusters: 6, Terraform: "1.16.0", Resources: 36, ApplyWall: 31, AllBundlesHeld: 44, RequestsPerClusterTotal: 52},
			{Clusters: 3, Terraform: "1.16.0", Resources: 9, ApplyWall: 14, AllBundlesHeld: 21, RequestsPerClusterTotal: 23},
			{Clusters: 10, Terraform: "1.16.0", Error: "apply timed out"},
		},
	}
	dir := t.TempDir()
	names, err := writePlots(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{plotScaling, plotClusters, plotClustersRequests}
	if !slices.Equal(names, want) {
		t.Fatalf("wrote %v, want %v", names, want)
	}
	for _, name := range names {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		_ = f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != plotWidth || b.Dy() != plotHeight {
			t.Errorf("%s is %dx%d, want %dx%d", name, b.Dx(), b.Dy(), plotWidth, plotHeight)
		}
		// A blank image decodes fine too: ask for ink on a fair share of it.
		inked := 0
		for y := 0; y < plotHeight; y += 2 {
			for x := 0; x < plotWidth; x += 2 {
				if r, g, b, _ := img.At(x, y).RGBA(); r&g&b < 0xf000 {
					inked++
				}
			}
		}
		if inked < 1000 {
			t.Errorf("%s: only %d sampled pixels are not white", name, inked)
		}
	}
}

func TestWritePlotsWithoutData(t *testing.T) {
	dir := t.TempDir()
	names, err := writePlots(dir, &Results{})
	if err != nil || len(names) != 0 {
		t.Fatalf("writePlots(empty) = %v, %v; want no files and no error", names, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("files written for empty results: %v", entries)
	}
}

func TestLog10TicksLabels(t *testing.T) {
	var labels []string
	for _, tk := range (log10Ticks{}).Ticks(math.Log10(0.3), math.Log10(25)) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	want := []string{"0.5", "1", "2", "5", "10", "20"}
	if !slices.Equal(labels, want) {
		t.Errorf("labels %v, want %v", labels, want)
	}
}

func TestLinearTicksLabels(t *testing.T) {
	var labels []string
	for _, tk := range (linearTicks{}).Ticks(0, 172) {
		labels = append(labels, tk.Label)
	}
	want := []string{"0", "50", "100", "150"}
	if !slices.Equal(labels, want) {
		t.Errorf("labels %v, want %v", labels, want)
	}
}
