package english

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ClipLen is how much of an echoed input a one-line message quotes.
const ClipLen = 200

// ClipTail is the most Clip adds past max bytes: "... (N more bytes)"
// with N of up to 19 digits. A caller held to a total length uses ClipTo.
const ClipTail = len("... ( more bytes)") + 19

// Clip cuts s, an input a message echoes (a label value, a selector, an
// error quoting either, what a node answered), to its first max bytes on
// a rune boundary and says how many were left out, so that a message
// stays short however large the input: Clip("abcdef", 3) is "abc... (3
// more bytes)". What it keeps is made safe to print on one line: a space
// for each whitespace character (a newline cannot forge a line), "?" for
// every other character that is not printable (an escape sequence cannot
// move the cursor) and for each byte that is not UTF-8; a run of
// whitespace is one space, none at either end (indented JSON or YAML
// echoed in an error spends the budget on text, not on indentation). An
// input the cut would not make shorter is kept whole.
func Clip(s string, max int) string {
	head, more := cut(s, max)
	return printable(head) + more
}

// ClipTo is s as Clip makes it, at most total bytes in all, tail
// included: for a bound on the whole message (an admission warning), so
// that an input which fits is never cut.
func ClipTo(s string, total int) string {
	if len(s) <= total {
		return printable(s)
	}
	return Clip(s, total-ClipTail)
}

// QuoteClip is s Go-quoted as %q quotes it, cut as Clip cuts it, with the
// count outside the quotes: QuoteClip("abcdef", 3) is `"abc"... (3 more
// bytes)`. Quoting escapes what Clip would replace.
func QuoteClip(s string, max int) string {
	head, more := cut(s, max)
	return strconv.Quote(head) + more
}

// cut returns the first max bytes of s (fewer, to end on a rune boundary)
// and, when anything was cut, what says how much; s whole when saying how
// much would be as long as what it replaces.
func cut(s string, max int) (string, string) {
	if len(s) <= max {
		return s, ""
	}
	n := max
	if n < 0 {
		n = 0
	}
	// A rune is at most utf8.UTFMax bytes long: past that, the bytes
	// backed over are no rune's, and printable replaces them.
	for back := 1; back < utf8.UTFMax && n > 0 && !utf8.RuneStart(s[n]); back++ {
		n--
	}
	more := "... (" + Plural(len(s)-n, "more byte", "more bytes") + ")"
	if n+len(more) >= len(s) {
		return s, ""
	}
	return s[:n], more
}

// printable replaces in s what could break a one-line message.
func printable(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false // a space is owed before the next character written
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		switch {
		case r == utf8.RuneError && size == 1: // a byte that is not UTF-8
			b.WriteByte('?')
		case !unicode.IsPrint(r):
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
