package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"sort"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Colours: one per replica (Okabe-Ito, readable by the colour-blind), and
// one per family of fault.
var (
	replicaColors = map[string]color.RGBA{"a": {0, 114, 178, 255}, "b": {213, 94, 0, 255}}
	controllerRGB = color.RGBA{120, 120, 120, 255}
	faultColors   = map[string]color.NRGBA{
		"controller":    {230, 159, 0, 70},   // kube-controller-manager killed or frozen
		"control-plane": {204, 121, 167, 70}, // kube-apiserver or etcd restarted
		"replica":       {86, 180, 233, 70},  // a replica's proxy
	}
)

func faultFamily(k faultKind) string {
	switch k {
	case faultKCMKill, faultKCMFreeze:
		return "controller"
	case faultAPIServerRestart, faultEtcdRestart:
		return "control-plane"
	}
	return "replica"
}

// plotPNG draws the run: each replica's RSS, goroutines and open fds, the
// slice writes per 10 s (ours and the controller's) with the takeovers,
// and the takeover delays; the faults are bands across every panel, named
// in the first, and the Lease's holder a strip along its top.
func (r results) plotPNG(path string) error {
	in := r.in
	x := func(t time.Time) float64 { return t.Sub(in.Start).Minutes() }
	xmax := math.Max(x(in.Stop), 1)
	faults := &faultBands{faults: in.Faults, x: x, labels: false}
	named := &faultBands{faults: in.Faults, x: x, labels: true}
	newPanel := func(title, ylabel string) *plot.Plot {
		p := plot.New()
		p.Title.Text = title
		p.Title.TextStyle.Font.Size = vg.Points(11)
		p.Y.Label.Text = ylabel
		p.X.Min, p.X.Max = 0, xmax
		p.X.Tick.Marker = minuteTicks{}
		p.Y.Tick.Marker = plainTicks{}
		p.Add(plotter.NewGrid())
		p.Legend.Top, p.Legend.Left = true, true
		p.Legend.TextStyle.Font.Size = vg.Points(9)
		return p
	}
	rss := newPanel("Resident memory of each replica's kubectl-slices process", "MiB")
	rss.Add(named, &leaderStrip{terms: r.Terms, x: x, colorOf: r.replicaColorOfUser, end: in.Stop})
	gor := newPanel("Goroutines (go_goroutines of /metrics)", "goroutines")
	gor.Add(faults)
	fds := newPanel("Open file descriptors (/proc/PID/fd)", "fds")
	fds.Add(&faultBands{faults: in.Faults, x: x})
	for _, name := range r.replicaNames() {
		c := replicaColors[name]
		first := true
		for _, seg := range segments(in.Resources, name) {
			for _, panel := range []struct {
				p *plot.Plot
				m metric
			}{{rss, metricRSS}, {gor, metricGoroutines}, {fds, metricFDs}} {
				var xys plotter.XYs
				for _, s := range seg {
					if v, ok := s.value(panel.m); ok {
						if panel.m == metricRSS {
							v /= 1 << 20
						}
						xys = append(xys, plotter.XY{X: x(s.At), Y: v})
					}
				}
				if len(xys) == 0 {
					continue
				}
				l, err := plotter.NewLine(xys)
				if err != nil {
					return err
				}
				l.Color, l.Width = c, vg.Points(1.5)
				panel.p.Add(l)
				if first {
					panel.p.Legend.Add("replica "+name, l)
				}
			}
			first = false
		}
		// Restarts after a lost Lease: a cross on the RSS panel.
		var restarts plotter.XYs
		for _, e := range in.Exits[name] {
			if e.Lost || e.Crash() {
				restarts = append(restarts, plotter.XY{X: x(e.At), Y: 0})
			}
		}
		if len(restarts) > 0 {
			sc, err := plotter.NewScatter(restarts)
			if err != nil {
				return err
			}
			sc.GlyphStyle.Shape, sc.GlyphStyle.Color, sc.GlyphStyle.Radius = draw.CrossGlyph{}, c, vg.Points(5)
			rss.Add(sc)
			rss.Legend.Add(fmt.Sprintf("replica %s restarted (%d)", name, len(restarts)), sc)
		}
	}
	// Room above the data for the legend (and the Lease strip).
	for _, p := range []*plot.Plot{rss, gor, fds} {
		p.Y.Min, p.Y.Max = 0, p.Y.Max*1.45
	}
	rss.Legend.Add("Lease holder (strip along the top)", swatch{replicaColors["a"]}, swatch{replicaColors["b"]})

	writes := newPanel("EndpointSlice writes per 10 s (audit log); takeovers", "writes / 10 s")
	writes.Add(faults)
	bins := r.bins()
	var ours, theirs, takeovers plotter.XYs
	for _, b := range bins {
		ours = append(ours, plotter.XY{X: x(b.At), Y: float64(b.Ours)})
		theirs = append(theirs, plotter.XY{X: x(b.At), Y: float64(b.Controller)})
	}
	for _, t := range r.Takeovers {
		if !t.FirstWrite.IsZero() && !t.Served {
			takeovers = append(takeovers, plotter.XY{X: x(t.FirstWrite), Y: 0})
		}
	}
	for _, s := range []struct {
		xys   plotter.XYs
		name  string
		color color.Color
	}{{theirs, "kube-controller-manager", controllerRGB}, {ours, "kubectl-slices (both replicas)", color.RGBA{0, 158, 115, 255}}} {
		if len(s.xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(s.xys)
		if err != nil {
			return err
		}
		l.Color, l.Width, l.StepStyle = s.color, vg.Points(1.2), plotter.PostStep
		writes.Add(l)
		writes.Legend.Add(s.name, l)
	}
	if len(takeovers) > 0 {
		sc, err := plotter.NewScatter(takeovers)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Shape, sc.GlyphStyle.Color, sc.GlyphStyle.Radius = draw.TriangleGlyph{}, color.RGBA{0, 0, 0, 255}, vg.Points(3)
		writes.Add(sc)
		writes.Legend.Add(fmt.Sprintf("takeover: our first write for a Service (%d)", len(takeovers)), sc)
	}
	writes.Y.Min, writes.Y.Max = 0, writes.Y.Max*1.45

	delays := newPanel(fmt.Sprintf("Takeover delay: from the change the controller missed to our first write (bound %s)", in.Opts.TakeoverAfter+in.Opts.Margin), "seconds")
	delays.Add(faults)
	var ok, late, served, missing plotter.XYs
	bound := in.Opts.TakeoverAfter + in.Opts.Margin
	top := 1.8 * math.Max(bound.Seconds()*1.1, quantile(r.delays(), 1).Seconds())
	for _, t := range r.Takeovers {
		if t.FirstWrite.IsZero() {
			if t.Required {
				missing = append(missing, plotter.XY{X: x(t.MissedAt), Y: top * 0.9})
			}
			continue
		}
		pt := plotter.XY{X: x(t.MissedAt), Y: t.Delay().Seconds()}
		switch {
		case t.Late(bound):
			late = append(late, pt)
		case t.Served:
			served = append(served, pt)
		default:
			ok = append(ok, pt)
		}
	}
	for _, s := range []struct {
		xys   plotter.XYs
		name  string
		color color.Color
		shape draw.GlyphDrawer
	}{{ok, "taken over within the bound", color.RGBA{0, 158, 115, 255}, draw.CircleGlyph{}},
		{served, "already ours: updated within the bound", controllerRGB, draw.RingGlyph{}},
		{late, "late", color.RGBA{213, 0, 0, 255}, draw.CrossGlyph{}},
		{missing, "never written while the controller was down (drawn at the top)", color.RGBA{213, 0, 0, 255}, draw.SquareGlyph{}}} {
		if len(s.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(s.xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Shape, sc.GlyphStyle.Color, sc.GlyphStyle.Radius = s.shape, s.color, vg.Points(2.5)
		delays.Add(sc)
		delays.Legend.Add(fmt.Sprintf("%s (%d)", s.name, len(s.xys)), sc)
	}
	limit, err := plotter.NewLine(plotter.XYs{{X: 0, Y: bound.Seconds()}, {X: xmax, Y: bound.Seconds()}})
	if err != nil {
		return err
	}
	limit.Color, limit.Dashes = color.RGBA{213, 0, 0, 255}, []vg.Length{vg.Points(4), vg.Points(3)}
	delays.Add(limit)
	delays.Legend.Add("bound", limit)
	delays.Y.Min, delays.Y.Max = 0, top
	delays.X.Label.Text = "minutes since the churn started"

	// Faults in the legend of the last panel, by family.
	for _, fam := range []struct{ key, name string }{{"controller", "kube-controller-manager killed/frozen"},
		{"control-plane", "kube-apiserver/etcd restarted"}, {"replica", "a replica's connection faulted"}} {
		c := faultColors[fam.key]
		c.A = 160 // as opaque as the bands look where they cross a white panel
		delays.Legend.Add(fam.name, swatch{c})
	}

	panels := [][]*plot.Plot{{rss}, {gor}, {fds}, {writes}, {delays}}
	img := vgimg.NewWith(vgimg.UseWH(vg.Points(1100), vg.Points(1250)), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(16), PadY: vg.Points(14)}
	canvases := plot.Align(panels, tiles, dc)
	for i := range panels {
		panels[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (r results) replicaNames() []string {
	seen := map[string]bool{}
	for _, s := range r.in.Resources {
		seen[s.Replica] = true
	}
	for n := range r.in.Exits {
		seen[n] = true
	}
	return sortedKeys(seen)
}

func (r results) replicaColorOfUser(user string) color.Color {
	for _, n := range r.replicaNames() {
		if r.userOf(n) == user {
			return replicaColors[n]
		}
	}
	return controllerRGB
}

// segments splits a replica's samples by process.
func segments(samples []resourceSample, replica string) [][]resourceSample {
	var out [][]resourceSample
	pid := -1
	for _, s := range samples {
		if s.Replica != replica || s.PID == 0 {
			continue
		}
		if s.PID != pid {
			out = append(out, nil)
			pid = s.PID
		}
		out[len(out)-1] = append(out[len(out)-1], s)
	}
	return out
}

// faultBands shades each fault from its injection to its recovery (at
// least a few seconds wide, so an instant one shows), optionally named.
type faultBands struct {
	faults []faultRecord
	x      func(time.Time) float64
	labels bool
}

func (f *faultBands) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, fr := range f.faults {
		x0 := fr.Start
		x1 := fr.Recovered
		if x1.Before(x0.Add(5 * time.Second)) {
			x1 = x0.Add(5 * time.Second)
		}
		l, r := trX(f.x(x0)), trX(f.x(x1))
		band := c.ClipPolygonXY([]vg.Point{{X: l, Y: c.Min.Y}, {X: r, Y: c.Min.Y}, {X: r, Y: c.Max.Y}, {X: l, Y: c.Max.Y}})
		c.FillPolygon(faultColors[faultFamily(fr.Kind)], band)
		if f.labels && c.ContainsX(l) {
			// Upwards from the bottom of the band, where the panel has no
			// data (memory never nears zero).
			sty := p.X.Tick.Label
			sty.Font.Size = vg.Points(9)
			sty.Rotation = math.Pi / 2
			sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
			sty.Color = color.RGBA{60, 60, 60, 255}
			c.FillText(sty, vg.Point{X: l + vg.Points(2), Y: c.Min.Y + vg.Points(4)}, string(fr.Kind)+target(fr))
		}
	}
}

// leaderStrip draws, along the top of a panel, who held the Lease.
type leaderStrip struct {
	terms   []term
	x       func(time.Time) float64
	colorOf func(user string) color.Color
	end     time.Time
}

func (l *leaderStrip) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	top := c.Max.Y
	h := vg.Points(4)
	for _, t := range l.terms {
		end := t.End
		if end.IsZero() {
			end = l.end
		}
		x0, x1 := trX(l.x(t.Start)), trX(l.x(end))
		band := c.ClipPolygonX([]vg.Point{{X: x0, Y: top - h}, {X: x1, Y: top - h}, {X: x1, Y: top}, {X: x0, Y: top}})
		c.FillPolygon(l.colorOf(t.User), band)
	}
}

// swatch is a legend entry that is a filled square.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.c, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// plainTicks are plot's default ticks, labelled without trailing zeros.
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}

// minuteTicks puts a labelled tick every few minutes, a plain one between.
type minuteTicks struct{}

func (minuteTicks) Ticks(min, max float64) []plot.Tick {
	span := max - min
	step := 1.0
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60} {
		step = s
		if span/s <= 12 {
			break
		}
	}
	var out []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max; v += step {
		out = append(out, plot.Tick{Value: v, Label: fmt.Sprintf("%g", v)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Value < out[j].Value })
	return out
}
