package main

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Every figure has the same pixel size so they sit side by side in REPORT.md
// at one scale.
const (
	plotWidth  = 900
	plotHeight = 550
)

// Plot file names, relative to the output directory.
const (
	plotScaling          = "scaling.png"
	plotClusters         = "clusters.png"
	plotClustersRequests = "clusters_requests.png"
)

// writePlots renders every figure the results have data for into dir and
// returns the names of the files it wrote. A figure without data is skipped,
// not an error; a failing figure does not stop the others.
func writePlots(dir string, r *Results) ([]string, error) {
	figures := []struct {
		name  string
		build func(*Results) (*figure, error)
	}{
		{plotScaling, scalingFigure},
		{plotClusters, clustersTimeFigure},
		{plotClustersRequests, clustersRequestsFigure},
	}
	var written []string
	var errs []error
	for _, f := range figures {
		fig, err := f.build(r)
		if err == nil && fig == nil {
			continue
		}
		if err == nil {
			err = fig.save(filepath.Join(dir, f.name))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.name, err))
			continue
		}
		written = append(written, f.name)
	}
	return written, errors.Join(errs...)
}

// figure is one plot with its legend. The title spans the whole image and
// the legend sits in columns under the plot, so neither squeezes the data
// area nor hides a line.
type figure struct {
	plot   *plot.Plot
	legend []legendEntry
}

type legendEntry struct {
	label  string
	thumbs []plot.Thumbnailer
}

// series is one line with markers at the measured points.
type series struct {
	label string
	xys   plotter.XYs
	style seriesStyle
}

type seriesStyle struct {
	color   color.Color
	dashes  []vg.Length
	widthPt float64          // line width in points; 0 is lineWidthPt
	glyph   draw.GlyphDrawer // nil: a line without markers
}

var (
	blue   = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	orange = color.RGBA{0xff, 0x7f, 0x0e, 0xff}
	green  = color.RGBA{0x2c, 0xa0, 0x2c, 0xff}
	red    = color.RGBA{0xd6, 0x27, 0x28, 0xff}
	purple = color.RGBA{0x94, 0x67, 0xbd, 0xff}
	brown  = color.RGBA{0x8c, 0x56, 0x4b, 0xff}
	grey   = color.RGBA{0x88, 0x88, 0x88, 0xff}
	dark   = color.RGBA{0x33, 0x33, 0x33, 0xff}
	light  = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
)

const lineWidthPt = 1.6

// Both floors are grey and dashed so they read as baselines next to the
// coloured providers under test.
var targetStyles = map[string]seriesStyle{
	targetZerotrust:   {color: blue, glyph: draw.CircleGlyph{}},
	targetKubernetes:  {color: red, glyph: draw.TriangleGlyph{}},
	targetKubectl:     {color: green, glyph: draw.SquareGlyph{}},
	targetFloor:       {color: grey, dashes: []vg.Length{vg.Points(7), vg.Points(4)}, glyph: draw.RingGlyph{}},
	targetPluginFloor: {color: dark, dashes: []vg.Length{vg.Points(2), vg.Points(3)}, glyph: draw.CrossGlyph{}},
}

// Targets this file has no style for (added later) still get told apart.
var spareStyles = []seriesStyle{
	{color: purple, glyph: draw.PyramidGlyph{}},
	{color: brown, glyph: draw.BoxGlyph{}},
	{color: orange, glyph: draw.PlusGlyph{}},
}

// A second Terraform version of one target keeps the target's colour and
// changes the marker and dash, so the pair still reads as one target.
var versionGlyphs = []draw.GlyphDrawer{draw.PlusGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}

var targetLabels = map[string]string{
	targetFloor:       "terraform_data (floor, no plugin)",
	targetPluginFloor: "plugin_floor (floor, no-op plugin)",
}

func isFloor(target string) bool { return target == targetFloor || target == targetPluginFloor }

