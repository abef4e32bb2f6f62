package main

import (
	"fmt"
	"image/png"
	"math"
	"os"
	"slices"
	"strconv"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The figure a plot is drawn on: fonts, lines, legend, axes' ticks and the
// PNG file (the figures' content is in plot.go).

var (
	sans      = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold  = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
	titleSize = vg.Points(13)
	labelSize = vg.Points(11)
	tickSize  = vg.Points(10)
)

func newFigure(title, xLabel, yLabel string) *figure {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sansBold, titleSize)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, labelSize)
		a.Label.Padding = vg.Points(4)
		a.Tick.Label.Font = font.From(sans, tickSize)
		a.Padding = 0
	}
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = light, light
	p.Add(grid)
	return &figure{plot: p}
}

// add draws each non-empty series as a line with markers and names it in the
// legend.
func (f *figure) add(lines []series) error {
	for _, s := range lines {
		if len(s.xys) == 0 {
			continue
		}
		width := s.style.widthPt
		if width == 0 {
			width = lineWidthPt
		}
		l, err := plotter.NewLine(s.xys)
		if err != nil {
			return fmt.Errorf("%s: %w", s.label, err)
		}
		l.Color, l.Width, l.Dashes = s.style.color, vg.Points(width), s.style.dashes
		f.plot.Add(l)
		thumbs := []plot.Thumbnailer{l}
		if s.style.glyph != nil {
			sc, err := plotter.NewScatter(s.xys)
			if err != nil {
				return fmt.Errorf("%s: %w", s.label, err)
			}
			sc.Color, sc.Radius, sc.Shape = s.style.color, vg.Points(3.5), s.style.glyph
			f.plot.Add(sc)
			thumbs = append(thumbs, sc)
		}
		f.legend = append(f.legend, legendEntry{s.label, thumbs})
	}
	return nil
}

func (f *figure) save(path string) error {
	// Sizes in points at a fixed DPI give exactly plotWidth x plotHeight
	// pixels (vgimg rounds to the nearest pixel).
	const dpi = 96
	canvas := vgimg.NewWith(vgimg.UseWH(vg.Inch*plotWidth/dpi, vg.Inch*plotHeight/dpi), vgimg.UseDPI(dpi))
	dc := draw.New(canvas)

	pad := vg.Points(8)
	title := f.plot.Title
	f.plot.Title.Text = ""
	title.TextStyle.YAlign = draw.YTop
	dc.FillText(title.TextStyle, vg.Point{X: dc.Center().X, Y: dc.Max.Y - pad}, title.Text)
	titleHeight := title.TextStyle.Height(title.Text) + pad + title.Padding

	legendHeight := f.drawLegend(dc, pad)
	f.plot.Draw(draw.Crop(dc, pad, -2*pad, legendHeight+pad, -titleHeight))
	f.plot.Title.Text = title.Text

	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(out, canvas.Image()); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// drawLegend draws the legend along the bottom of dc, in two columns when it
// has more than three entries, and returns the height it took.
func (f *figure) drawLegend(dc draw.Canvas, pad vg.Length) vg.Length {
	if len(f.legend) == 0 {
		return 0
	}
	columns := 1
	if len(f.legend) > 3 {
		columns = 2
	}
	rows := (len(f.legend) + columns - 1) / columns
	// Indent to about where the data area starts, right of the y axis.
	indent := vg.Points(50)
	width := (dc.Max.X - dc.Min.X - indent - pad) / vg.Length(columns)
	var legends []plot.Legend
	var height vg.Length
	for c := range columns {
		l := plot.NewLegend()
		l.TextStyle.Font = font.From(sans, tickSize)
		l.ThumbnailWidth = vg.Points(28)
		l.Padding = vg.Points(3)
		l.Left, l.Top = true, true
		for _, e := range f.legend[c*rows : min(len(f.legend), (c+1)*rows)] {
			l.Add(e.label, e.thumbs...)
		}
		height = max(height, l.Rectangle(dc).Size().Y)
		legends = append(legends, l)
	}
	for c, l := range legends {
		left := dc.Min.X + indent + vg.Length(c)*width
		l.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: left, Y: dc.Min.Y + pad},
			Max: vg.Point{X: left + width, Y: dc.Min.Y + pad + height},
		}})
	}
	return height + pad
}

// linearTicks labels a linear axis at about five round steps (1, 2 or 5
// times a power of ten).
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi <= lo {
		return nil
	}
	e := math.Floor(math.Log10((hi - lo) / 5))
	step := math.Pow(10, e)
	for _, m := range []float64{2, 5, 10} {
		if (hi-lo)/step <= 7 {
			break
		}
		step = m * math.Pow(10, e)
	}
	decimals := max(0, -int(math.Floor(math.Log10(step))))
	var ticks []plot.Tick
	for i := math.Ceil(lo / step); i*step <= hi; i++ {
		v := i * step
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
	}
	return ticks
}

// log10Ticks marks an axis that holds log10 of the values: labelled at 1,
// 2 and 5 times each power of ten (only at powers of ten when the range
// spans many decades), written as plain decimals ("0.2", "5", "20") rather
// than "2e-01", with unlabelled minor ticks in between.
type log10Ticks struct{}

func (log10Ticks) Ticks(lo, hi float64) []plot.Tick {
	if hi <= lo {
		return nil
	}
	first, last := int(math.Floor(lo)), int(math.Ceil(hi))
	labelled := []int{1, 2, 5}
	if last-first > 4 {
		labelled = []int{1}
	}
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(e)
			if math.Log10(v) < lo || math.Log10(v) > hi {
				continue
			}
			t := plot.Tick{Value: math.Log10(v)}
			if slices.Contains(labelled, m) {
				t.Label = strconv.FormatFloat(v, 'f', max(0, -e), 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
