package cmd

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/probe"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

func TestVerifyExitCodes(t *testing.T) {
	for s, want := range map[verdict.Status]int{verdict.OK: 0, verdict.Drift: 1, verdict.Pending: 6, verdict.Unknown: 6} {
		if got := exit.Code(verifyExit(s)); got != want {
			t.Errorf("%s: exit %d, want %d", s, got, want)
		}
	}
}

// The probe's errors are worded here, as every command words them.
func TestVerifyErrorWording(t *testing.T) {
	ctx := context.Background()
	nf := apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, "nope")
	err := verifyError(ctx, &probe.ReadError{Namespace: "shop", Name: "nope", Err: nf})
	if exit.Code(err) != exit.NotFound || !strings.Contains(err.Error(), "service shop/nope not found") {
		t.Errorf("a target not found: exit %d, %v", exit.Code(err), err)
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New(`User "u" cannot list resource "nodes"`))
	// About no one Service (the Nodes, or several Services' shared read):
	// the API server's words, not a Service's nor a namespace's.
	if err := verifyError(ctx, &probe.ReadError{Err: forbidden}); exit.Code(err) != exit.API || strings.Contains(err.Error(), "services") {
		t.Errorf("the Nodes forbidden: exit %d, %v", exit.Code(err), err)
	}
	err = verifyError(ctx, &probe.NodeNotFoundError{Name: "n-x"})
	if exit.Code(err) != exit.NotFound || err.Error() != `node "n-x" not found: check the name (kubectl get nodes lists them)` {
		t.Errorf("a --node not found: exit %d, %v", exit.Code(err), err)
	}
	if err := verifyError(ctx, context.Canceled); exit.Code(err) != 130 {
		t.Errorf("interrupted while settling: exit %d, %v", exit.Code(err), err)
	}
}

// The watch's flags are refused, before any request, where they mean
// nothing or contradict the watch.
func TestVerifyWatchFlagErrors(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	w := []string{"verify", "--all", "--watch"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "--all", "--interval", "1m"}, "--interval is valid only with --watch"},
		{[]string{"verify", "--all", "--health-addr", ":8080"}, "--health-addr is valid only with --watch"},
		{append(w, "-o", "json"), "-o is not valid with --watch"},
		{append(w, "--settle"), "--settle is not valid with --watch"},
		{append(w, "--interval", "10s"), "--interval (10s) must be at least --sync-period (30s)"},
		{append(w, "--health-addr", "8080"), "--health-addr must be HOST:PORT"},
		{append(w, "--node", "n-a"), "--node is not valid with --watch"},
		{append(w, "--node", ""), "--node has an empty name"},
		{[]string{"verify", "--all", "--node", "n-a,,n-b"}, "--node has an empty name"},
		{[]string{"verify", "--all", "--node="}, "--node has an empty name"},
	} {
		_, errOut, code := runCmd(t, c.args...)
		if code != exit.Usage || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q on one line", c.args, code, errOut, exit.Usage, c.want)
		}
	}
}

// The next command a report suggests keeps the nodes --node named.
func TestVerifyWordsKeepTheNodes(t *testing.T) {
	sel := syncer.Selection{Namespace: "shop"}
	if got := verifyWords([]string{"svc/web"}, sel, []string{"n-a", "n-b"}); got != "svc/web --node n-a,n-b -n shop" {
		t.Errorf("got %q", got)
	}
	if got := verifyWords([]string{"svc/web"}, sel, nil); got != "svc/web -n shop" {
		t.Errorf("without --node: got %q", got)
	}
}
