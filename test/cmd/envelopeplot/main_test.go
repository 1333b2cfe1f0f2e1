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
	var cols []string
	for _, f := range figures {
		for _, s := range f.series {
			if s.column != drop {
				cols = append(cols, s.column)
			}
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

func TestLogTicksInsideOneDecade(t *testing.T) {
	var labels []string
	for _, tk := range (niceLogTicks{}).Ticks(150, 900) {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "200 500" {
		t.Errorf("ticks between 150 and 900: %q, want \"200 500\"", got)
	}
}
