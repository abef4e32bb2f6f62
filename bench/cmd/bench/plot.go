package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"strings"
)

// Plot colours per target (named in REPORT.md, which carries the legend:
// the standard library has no font).
var plotColors = map[string]color.RGBA{
	targetZerotrust:  {0x1f, 0x77, 0xb4, 0xff}, // blue
	targetFloor:      {0x55, 0x55, 0x55, 0xff}, // grey
	targetKubernetes: {0xd6, 0x27, 0x28, 0xff}, // red
	targetKubectl:    {0x2c, 0xa0, 0x2c, 0xff}, // green
}

var colorNames = map[string]string{
	targetZerotrust: "blue", targetFloor: "grey", targetKubernetes: "red", targetKubectl: "green",
}

func plotLegend(r *Results) string {
	var parts []string
	for _, t := range r.Targets {
		parts = append(parts, fmt.Sprintf("%s = %s", t, colorNames[t]))
	}
	return strings.Join(parts, ", ") + "; y axis logarithmic (seconds, labelled at powers of ten), x axis N"
}

// 3x5 glyphs for tick labels.
var glyphs = map[rune][5]string{
	'0': {"111", "101", "101", "101", "111"},
	'1': {"010", "110", "010", "010", "111"},
	'2': {"111", "001", "111", "100", "111"},
	'3': {"111", "001", "111", "001", "111"},
	'4': {"101", "101", "111", "001", "001"},
	'5': {"111", "100", "111", "001", "111"},
	'6': {"111", "100", "111", "101", "111"},
	'7': {"111", "001", "010", "010", "010"},
	'8': {"111", "101", "111", "101", "111"},
	'9': {"111", "101", "111", "001", "111"},
	'.': {"000", "000", "000", "000", "010"},
	's': {"000", "011", "110", "011", "110"},
	'N': {"101", "111", "111", "111", "101"},
	'=': {"000", "111", "000", "111", "000"},
}

const glyphScale = 2

func drawText(img *image.RGBA, x, y int, s string, c color.Color) {
	for _, r := range s {
		g, ok := glyphs[r]
		if ok {
			for gy, row := range g {
				for gx, bit := range row {
					if bit == '1' {
						for dy := 0; dy < glyphScale; dy++ {
							for dx := 0; dx < glyphScale; dx++ {
								img.Set(x+gx*glyphScale+dx, y+gy*glyphScale+dy, c)
							}
						}
					}
				}
			}
		}
		x += 4 * glyphScale
	}
}

func textWidth(s string) int { return len(s) * 4 * glyphScale }

func writePlot(path string, r *Results) error {
	const w, h, left, right, top, bottom = 900, 540, 70, 30, 30, 50
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	white := color.RGBA{0xff, 0xff, 0xff, 0xff}
	grid := color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	black := color.RGBA{0, 0, 0, 0xff}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, white)
		}
	}
	maxN, minV, maxV := 0, math.Inf(1), math.Inf(-1)
	for _, s := range r.Scale {
		if s.Phase != "plan" || s.WallMedian <= 0 {
			continue
		}
		maxN = max(maxN, s.N)
		minV, maxV = math.Min(minV, s.WallMedian), math.Max(maxV, s.WallMedian)
	}
	if maxN == 0 {
		return fmt.Errorf("no plan samples to plot")
	}
	lo, hi := math.Floor(math.Log10(minV)), math.Ceil(math.Log10(maxV))
	if hi <= lo {
		hi = lo + 1
	}
	px := func(n int) int { return left + int(float64(n)/float64(maxN)*float64(w-left-right)) }
	py := func(v float64) int {
		return h - bottom - int((math.Log10(v)-lo)/(hi-lo)*float64(h-top-bottom))
	}
	for e := lo; e <= hi; e++ {
		y := py(math.Pow(10, e))
		hline(img, left, w-right, y, grid)
		label := trimFloat(math.Pow(10, e)) + "s"
		drawText(img, left-8-textWidth(label), y-5, label, black)
	}
	for _, n := range r.Ns {
		x := px(n)
		vline(img, x, top, h-bottom, grid)
		label := fmt.Sprint(n)
		drawText(img, x-textWidth(label)/2, h-bottom+10, label, black)
	}
	drawText(img, w-right-textWidth("N"), h-bottom+28, "N", black)
	hline(img, left, w-right, h-bottom, black)
	vline(img, left, top, h-bottom, black)

	for _, t := range r.Targets {
		c := plotColors[t]
		var prevX, prevY int
		first := true
		for _, n := range r.Ns {
			s := r.find(t, n, "plan")
			if s == nil || s.WallMedian <= 0 {
				continue
			}
			x, y := px(n), py(s.WallMedian)
			for dy := -3; dy <= 3; dy++ {
				for dx := -3; dx <= 3; dx++ {
					img.Set(x+dx, y+dy, c)
				}
			}
			if !first {
				line(img, prevX, prevY, x, y, c)
			}
			prevX, prevY, first = x, y, false
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func hline(img *image.RGBA, x0, x1, y int, c color.Color) {
	for x := x0; x <= x1; x++ {
		img.Set(x, y, c)
	}
}

func vline(img *image.RGBA, x, y0, y1 int, c color.Color) {
	for y := y0; y <= y1; y++ {
		img.Set(x, y, c)
	}
}

// line draws a 2-pixel-thick segment (Bresenham, doubled vertically).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := 1, 1
	if x0 > x1 {
		sx = -1
	}
	if y0 > y1 {
		sy = -1
	}
	e := dx + dy
	for {
		img.Set(x0, y0, c)
		img.Set(x0, y0+1, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
