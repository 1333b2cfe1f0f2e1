package exit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The exit codes, the one table of them: Help words it for the commands'
// help and the README repeats it.
const (
	OK        = 0 // done; for diff and explain: no changes, no drift
	Changes   = 1 // diff/explain: changes or drift; sync: some Services failed, others synced
	Usage     = 2 // bad flag value or argument (nothing was read or written)
	NotFound  = 3 // a Service (or namespace, or explain's Pod or address) was not found
	API       = 4 // the API refused or failed: Forbidden, unreachable, namespace terminating, timeouts
	Conflicts = 5 // slices kept changing under us; retries ran out
	// NotVerified: verify could not verify some node (UNKNOWN) or some
	// node is still behind the slices (PENDING), and none drifts.
	NotVerified = 6
	// Interrupted is 128+SIGINT, the shell's code for a command stopped
	// by Ctrl-C; SIGTERM gives 128+15.
	Interrupted = 130
)

// Help is the exit-code table for a command's help.
const Help = `Exit codes:

* 0: success; for diff and explain: in sync (explain pod/--ip: published as desired everywhere)
* 1: diff/explain: changes needed or drift found (explain pod/--ip: or not published where selected); check: findings; release: a hand-back was refused; sync: some Services failed while others synced; verify: a node's proxy drifts from the slices, or the slices from their plan
* 2: usage error: bad flag value, invalid selector, an argument that is not a Service
* 3: a Service was not found (explain: the Pod, or an address no Pod holds and nothing publishes; verify --node: a node)
* 4: the API server refused or failed: Forbidden, unreachable, namespace terminating; sync --watch --leader-elect: the lease was lost
* 5: the slices kept changing during sync and retries ran out
* 6: verify: some node could not be verified (UNKNOWN) or has not synced since the slices changed (PENDING), and none drifts
* 130: interrupted (Ctrl-C; 143 for SIGTERM); a second Ctrl-C exits at once`

// Error carries an exit code with its message.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Usagef is a usage error (exit 2): bad input, found before any request.
func Usagef(format string, a ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, a...)}
}

// ErrPrinted marks an error whose message was already shown: main prints
// nothing more and exits with its code.
var ErrPrinted = errors.New("")

// ChangesIf is exit 1 (Changes) when changed, after output that already
// says what differs; nil otherwise. diff, explain, check and release end
// with it.
func ChangesIf(changed bool) error {
	if changed {
		return &Error{Code: Changes, Err: ErrPrinted}
	}
	return nil
}

// InterruptedError is the cause of a command context cancelled by a signal:
// main sets it, and whatever error a command then returns is reported as the
// interrupt, not as the request the signal cut short.
type InterruptedError struct{ Signal syscall.Signal }

func (e *InterruptedError) Error() string { return "interrupted" }

// Code is the shell's convention: 128 + the signal number.
func (e *InterruptedError) Code() int { return 128 + int(e.Signal) }

// FromSignal is the error for work stopped because ctx ended: the signal
// main recorded, or a plain interrupt.
func FromSignal(ctx context.Context) error {
	var ie *InterruptedError
	if errors.As(context.Cause(ctx), &ie) {
		return ie
	}
	return &InterruptedError{Signal: syscall.SIGINT}
}

// InterruptWins reports a command's error as the interrupt once ctx was
// cancelled by a signal: whatever failed then failed because of it, and the
// user hears so once, not as the request it cut short ("cannot reach the API
// server").
func InterruptWins(ctx context.Context, err error) error {
	var ie *InterruptedError
	if err != nil && errors.As(context.Cause(ctx), &ie) {
		return ie
	}
	return err
}

// Code maps an error to the documented exit code.
func Code(err error) int {
	if err == nil {
		return OK
	}
	var ie *InterruptedError
	if errors.As(err, &ie) {
		return ie.Code()
	}
	var ee *Error
	if errors.As(err, &ee) {
		return ee.Code
	}
	// cobra's own complaints about the command line.
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires ", "invalid argument"} {
		if strings.HasPrefix(err.Error(), p) {
			return Usage
		}
	}
	return classify(err)
}

