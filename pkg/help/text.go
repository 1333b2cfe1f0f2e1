package help

import (
	"embed"
	"strings"
)

// The commands' descriptions, examples and exit-code tables, as prose files
// (text/COMMAND.long.txt and .example.txt) rather than Go string
// literals: they are read, reviewed and corrected as documentation, and the
// command wiring stays short.
//
//go:embed text
var texts embed.FS

// Text returns the help text text/NAME.txt without its final newline. A
// missing text is a programming error, caught by every command's help test.
func Text(name string) string {
	b, err := texts.ReadFile("text/" + name + ".txt")
	if err != nil {
		panic("kubectl-slices: no help text " + name)
	}
	return strings.TrimSuffix(string(b), "\n")
}
