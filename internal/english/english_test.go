package english

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

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
	x30 := strings.Repeat("x", 30)
	for _, c := range []struct{ in, clip, quote string }{
		{"abc", "abc", `"abc"`},
		{"abcdef", "abcdef", `"abcdef"`}, // saying how much was cut would not be shorter
		{"abcd" + x30, "abcd... (30 more bytes)", `"abcd"... (30 more bytes)`},
		{"aé€" + x30, "aé... (33 more bytes)", `"aé"... (33 more bytes)`}, // the cut at 4 falls inside €: back to 3
		{"a\nb", "a b", `"a\nb"`},                 // a newline cannot forge a line
		{" a \n\t  b\n", "a b", `" a \n\t  b\n"`}, // a run of whitespace is one space, none at the ends
		{"\x1b[2J", "?[2J", `"\x1b[2J"`},          // nor an escape sequence move the cursor
		{"a\xffb", "a?b", `"a\xffb"`},             // a byte that is not UTF-8
		{"\u202ea", "?a", `"\u202ea"`},            // a bidi override
		{strings.Repeat("\x80", 30), "?... (29 more bytes)", `"\x80"... (29 more bytes)`}, // garbage: backs up at most 3 bytes
	} {
		if got := Clip(c.in, 4); got != c.clip {
			t.Errorf("Clip(%q) = %q, want %q", c.in, got, c.clip)
		}
		if got := QuoteClip(c.in, 4); got != c.quote {
			t.Errorf("QuoteClip(%q) = %q, want %q", c.in, got, c.quote)
		}
	}
}

// ClipTo keeps an input that fits whole, and cuts one that does not to the
// total, tail included.
func TestClipTo(t *testing.T) {
	fits := strings.Repeat("a", 100)
	if got := ClipTo(fits, 100); got != fits {
		t.Errorf("an input that fits was cut: %q", got)
	}
	if got := ClipTo(fits+"b", 100); len(got) > 100 || !strings.HasSuffix(got, " more bytes)") {
		t.Errorf("an input one byte over: %d bytes, %q", len(got), got)
	}
}

// A caller held to a total length (an admission warning) clips to it
// less ClipTail, whatever the input's size.
func TestClipTail(t *testing.T) {
	const total = 100
	s := strings.Repeat("é", 1000)
	if got := Clip(s, total-ClipTail); len(got) > total {
		t.Fatalf("%d bytes", len(got))
	}
	if got := "... (" + strconv.Itoa(math.MaxInt64) + " more bytes)"; len(got) != ClipTail {
		t.Fatalf("the longest tail is %d bytes, ClipTail %d", len(got), ClipTail)
	}
}