// classify maps the class an error carries (apply's conflicts and
// terminating namespaces) or the API server's status to a code.
func classify(err error) int {
	switch {
	case find(err, ClassConflict) != nil:
		return Conflicts
	case find(err, ClassNamespaceTerminating) != nil:
		return API
	case apierrors.IsNotFound(err):
		return NotFound
	}
	return API
}

// Describe turns an error about one Service into the one line a user sees:
// what failed, on which object, and what to do.
func Describe(ns, name string, err error) error {
	obj := fmt.Sprintf("service %s/%s", Quote(ns), Quote(name))
	switch {
	case name == "" && ns == "":
		obj = "services in all namespaces"
	case name == "":
		obj = "services in namespace " + Quote(ns)
	}
	var status apierrors.APIStatus
	switch {
	case errors.Is(err, context.Canceled):
		return &InterruptedError{Signal: syscall.SIGINT}
	case find(err, ClassNamespaceTerminating) != nil:
		return &Error{API, fmt.Errorf("%s: namespace %s is terminating: no EndpointSlices can be created in it", obj, ns)}
	case find(err, ClassConflict) != nil:
		return &Error{Conflicts, fmt.Errorf("%s: its EndpointSlices kept changing while syncing (is another controller writing them?); run again", obj)}
	case apierrors.IsNotFound(err):
		return &Error{NotFound, fmt.Errorf("%s not found: check the name and the namespace (-n NAMESPACE; kubectl get services -A lists every namespace's)", obj)}
	case apierrors.IsForbidden(err) && errors.As(err, &status) && !rbacDenial(status.Status().Message):
		// Refused by admission (a webhook such as our own EndpointSlice
		// guard, a quota), not by RBAC: its message says why and what to do.
		return &Error{API, fmt.Errorf("%s: refused by the API server: %s", obj, status.Status().Message)}
	case apierrors.IsForbidden(err) && errors.As(err, &status):
		d := status.Status().Details
		what := "the request"
		if d != nil {
			what = d.Kind
			if d.Group != "" {
				what += "." + d.Group
			}
		}
		verb := forbiddenVerb(status.Status().Message)
		where, scope := "in namespace "+ns, "-n "+ns
		if ns == "" {
			where, scope = "in all namespaces", "-A"
		}
		return &Error{API, fmt.Errorf("%s: forbidden: cannot %s %s %s; ask for RBAC that allows it (kubectl auth can-i %s %s %s)",
			obj, verb, what, where, verb, what, scope)}
	case isUnreachable(err):
		return &Error{API, fmt.Errorf("%s: %s", obj, unreachable(err))}
	}
	return &Error{classify(err), fmt.Errorf("%s: %w", obj, err)}
}

// rbacDenial tells the authorizer's Forbidden (`User "u" cannot create
// resource "endpointslices" ...`) from an admission denial, which is also a
// 403 Forbidden but says why in its own words.
func rbacDenial(msg string) bool {
	return strings.Contains(msg, " cannot ") && strings.Contains(msg, ` resource "`)
}

// forbiddenVerb reads the verb out of the API server's Forbidden message
// (`... cannot create resource "endpointslices" ...`).
func forbiddenVerb(msg string) string {
	if i := strings.Index(msg, "cannot "); i >= 0 {
		if f := strings.Fields(msg[i+len("cannot "):]); len(f) > 0 {
			return f[0]
		}
	}
	return "access"
}

func isUnreachable(err error) bool {
	var ue *url.Error
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ue) || errors.As(err, &oe) || (errors.As(err, &ne) && ne.Timeout()) ||
		errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "connection refused")
}

// unreachable words a connection failure: the server it tried (the address
// is often lost in the innermost error, as in "connection refused"), the
// cause, and what to check.
func unreachable(err error) string {
	at := ""
	if server := serverOf(err); server != "" {
		at = " at " + server
	}
	return fmt.Sprintf("cannot reach the API server%s: %v; check --kubeconfig, --context and the network", at, rootCause(err))
}

// serverOf is host:port of the request that failed: client-go wraps every
// transport error in a *url.Error carrying the request's URL.
func serverOf(err error) string {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return ""
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil {
		return ""
	}
	return u.Host
}

// Quote is s as it is when it is plain printable text, else Go-quoted, so
// that an error naming it stays one line whatever the name holds.
func Quote(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
