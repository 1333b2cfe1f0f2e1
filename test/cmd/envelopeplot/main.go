package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// series is one curve: a CSV column, its legend and colour.
type series struct {
	column, legend string
	color          color.RGBA
}

// Okabe-Ito colours, readable by the colour-blind: blue is always ours,
// vermillion the controller's, the rest the API server's and the floor.
var (
	blue       = color.RGBA{0, 114, 178, 255}
	vermillion = color.RGBA{213, 94, 0, 255}
	green      = color.RGBA{0, 158, 115, 255}
	orange     = color.RGBA{230, 159, 0, 255}
	purple     = color.RGBA{204, 121, 167, 255}
	sky        = color.RGBA{86, 180, 233, 255}
	grey       = color.RGBA{120, 120, 120, 255}
)

// figures are the PNGs drawn, one per measure.
var figures = []struct {
	file, title, unit string
	series            []series
}{
	{"envelope-convergence.png", "Cold convergence: every Service's slices written from none", "seconds", []series{
		{"cold_sync_s", "ours: sync --all -A", blue},
		{"watch_written_s", "ours: sync --watch, started cold", sky},
		{"kcm_cold_s", "kube-controller-manager, started cold", vermillion},
	}},
	{"envelope-memory.png", "Resident memory", "MiB", []series{
		{"ours_rss_after_mib", "ours: sync --watch after the flips", blue},
		{"cold_sync_max_rss_mib", "ours: sync --all -A, its peak", sky},
		{"kcm_rss_after_mib", "kube-controller-manager after the flips", vermillion},
		{"apiserver_peak_mib", "kube-apiserver, its peak", purple},
		{"etcd_peak_mib", "etcd, its peak", green},
	}},
	{"envelope-flips.png", "A readiness flip, from the status write to the slice (p99; of {flips} flips, the slowest)", "milliseconds", []series{
		{"ours_flip_p99_ms", "ours", blue},
		{"kcm_flip_p99_ms", "kube-controller-manager", vermillion},
		{"floor_p99_ms", "the status write alone (the floor)", grey},
	}},
	{"envelope-commands.png", "One-shot commands on the synced cluster", "seconds", []series{
		{"resync_s", "sync --all -A, no-op", blue},
		{"check_s", "check -A", sky},
		{"explain_pod_s", "explain pod/…", green},
		{"explain_ip_held_s", "explain --ip -A, held", orange},
		{"explain_ip_unheld_s", "explain --ip -A, unheld", purple},
		{"pod_list_s", "every Pod listed alone (a floor)", grey},
	}},
}

func main() {
	in := flag.String("in", "envelope.csv", "the benchmark's CSV")
	out := flag.String("out", ".", "directory for the PNGs")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintf(os.Stderr, "envelopeplot: %v\n", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	table, err := readCSV(in)
	if err != nil {
		return err
	}
	pods := table["pods"]
	if len(pods) < 2 {
		fmt.Printf("%s: %d step: no curve to draw\n", in, len(pods))
		return nil
	}
	flips, ok := table["flips"]
	if !ok {
		return fmt.Errorf("%s: no column %q", in, "flips")
	}
	for _, f := range figures {
		p := plot.New()
		p.Title.Text = strings.ReplaceAll(f.title, "{flips}", counts(flips))
		p.X.Label.Text = "Pods (log)"
		p.Y.Label.Text = f.unit + " (log)"
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker = valueTicks(pods)
		p.Y.Tick.Marker = niceLogTicks{}
		p.Add(plotter.NewGrid())
		p.Legend.Top, p.Legend.Left = true, true
		p.Legend.Add("dashed: linear growth from the first step", dashedKey())
		for _, s := range f.series {
			ys, ok := table[s.column]
			if !ok {
				return fmt.Errorf("%s: no column %q", in, s.column)
			}
			if err := addCurve(p, pods, ys, s); err != nil {
				return fmt.Errorf("%s: %w", f.file, err)
			}
		}
		if err := p.Save(8*vg.Inch, 5*vg.Inch, filepath.Join(out, f.file)); err != nil {
			return err
		}
	}
	return nil
}

// counts words a column of counts for a title: the one value, or the
// range when the steps differ.
func counts(col []float64) string {
	if len(col) == 0 {
		return "?"
	}
	lo, hi := slices.Min(col), slices.Max(col)
	if lo == hi {
		return strconv.FormatFloat(lo, 'f', -1, 64)
	}
	return strconv.FormatFloat(lo, 'f', -1, 64) + "–" + strconv.FormatFloat(hi, 'f', -1, 64)
}

// addCurve draws ys against pods and, dashed in the same colour, the
// linear growth from its first point.
func addCurve(p *plot.Plot, pods, ys []float64, s series) error {
	var xys, linear plotter.XYs
	for i := range pods {
		if ys[i] <= 0 || math.IsNaN(ys[i]) {
			continue // not measured at this step
		}
		xys = append(xys, plotter.XY{X: pods[i], Y: ys[i]})
	}
	if len(xys) == 0 {
		return errors.New("column " + s.column + " has no positive value")
	}
	for _, xy := range xys {
		linear = append(linear, plotter.XY{X: xy.X, Y: xys[0].Y * xy.X / xys[0].X})
	}
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	line.Color, points.Color = s.color, s.color
	line.Width = vg.Points(1.5)
	points.Shape = draw.CircleGlyph{}
	ref, err := plotter.NewLine(linear)
	if err != nil {
		return err
	}
	ref.Color, ref.Width, ref.Dashes = s.color, vg.Points(0.7), []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(ref, line, points)
	p.Legend.Add(s.legend, line, points)
	return nil
}

// dashedKey is the legend's sample of the linear reference lines.
func dashedKey() plot.Thumbnailer {
	l := &plotter.Line{XYs: plotter.XYs{{X: 0, Y: 0}}}
	l.Color, l.Width, l.Dashes = grey, vg.Points(0.7), []vg.Length{vg.Points(4), vg.Points(3)}
	return l
}

// readCSV reads the CSV into columns by header name.
func readCSV(path string) (map[string][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	table := map[string][]float64{}
	for _, rec := range recs[1:] {
		for i, name := range recs[0] {
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: column %s: %w", path, name, err)
			}
			table[name] = append(table[name], v)
		}
	}
	return table, nil
}

// valueTicks labels exactly the ladder's sizes (10k, 50k, …).
type valueTicks []float64

func (v valueTicks) Ticks(_, _ float64) []plot.Tick {
	var ts []plot.Tick
	for _, x := range v {
		label := strconv.FormatFloat(x, 'f', -1, 64)
		if x >= 1000 {
			label = strconv.FormatFloat(math.Round(x/1000), 'f', -1, 64) + "k" // 9,990 Pods: "10k"
		}
		ts = append(ts, plot.Tick{Value: x, Label: label})
	}
	return ts
}

// niceLogTicks labels 1, 2 and 5 times each power of ten in range, and
// the range's ends when that labels fewer than two, so a narrow span still
// has labels. A range reaching 0 or below (gonum widens a flat curve's by
// ±1) starts at its top's hundredth: a log axis has no 0.
type niceLogTicks struct{}

func (niceLogTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi <= 0 {
		return nil
	}
	if lo <= 0 {
		lo = hi / 100
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= lo && v <= hi {
				ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64)})
			}
		}
	}
	if len(ts) < 2 {
		ts = []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 3, 64)}, {Value: hi, Label: strconv.FormatFloat(hi, 'g', 3, 64)}}
	}
	return ts
}
