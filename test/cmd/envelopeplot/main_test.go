package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// csvWith is a two-step ladder with every column the figures draw.
func csvWith(t *testing.T, drop string) string {
	t.Helper()
	all := []string{"flips"}
	for _, f := range figures {
		for _, s := range f.series {
			all = append(all, s.column)
		}
	}
	var cols []string
	for _, c := range all {
		if c != drop {
			cols = append(cols, c)
		}
	}
	rows := []string{"pods," + strings.Join(cols, ",")}
	for _, pods := range []string{"10000", "50000"} {
		vals := []string{pods}
		for range cols {
			vals = append(vals, "1.5")
		}
		rows = append(rows, strings.Join(vals, ","))
	}
	path := filepath.Join(t.TempDir(), "envelope.csv")
	if err := os.WriteFile(path, []byte(strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDrawsEveryFigure(t *testing.T) {
	out := t.TempDir()
	if err := run(csvWith(t, ""), out); err != nil {
		t.Fatal(err)
	}
	for _, f := range figures {
		st, err := os.Stat(filepath.Join(out, f.file))
		if err != nil || st.Size() == 0 {
			t.Errorf("%s not drawn: %v", f.file, err)
		}
	}
}

// A column the benchmark stopped writing is an error naming it, not a
// figure with a curve silently missing.
func TestMissingColumnNamed(t *testing.T) {
	err := run(csvWith(t, "kcm_cold_s"), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), `"kcm_cold_s"`) {
		t.Fatalf("err = %v, want one naming kcm_cold_s", err)
	}
}

func TestLogTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{150, 900, "200 500"},
		{30, 45, "30 45"},                    // no 1-2-5 value inside: the ends
		{0, 2, "0.02 0.05 0.1 0.2 0.5 1 2"},  // a flat curve's range, widened by gonum to 0
		{-1, 2, "0.02 0.05 0.1 0.2 0.5 1 2"}, // and below
		{1.2, 1.9, "1.2 1.9"},
	} {
		var labels []string
		for _, tk := range (niceLogTicks{}).Ticks(c.lo, c.hi) {
			labels = append(labels, tk.Label)
		}
		if got := strings.Join(labels, " "); got != c.want {
			t.Errorf("ticks between %v and %v: %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}

func TestMissingFlipsNamed(t *testing.T) {
	err := run(csvWith(t, "flips"), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), `"flips"`) {
		t.Fatalf("err = %v, want one naming flips", err)
	}
}

// The flips figure's title says how many flips the CSV's steps made.
func TestCounts(t *testing.T) {
	for _, c := range []struct {
		col  []float64
		want string
	}{{[]float64{100, 100}, "100"}, {[]float64{100, 300}, "100–300"}, {nil, "?"}} {
		if got := counts(c.col); got != c.want {
			t.Errorf("counts(%v) = %q, want %q", c.col, got, c.want)
		}
	}
}
