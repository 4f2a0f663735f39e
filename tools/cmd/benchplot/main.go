// Command benchplot draws the benchmark plot (docs/bench.png) from a report
// package bench saved (docs/bench.json): each case's CPU/device ratio with
// its spread across runs, on a log scale, with the line of parity. Package
// bench's Report.Plot runs it.
//
//	benchplot <report.json> <plot.png>
package main

import (
	"fmt"
	"math"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/metalplug/metalplug/bench"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: benchplot <report.json> <plot.png>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintf(os.Stderr, "benchplot: %v\n", err)
		os.Exit(1)
	}
}

func run(report, out string) error {
	r, err := bench.ReadJSON(report)
	if err != nil {
		return err
	}
	return render(r.Cases, out)
}

// ratioPoints are the cases' ratios with their spread, one per row of the plot.
type ratioPoints struct{ cases []bench.Case }

func (p ratioPoints) Len() int { return len(p.cases) }
func (p ratioPoints) XY(i int) (float64, float64) {
	return p.cases[i].Ratio.Median, float64(len(p.cases) - 1 - i)
}
func (p ratioPoints) XError(i int) (float64, float64) {
	r := p.cases[i].Ratio
	return r.Median - r.Min, r.Max - r.Median
}

// render writes a PNG of each case's CPU/device ratio with its spread across
// runs, on a log scale, with the line of parity.
func render(cases []bench.Case, path string) error {
	if len(cases) == 0 {
		return fmt.Errorf("nothing to plot")
	}
	p := plot.New()
	p.Title.Text = "Host reference driver vs TensorFlow CPU (CPU time / device time)"
	p.X.Label.Text = "ratio (log scale; > 1: the host driver is faster)"
	p.X.Scale = plot.LogScale{}
	lo, hi := 1.0, 1.0
	for _, c := range cases {
		if c.Ratio.Min > 0 {
			lo = math.Min(lo, c.Ratio.Min)
		}
		hi = math.Max(hi, c.Ratio.Max)
	}
	p.X.Min, p.X.Max = lo/1.5, hi*1.5
	var xt []plot.Tick
	for e := -3; e <= 3; e++ {
		for _, m := range []float64{1, 2, 5} {
			if v := m * math.Pow(10, float64(e)); v >= p.X.Min && v <= p.X.Max {
				xt = append(xt, plot.Tick{Value: v, Label: fmt.Sprintf("%g", v)})
			}
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	pts := ratioPoints{cases}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	s.GlyphStyle.Shape = draw.CircleGlyph{}
	s.GlyphStyle.Radius = vg.Points(3)
	e, err := plotter.NewXErrorBars(pts)
	if err != nil {
		return err
	}
	parity, err := plotter.NewLine(plotter.XYs{{X: 1, Y: -0.5}, {X: 1, Y: float64(len(cases)) - 0.5}})
	if err != nil {
		return err
	}
	parity.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(plotter.NewGrid(), parity, e, s)
	var ticks []plot.Tick
	for i, c := range cases {
		ticks = append(ticks, plot.Tick{Value: float64(len(cases) - 1 - i), Label: c.ID})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = -0.7, float64(len(cases))-0.3
	return p.Save(8*vg.Inch, vg.Length(1.2+0.32*float64(len(cases)))*vg.Inch, path)
}
