package english

import "testing"

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 addresses"}, {1, "1 address"}, {2, "2 addresses"}, {-1, "-1 addresses"}} {
		if got := Plural(tc.n, "address", "addresses"); got != tc.want {
			t.Errorf("Plural(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct{ in, clip, quote string }{
		{"abc", "abc", `"abc"`},
		{"abcdef", "abcd... (2 more bytes)", `"abcd"... (2 more bytes)`},
		{"aé€x", "aé... (4 more bytes)", `"aé"... (4 more bytes)`}, // the cut at 4 falls inside €: back to 3
	} {
		if got := Clip(c.in, 4); got != c.clip {
			t.Errorf("Clip(%q) = %q, want %q", c.in, got, c.clip)
		}
		if got := QuoteClip(c.in, 4); got != c.quote {
			t.Errorf("QuoteClip(%q) = %q, want %q", c.in, got, c.quote)
		}
	}
}
