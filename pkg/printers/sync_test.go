package printers

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/outcome"
)

func syncRuns() []outcome.Outcome {
	made := &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"}}
	cut := &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api-1"}}
	return []outcome.Outcome{
		{Namespace: "shop", Name: "web", Held: "kube-controller-manager's slices are current", Result: outcome.Result{Created: []*discovery.EndpointSlice{made}}},
		{Namespace: "shop", Name: "api", Err: errors.New("service shop/api: interrupted"), Result: outcome.Result{Created: []*discovery.EndpointSlice{cut}}},
	}
}

// Without -o the summary is on stdout; with -o it moves to stderr and
// stdout holds only the objects.
func TestSyncReportStreams(t *testing.T) {
	for _, output := range []string{"", "name"} {
		var out, errOut bytes.Buffer
		r := NewSyncReport(&out, &errOut, "never", output, outcome.DryRunNone)
		runs, written := r.Slices(syncRuns(), false)
		if err := r.Done(runs, written); err != nil {
			t.Fatal(err)
		}
		summary, objects := &out, &out
		if output == "" {
			objects = nil
		} else {
			summary = &errOut
		}
		if !strings.Contains(summary.String(), "service shop/web not written") {
			t.Errorf("-o %q: no summary in %q", output, summary.String())
		}
		if objects != nil && objects.String() != "endpointslice.discovery.k8s.io/web-1 created\nendpointslice.discovery.k8s.io/api-1 created\n" {
			t.Errorf("-o %q: stdout %q", output, objects.String())
		}
		if !strings.Contains(errOut.String(), "error: service shop/api: interrupted\n  service shop/api: 1 writes happened before the failure:") {
			t.Errorf("-o %q: no failure on stderr: %q", output, errOut.String())
		}
	}
}

// An interrupted run says what each cut Service wrote and keeps it among
// the objects, but neither summarises nor reports it as a failure.
func TestSyncReportInterrupted(t *testing.T) {
	var out, errOut bytes.Buffer
	r := NewSyncReport(&out, &errOut, "never", "", outcome.DryRunNone)
	runs, written := r.Slices(syncRuns(), true)
	if len(runs) != 1 || len(written) != 2 {
		t.Errorf("%d runs, %d written; want the finished one and both writes", len(runs), len(written))
	}
	_ = r.Done(runs, written)
	if !strings.Contains(errOut.String(), "service shop/api: interrupted after 1 created") || strings.Contains(errOut.String(), "error:") {
		t.Errorf("stderr %q", errOut.String())
	}
}

// An Endpoints line goes where the summary goes; its failure to stderr.
func TestSyncReportEndpoints(t *testing.T) {
	var out, errOut bytes.Buffer
	r := NewSyncReport(&out, &errOut, "never", "json", outcome.DryRunNone)
	r.Endpoints("shop", "web", outcome.EndpointsOutcome{Err: errors.New("refused")}, errors.New("endpoints shop/web: refused"))
	if out.Len() != 0 || !strings.HasSuffix(errOut.String(), "error: endpoints shop/web: refused\n") {
		t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
	}
}