// scalingFigure is the plan (with refresh) wall time against N: one line
// per target and Terraform version.
func scalingFigure(r *Results) (*figure, error) {
	type key struct{ target, version string }
	points := map[key]plotter.XYs{}
	var keys []key
	var ns []int
	for _, s := range r.Scale {
		if s.Phase != "plan" || s.WallMedian <= 0 || s.N <= 0 {
			continue
		}
		k := key{s.Target, terraformVersion(s.Terraform, r.Machine.Terraform)}
		if _, ok := points[k]; !ok {
			keys = append(keys, k)
		}
		points[k] = append(points[k], plotter.XY{X: math.Log10(float64(s.N)), Y: math.Log10(s.WallMedian)})
		if !slices.Contains(ns, s.N) {
			ns = append(ns, s.N)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	slices.Sort(ns)

	var versions []string
	for _, k := range keys {
		if !slices.Contains(versions, k.version) {
			versions = append(versions, k.version)
		}
	}
	slices.Sort(versions)
	// Providers under test first in the order the run names them, floors
	// last, so the legend reads top-down from subject to baseline.
	order := func(target string) int {
		i := slices.Index(r.Targets, target)
		if i < 0 {
			i = len(r.Targets)
		}
		if isFloor(target) {
			i += 1000
		}
		return i
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		if d := order(a.target) - order(b.target); d != 0 {
			return d
		}
		return strings.Compare(a.version, b.version)
	})

	spare := 0
	styles := map[string]seriesStyle{}
	var lines []series
	for _, k := range keys {
		base, ok := styles[k.target]
		if !ok {
			base, ok = targetStyles[k.target]
			if !ok {
				base = spareStyles[spare%len(spareStyles)]
				spare++
			}
			styles[k.target] = base
		}
		style := base
		vi := slices.Index(versions, k.version)
		if vi > 0 {
			style.glyph = versionGlyphs[(vi-1)%len(versionGlyphs)]
			style.dashes = []vg.Length{vg.Points(10), vg.Points(3), vg.Points(2), vg.Points(3)}
		}
		label := k.target
		if l, ok := targetLabels[k.target]; ok {
			label = l
		}
		if len(versions) > 1 {
			label += ", Terraform " + orUnknown(k.version)
		}
		xys := points[k]
		slices.SortFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		lines = append(lines, series{label: label, xys: xys, style: style})
	}

	title := "Plan with refresh: wall time vs number of objects"
	if v := joinVersions(versions); v != "" {
		title += " (" + v + ")"
	}
	f := newFigure(title, "N, objects in the configuration (log scale)", "median wall time, seconds (log scale)")
	p := f.plot
	// Both axes are logarithmic, but drawn as log10 values on linear axes:
	// gonum v0.17 places the axis title's box at the arithmetic middle of a
	// plot.LogScale range, near the top, and shrinks the plot to make room.
	p.Y.Tick.Marker = log10Ticks{}
	var ticks plot.ConstantTicks
	for _, n := range ns {
		ticks = append(ticks, plot.Tick{Value: math.Log10(float64(n)), Label: strconv.Itoa(n)})
	}
	p.X.Tick.Marker = ticks
	if err := f.add(lines); err != nil {
		return nil, err
	}
	// Pad the ranges so markers at the ends are not cut in half by the frame.
	p.X.Min, p.X.Max = p.X.Min-0.1, p.X.Max+0.1
	p.Y.Min, p.Y.Max = p.Y.Min-0.15, p.Y.Max+0.15
	return f, nil
}

// clustersTimeFigure is the full-mesh bootstrap's wall time and time until
// every SPIRE server holds every peer bundle, against the number of clusters.
func clustersTimeFigure(r *Results) (*figure, error) {
	rows, failed := clusterRows(r)
	if len(rows) == 0 {
		return nil, nil
	}
	var apply, held, proportional plotter.XYs
	first := rows[0]
	for _, c := range rows {
		x := float64(c.Clusters)
		if c.ApplyWall > 0 {
			apply = append(apply, plotter.XY{X: x, Y: c.ApplyWall})
		}
		if c.AllBundlesHeld > 0 {
			held = append(held, plotter.XY{X: x, Y: c.AllBundlesHeld})
		}
		// The goal is cost that grows with the number of objects: this line
		// is the smallest mesh's apply scaled by resources, so a curve above
		// it shows a per-cluster or serial cost on top.
		if first.ApplyWall > 0 && first.Resources > 0 && c.Resources > 0 {
			proportional = append(proportional, plotter.XY{X: x, Y: first.ApplyWall * float64(c.Resources) / float64(first.Resources)})
		}
	}
	f := newFigure(clusterTitle("Full-mesh bootstrap in one apply: time vs clusters", rows, failed, r),
		"clusters in the full mesh (all in one terraform apply)", "seconds from the start of the apply")
	clusterAxis(f.plot, rows)
	lines := []series{
		{label: "apply wall time", xys: apply, style: seriesStyle{color: blue, glyph: draw.CircleGlyph{}}},
		{label: "every SPIRE server holds every peer bundle", xys: held, style: seriesStyle{color: orange, glyph: draw.TriangleGlyph{}}},
		{label: fmt.Sprintf("apply time proportional to resources (from %d clusters)", first.Clusters), xys: proportional,
			style: seriesStyle{color: grey, dashes: []vg.Length{vg.Points(2), vg.Points(3)}, widthPt: 1}},
	}
	if err := f.add(lines); err != nil {
		return nil, err
	}
	f.plot.Y.Min, f.plot.Y.Max = 0, f.plot.Y.Max*1.1
	return f, nil
}

// clustersRequestsFigure is the work behind clustersTimeFigure: API requests
// the provider sends to each cluster and the resources the apply creates.
func clustersRequestsFigure(r *Results) (*figure, error) {
	rows, failed := clusterRows(r)
	if len(rows) == 0 {
		return nil, nil
	}
	var requests, resources plotter.XYs
	for _, c := range rows {
		x := float64(c.Clusters)
		if c.RequestsPerClusterTotal > 0 {
			requests = append(requests, plotter.XY{X: x, Y: c.RequestsPerClusterTotal})
		}
		if c.Resources > 0 {
			resources = append(resources, plotter.XY{X: x, Y: float64(c.Resources)})
		}
	}
	f := newFigure(clusterTitle("Full-mesh bootstrap in one apply: work vs clusters", rows, failed, r),
		"clusters in the full mesh (all in one terraform apply)", "count (requests, resources)")
	clusterAxis(f.plot, rows)
	lines := []series{
		{label: "API requests per cluster (provider, audit log)", xys: requests, style: seriesStyle{color: blue, glyph: draw.CircleGlyph{}}},
		{label: "resources in the apply (N(N-1) trust domains + N federations)", xys: resources, style: seriesStyle{color: purple, glyph: draw.SquareGlyph{}}},
	}
	if err := f.add(lines); err != nil {
		return nil, err
	}
	f.plot.Y.Min, f.plot.Y.Max = 0, f.plot.Y.Max*1.1
	return f, nil
}

// clusterRows returns the rows that completed, by cluster count, and the
// cluster counts of the rows that failed (their times mean nothing).
func clusterRows(r *Results) (rows []ClusterScaleRow, failed []int) {
	for _, c := range r.ClusterScale {
		if c.Error != "" {
			failed = append(failed, c.Clusters)
			continue
		}
		rows = append(rows, c)
	}
	slices.SortFunc(rows, func(a, b ClusterScaleRow) int { return a.Clusters - b.Clusters })
	return rows, failed
}

func clusterTitle(title string, rows []ClusterScaleRow, failed []int, r *Results) string {
	var versions []string
	for _, c := range rows {
		v := terraformVersion(c.Terraform, r.Machine.Terraform)
		if !slices.Contains(versions, v) {
			versions = append(versions, v)
		}
	}
	slices.Sort(versions)
	if v := joinVersions(versions); v != "" {
		title += " (" + v + ")"
	}
	if len(failed) > 0 {
		// A second line: the title is already about as wide as the image.
		title += "\nnot shown, the apply failed: " + joinInts(failed) + " clusters"
	}
	return title
}

// clusterAxis puts a tick at each measured cluster count only: the counts
// are few and uneven (3, 6, 10), and ticks in between would name meshes
// that were never run.
func clusterAxis(p *plot.Plot, rows []ClusterScaleRow) {
	var ticks plot.ConstantTicks
	for _, c := range rows {
		ticks = append(ticks, plot.Tick{Value: float64(c.Clusters), Label: strconv.Itoa(c.Clusters)})
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = float64(rows[0].Clusters)-1, float64(rows[len(rows)-1].Clusters)+1
	p.Y.Tick.Marker = linearTicks{}
}

// terraformVersion returns "1.16.0" from a row's version, or from the
// machine's "Terraform v1.16.0" line when the row has none (older results).
func terraformVersion(row, machine string) string {
	v := row
	if v == "" {
		v = machine
	}
	v = strings.TrimSpace(v)
	v = strings.TrimPrefix(v, "Terraform ")
	return strings.TrimPrefix(v, "v")
}

func joinVersions(versions []string) string {
	var known []string
	for _, v := range versions {
		if v != "" {
			known = append(known, v)
		}
	}
	if len(known) == 0 {
		return ""
	}
	return "Terraform " + strings.Join(known, ", ")
}

func orUnknown(v string) string {
	if v == "" {
		return "version unknown"
	}
	return v
}
