package english

import (
	"strconv"
	"unicode/utf8"
)

// ClipLen is how much of an echoed input a one-line message quotes.
const ClipLen = 200

// Clip cuts s, an input a message echoes (a label value, a selector, an
// error quoting either), to its first max bytes on a rune boundary and says
// how many were left out, so that a message stays short however large the
// input: Clip("abcdef", 3) is "abc... (3 more bytes)".
func Clip(s string, max int) string {
	head, more := cut(s, max)
	return head + more
}

// QuoteClip is s Go-quoted as %q quotes it, cut as Clip cuts it, with the
// count outside the quotes: QuoteClip("abcdef", 3) is `"abc"... (3 more
// bytes)`.
func QuoteClip(s string, max int) string {
	head, more := cut(s, max)
	return strconv.Quote(head) + more
}

// cut returns the first max bytes of s (fewer, to end on a rune boundary)
// and, when anything was cut, what says how much.
func cut(s string, max int) (string, string) {
	if len(s) <= max {
		return s, ""
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], "... (" + strconv.Itoa(len(s)-n) + " more bytes)"
}
