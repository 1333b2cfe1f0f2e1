package printers

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// table aligns tab-separated cells written to it, like text/tabwriter with
// two blanks of padding, but measures cells by their visible width: colour
// escape sequences take no room on a terminal, while tabwriter counts their
// bytes and misaligns every coloured column. The last cell of a line is not
// padded, so lines carry no trailing blanks.
type table struct {
	buf strings.Builder
	out io.Writer
}

func newTable(w io.Writer) *table { return &table{out: w} }

func (t *table) Write(p []byte) (int, error) { return t.buf.Write(p) }

// ansi matches SGR escape sequences, the only ones Style writes.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func visibleWidth(s string) int { return utf8.RuneCountInString(ansi.ReplaceAllString(s, "")) }

// Flush writes the buffered lines, aligned. Each column is as wide as its
// widest cell among the lines that have a cell after it.
func (t *table) Flush() {
	text := strings.TrimSuffix(t.buf.String(), "\n")
	t.buf.Reset()
	if text == "" {
		return
	}
	var rows [][]string
	var widths []int
	for _, line := range strings.Split(text, "\n") {
		cells := strings.Split(line, "\t")
		for i, c := range cells[:len(cells)-1] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], visibleWidth(c))
		}
		rows = append(rows, cells)
	}
	for _, cells := range rows {
		var b strings.Builder
		for i, c := range cells {
			b.WriteString(c)
			if i < len(cells)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-visibleWidth(c)+2))
			}
		}
		fmt.Fprintln(t.out, strings.TrimRight(b.String(), " "))
	}
}
