package args

import "testing"

// -o is refused with the formats the command prints named, the default
// ("") left unnamed, exactly as each command words it.
func TestOutput(t *testing.T) {
	for _, c := range []struct {
		got     string
		formats []string
		want    string
	}{
		{"", []string{"", "json", "yaml"}, ""},
		{"yaml", []string{"", "json", "yaml"}, ""},
		{"wide", []string{"", "json", "yaml"}, `-o must be json or yaml, got "wide"`},
		{"table", []string{"", "json", "yaml", "name"}, `-o must be json, yaml or name, got "table"`},
		{"", []string{"yaml", "json"}, `-o must be yaml or json, got ""`},
		{"json", []string{"yaml", "json"}, ""},
		{"yaml", []string{"", "json"}, `-o must be json, got "yaml"`},
	} {
		err := Output(c.got, c.formats...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("-o %q of %q: %v", c.got, c.formats, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("-o %q of %q: got %v, want %q", c.got, c.formats, err, c.want)
		}
	}
}

// An optional duration: none, a positive one, or refused as worded.
func TestDuration(t *testing.T) {
	if d, err := Duration("--wait", ""); d != 0 || err != nil {
		t.Errorf("none: %v, %v", d, err)
	}
	if d, err := Duration("--wait", "90s"); d != 90e9 || err != nil {
		t.Errorf("90s: %v, %v", d, err)
	}
	for _, v := range []string{"0s", "-1m", "soon"} {
		want := `--wait must be a positive duration such as 90s or 5m, got "` + v + `"`
		if _, err := Duration("--wait", v); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", v, err, want)
		}
	}
}

// The shared flags, each refusal as worded.
func TestShared(t *testing.T) {
	for _, c := range []struct {
		color string
		qps   float32
		burst int
		want  string
	}{
		{"auto", 200, 400, ""},
		{"never", 0.5, 1, ""},
		{"sometimes", 200, 400, `--color must be auto, always or never, got "sometimes"`},
		{"always", 0, 400, "--qps and --burst must be positive"},
		{"always", 200, -1, "--qps and --burst must be positive"},
	} {
		err := Shared(c.color, c.qps, c.burst)
		if (c.want == "" && err != nil) || (c.want != "" && (err == nil || err.Error() != c.want)) {
			t.Errorf("%+v: got %v", c, err)
		}
	}
}
