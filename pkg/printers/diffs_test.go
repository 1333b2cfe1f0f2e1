package printers

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/outcome"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Each Service's diff or failure in order; the first failure and whether
// anything would change are returned for the exit code.
func TestDiffs(t *testing.T) {
	inSync := outcome.Outcome{Namespace: "shop", Name: "api", Plan: &reconcile.Plan{}}
	create := outcome.Outcome{Namespace: "shop", Name: "web", Plan: &reconcile.Plan{
		Create: []*discovery.EndpointSlice{{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", GenerateName: "web-"}}}}}
	first, second := errors.New("service shop/a: forbidden"), errors.New("service shop/b: gone")
	cases := []struct {
		name    string
		runs    []outcome.Outcome
		changed bool
		failed  error
	}{
		{"in sync", []outcome.Outcome{inSync}, false, nil},
		{"a change", []outcome.Outcome{inSync, create}, true, nil},
		{"failures and a change", []outcome.Outcome{{Namespace: "shop", Name: "a", Err: first}, create, {Namespace: "shop", Name: "b", Err: second}}, true, first},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		changed, failed, err := Diffs(&out, &errOut, Style{}, Style{}, c.runs)
		if err != nil || changed != c.changed || failed != c.failed {
			t.Errorf("%s: changed %v failed %v err %v; want %v %v", c.name, changed, failed, err, c.changed, c.failed)
		}
		if c.changed != strings.Contains(out.String(), "+++ /endpointslice/web-<new-1>") {
			t.Errorf("%s: stdout %q", c.name, out.String())
		}
		if c.failed != nil && errOut.String() != "error: service shop/a: forbidden\nerror: service shop/b: gone\n" {
			t.Errorf("%s: stderr %q", c.name, errOut.String())
		}
	}
}
