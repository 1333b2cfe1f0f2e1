package args

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

func TestServices(t *testing.T) {
	got, err := Services([]string{"svc/a", "service/b", "c", "Services/d", "service.v1/e"})
	if err != nil || !reflect.DeepEqual(got, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("%v %v", got, err)
	}
	if got, err := Services([]string{"svc", "a", "b"}); err != nil || !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("svc NAME NAME: %v %v", got, err)
	}
	if got, err := Services(nil); err != nil || len(got) != 0 {
		t.Errorf("no arguments: %v %v", got, err)
	}
	for _, bad := range [][]string{{"pods/x"}, {"svc/"}, {"svc/a/b"}, {"svc"}, {"svc/.."}, {"svc/Web"}, {"svc/a\nb"}, {"a", "deploy/b"}} {
		_, err := Services(bad)
		var ee *exit.Error
		if !errors.As(err, &ee) || ee.Code != exit.Usage {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
}

func TestIsServiceType(t *testing.T) {
	for s, want := range map[string]bool{"svc": true, "SVC": true, "service": true, "services.v1": true, "svc/a": false, "pods": false, "": false} {
		if got := IsServiceType(s); got != want {
			t.Errorf("IsServiceType(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestSelect(t *testing.T) {
	cases := []struct {
		s    syncer.Selection
		want string // "" accepted
	}{
		{syncer.Selection{Names: []string{"web"}}, ""},
		{syncer.Selection{Selector: "tier=web", AllNamespaces: true}, ""},
		{syncer.Selection{All: true, AllNamespaces: true}, ""},
		{syncer.Selection{Names: []string{"web"}, Selector: "a=b"}, "not both"},
		{syncer.Selection{Names: []string{"web"}, All: true}, "not both"},
		{syncer.Selection{}, "name at least one Service"},
		{syncer.Selection{Selector: "a=b", All: true}, "-l and --all do not go together"},
		{syncer.Selection{Names: []string{"web"}, AllNamespaces: true}, "cannot be named across all namespaces"},
		{syncer.Selection{Selector: "a in (b"}, "invalid selector"},
	}
	for _, c := range cases {
		got, err := Select(c.s)
		var ee *exit.Error
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.s, err)
		case c.want != "" && (!errors.As(err, &ee) || ee.Code != exit.Usage || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: %v, want a usage error %q", c.s, err, c.want)
		case err == nil && (got.Labels == nil) != (c.s.Selector == ""):
			t.Errorf("%+v: parsed selector %v", c.s, got.Labels)
		}
	}
}

// An argument of another kind, 70 KB long, is quoted by its first 200 bytes
// and the count of the rest, as every echoed value is.
func TestServicesHugeKindClipped(t *testing.T) {
	_, err := Services([]string{strings.Repeat("a", 70_000) + "/x"})
	if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), "... (") {
		t.Errorf("Services(70 KB kind): %.300v", err)
	}
}
