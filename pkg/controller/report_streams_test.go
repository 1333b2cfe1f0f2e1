package controller

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// As text, errors and a lost connection go to stderr and what was done to
// stdout; as JSON everything is one stream.
func TestReporterStreams(t *testing.T) {
	var out, errOut bytes.Buffer
	r := NewReporter(&out, &errOut, false)
	r.Notice("shop/web", "kube-controller-manager's slices exist and are current")
	r.Error("shop/web", errors.New("forbidden"))
	r.Summary(0)
	if !strings.Contains(errOut.String(), "error: service shop/web: forbidden") || strings.Contains(out.String(), "forbidden") {
		t.Fatalf("error on the wrong stream:\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "current") || !strings.Contains(out.String(), "summary:") || strings.Contains(errOut.String(), "summary") {
		t.Fatalf("notice or summary on the wrong stream:\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}

	out.Reset()
	errOut.Reset()
	r = NewReporter(&out, &errOut, true)
	r.Error("shop/web", errors.New("forbidden"))
	if errOut.Len() != 0 || !strings.Contains(out.String(), `"type":"error"`) {
		t.Fatalf("JSON lines must all go to stdout:\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
}
