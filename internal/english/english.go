// Package english words the counts of messages and reports ("1 slice",
// "3 slices"), and clips the inputs a message echoes (Clip, QuoteClip):
// every message that quotes what a user, a file, the API or a node gave
// clips it here, short and printable on one line. It is pure (the
// standard library only), so the pure planners may use it.
package english

import "strconv"

// Plural is n followed by one when n is 1, else by many: Plural(2,
// "address", "addresses") is "2 addresses". Both forms are given, since
// English plurals do not follow one rule ("Pod is", "Pods are").
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
