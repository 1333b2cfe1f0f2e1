package printers

import (
	"io"
	"os"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
)

// Style colours text when enabled.
type Style struct{ On bool }

// StyleFor decides colour for one stream: "always", "never", or "auto"
// (colour only on a terminal, and never when NO_COLOR is set).
func StyleFor(mode string, w io.Writer) Style {
	switch mode {
	case "always":
		return Style{On: true}
	case "never":
		return Style{}
	}
	if _, set := os.LookupEnv("NO_COLOR"); set {
		return Style{}
	}
	f, ok := w.(interface{ Fd() uintptr })
	return Style{On: ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))}
}

func (s Style) paint(attr color.Attribute, text string) string {
	if !s.On {
		return text
	}
	c := color.New(attr)
	c.EnableColor()
	return c.Sprint(text)
}

func (s Style) Green(t string) string  { return s.paint(color.FgGreen, t) }
func (s Style) Red(t string) string    { return s.paint(color.FgRed, t) }
func (s Style) Yellow(t string) string { return s.paint(color.FgYellow, t) }
func (s Style) Cyan(t string) string   { return s.paint(color.FgCyan, t) }
func (s Style) Bold(t string) string   { return s.paint(color.Bold, t) }
func (s Style) Faint(t string) string  { return s.paint(color.Faint, t) }
