package exit

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An admission webhook's denial is a 403 Forbidden too; the user reads its
// message (what to run instead), not advice to ask for RBAC.
func TestDescribeAdmissionDenial(t *testing.T) {
	msg := `admission webhook "endpointslices.kubectl-slices.io" denied the request: endpointslice web-x is managed by kubectl-slices [refused for admin (field manager kubectl-slices)]`
	denied := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden, Message: msg}}
	got := Describe("shop", "web", denied).Error()
	if !strings.Contains(got, "denied the request: endpointslice web-x is managed by kubectl-slices") || strings.Contains(got, "RBAC") {
		t.Errorf("webhook denial described as %q", got)
	}
	rbac := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden,
		Message: `endpointslices.discovery.k8s.io is forbidden: User "bob" cannot create resource "endpointslices" in API group "discovery.k8s.io" in the namespace "shop"`,
		Details: &metav1.StatusDetails{Kind: "endpointslices", Group: "discovery.k8s.io"}}}
	if got := Describe("shop", "web", rbac).Error(); !strings.Contains(got, "cannot create endpointslices.discovery.k8s.io") || !strings.Contains(got, "RBAC") {
		t.Errorf("RBAC denial described as %q", got)
	}
	if code := Code(Describe("shop", "web", denied)); code != API {
		t.Errorf("exit %d, want %d", code, API)
	}
}

// Names holding control characters are quoted; plain ones are not.
func TestQuote(t *testing.T) {
	for in, want := range map[string]string{"web": "web", "a\nb": `"a\nb"`, "a\rb": `"a\rb"`, "": ""} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
	if got := Describe("shop", "a\nb", errors.New("boom")).Error(); strings.Contains(got, "\n") {
		t.Errorf("a newline in a name broke the line: %q", got)
	}
}

// Changes exit 1 with nothing more printed; no change is no error.
func TestChangesIf(t *testing.T) {
	if err := ChangesIf(false); err != nil {
		t.Errorf("no change: %v", err)
	}
	err := ChangesIf(true)
	if Code(err) != Changes || !errors.Is(err, ErrPrinted) {
		t.Errorf("a change: %v (exit %d), want exit %d with its output printed", err, Code(err), Changes)
	}
}
