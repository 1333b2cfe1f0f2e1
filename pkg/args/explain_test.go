package args

import (
	"strings"
	"testing"
)

// Each form of explain's argument, and each flag that does not go with it,
// exactly as refused.
func TestExplain(t *testing.T) {
	huge := strings.Repeat("x", 10000)
	for _, c := range []struct {
		argv          []string
		ip, selector  string
		allNamespaces bool
		showPods      bool
		want          string // the error; "" for none
	}{
		{argv: []string{"svc/web"}},
		{argv: []string{"svc", "web"}},
		{argv: []string{"pod/web-0", "pod/web-1"}},
		{argv: []string{"pod"}, selector: "app=web"},
		{selector: "app=web"},
		{ip: "10.244.3.16", allNamespaces: true},
		{ip: "fd00::10"},
		{argv: []string{"svc/a", "svc/b"}, want: "explain takes one Service, got 2: run it once per Service"},
		{argv: []string{}, want: "name the Service to explain: svc/NAME"},
		{argv: []string{"svc/web"}, allNamespaces: true, want: "-l and -A go with pod/NAME and --ip; explain takes one Service: svc/NAME"},
		{argv: []string{"pod/web-0"}, showPods: true, want: "--show-pods goes with svc/NAME"},
		{argv: []string{"svc/web"}, ip: "10.0.0.1", want: "--ip takes no Service, Pod or -l: kubectl slices explain --ip ADDRESS"},
		{ip: "10.0.0", want: `--ip must be an IPv4 or IPv6 address such as 10.244.3.16 or fd00::10, got "10.0.0"`},
		{argv: []string{"pod/web-0"}, allNamespaces: true, want: "-A goes with --ip; a Pod is named in one namespace (-n)"},
		{argv: []string{"pod/web-0"}, selector: "app=web", want: "name Pods or select them with -l, not both"},
		{argv: []string{"pod"}, want: "name the Pod to explain: pod/NAME, or pod -l SELECTOR"},
		{argv: []string{"pod"}, selector: "app in (web", want: `-l "app in (web" is not a label selector: `},
	} {
		e := Explain{IP: c.ip, Selector: c.selector}
		err := e.Parse(c.argv)
		if err == nil {
			err = e.Validate(c.allNamespaces, c.showPods)
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v ip=%q -l=%q: %v", c.argv, c.ip, c.selector, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%v ip=%q -l=%q: got %v, want %q", c.argv, c.ip, c.selector, err, c.want)
		}
	}
	// A huge value is quoted clipped, by itself and by the parser's error.
	for _, e := range []Explain{{IP: huge}, {Selector: huge + "!", PodMode: true}} {
		if err := e.Validate(false, false); err == nil || len(err.Error()) > 1000 {
			t.Errorf("a huge value is refused with its value clipped, got %.200v", err)
		}
	}
}
