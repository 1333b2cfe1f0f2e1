package exit

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// kinded is an error of some other package that says its class.
type kinded struct {
	msg   string
	class Class
}

func (e *kinded) Error() string    { return e.msg }
func (e *kinded) ExitClass() Class { return e.class }

// The class an error carries decides its code and words, wherever it sits
// in the error's tree; errors.Is still finds a sentinel WithClass made.
func TestClassesMapToCodes(t *testing.T) {
	conflict := WithClass(ClassConflict, errors.New("an object changed"))
	wrapped := fmt.Errorf("update: %w", conflict)
	if !errors.Is(wrapped, conflict) || wrapped.Error() != "update: an object changed" {
		t.Errorf("sentinel lost: %v", wrapped)
	}
	terminating := &kinded{"namespace shop is being deleted", ClassNamespaceTerminating}
	cases := []struct {
		err   error
		code  int
		words string
	}{
		{wrapped, Conflicts, "service shop/web: its EndpointSlices kept changing while syncing (is another controller writing them?); run again"},
		{errors.Join(errors.New("first"), wrapped), Conflicts, "kept changing"},
		{fmt.Errorf("create: %w", terminating), API, "service shop/web: namespace shop is terminating: no EndpointSlices can be created in it"},
		{&kinded{"bad flag", ClassConfig}, API, "service shop/web: bad flag"},
		{errors.New("boom"), API, "service shop/web: boom"},
	}
	for i, c := range cases {
		if got := Code(c.err); got != c.code {
			t.Errorf("case %d: Code %d, want %d", i, got, c.code)
		}
		d := Describe("shop", "web", c.err)
		if Code(d) != c.code || !strings.Contains(d.Error(), c.words) {
			t.Errorf("case %d: described %q (exit %d), want %q (exit %d)", i, d, Code(d), c.words, c.code)
		}
	}
}

// The long-running process's configuration is a usage error and what it
// worded itself is an API error, each reported as the classed error itself.
func TestProcessClasses(t *testing.T) {
	config := &kinded{"--health-addr :x: bad port", ClassConfig}
	api := &kinded{"lost the lease", ClassAPI}
	worded := &Error{Code: Conflicts, Err: errors.New("refused")}
	cases := []struct {
		err  error
		code int
		msg  string
	}{
		{nil, OK, ""},
		{fmt.Errorf("start: %w", config), Usage, config.msg},
		{fmt.Errorf("run: %w", api), API, api.msg},
		{fmt.Errorf("run: %w", worded), Conflicts, "refused"},
		{errors.Join(api, config), Usage, config.msg},
	}
	for i, c := range cases {
		err := Process("shop", "shop", c.err)
		if Code(err) != c.code || (err != nil && err.Error() != c.msg) {
			t.Errorf("case %d: %v (exit %d), want %q (exit %d)", i, err, Code(err), c.msg, c.code)
		}
	}
}
