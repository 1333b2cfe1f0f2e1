package cmd

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// A run over several Services: all synced is 0, some failed is 1, all
// failed is the first failure's own code.
func TestForOutcomes(t *testing.T) {
	notFound := exit.Describe("shop", "a", apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, "a"))
	conflict := &exit.Error{Code: exit.Conflicts, Err: errors.New("changed")}
	ok := syncer.Outcome{Namespace: "shop", Name: "ok"}
	cases := []struct {
		runs []syncer.Outcome
		want int
	}{
		{nil, exit.OK},
		{[]syncer.Outcome{ok, ok}, exit.OK},
		{[]syncer.Outcome{ok, {Err: notFound}}, exit.Changes},
		{[]syncer.Outcome{{Err: notFound}, {Err: conflict}}, exit.NotFound},
		{[]syncer.Outcome{{Err: conflict}, {Err: notFound}}, exit.Conflicts},
	}
	for i, c := range cases {
		if got := exit.Code(forOutcomes(c.runs)); got != c.want {
			t.Errorf("case %d: exit %d, want %d", i, got, c.want)
		}
	}
}

// Each failure is worded with its Service; a success stays as it was.
func TestDescribed(t *testing.T) {
	lost := apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, "a")
	outs := []syncer.Outcome{{Namespace: "shop", Name: "ok"}, {Namespace: "shop", Name: "a", Err: lost}}
	got := described(outs)
	if got[0].Err != nil {
		t.Errorf("a success gained an error: %v", got[0].Err)
	}
	if want := exit.Describe("shop", "a", lost).Error(); got[1].Err == nil || got[1].Err.Error() != want {
		t.Errorf("failure worded %v, want %q", got[1].Err, want)
	}
	if exit.Code(got[1].Err) != exit.NotFound {
		t.Errorf("exit %d, want %d", exit.Code(got[1].Err), exit.NotFound)
	}
	if outs[1].Err != lost {
		t.Errorf("the outcomes passed in were changed")
	}
}
