package args

import (
	"net/netip"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// Explain is what explain is asked about: one Service (svc/NAME), Pods
// (pod/NAME... or pod -l SELECTOR), or an address (--ip). IP and Selector
// are the flags'; Parse fills in the rest from the arguments.
type Explain struct {
	IP, Selector string
	// Names are the Services named (Validate wants one).
	Names []string
	// Pods are the Pods named; PodMode says Pods are explained (by name
	// or -l).
	Pods    []string
	PodMode bool
}

// Parse reads the arguments, Services named as sync names them (svc/NAME,
// NAME, svc NAME) and Pods as kubectl names them (pod/NAME, pod NAME); -l
// alone selects Pods.
func (e *Explain) Parse(argv []string) error {
	e.PodMode = NamesPods(argv) || (len(argv) == 0 && e.Selector != "")
	var err error
	switch {
	case e.PodMode && !(len(argv) == 1 && IsPodType(argv[0])):
		e.Pods, err = Pods(argv)
	case e.PodMode:
	case len(argv) > 1 || (len(argv) == 1 && !IsServiceType(argv[0])):
		e.Names, err = Services(argv)
	}
	return err
}

// Validate checks the argument against the flags that go with each form:
// allNamespaces is -A, showPods says --show-pods was given.
func (e Explain) Validate(allNamespaces, showPods bool) error {
	if e.PodMode || e.IP != "" {
		return e.validatePodOrIP(allNamespaces, showPods)
	}
	if e.Selector != "" || allNamespaces {
		return exit.Usagef("-l and -A go with pod/NAME and --ip; explain takes one Service: svc/NAME")
	}
	switch {
	case len(e.Names) == 0:
		return exit.Usagef("name the Service to explain: svc/NAME")
	case len(e.Names) > 1:
		return exit.Usagef("explain takes one Service, got %d: run it once per Service", len(e.Names))
	}
	return nil
}

// validatePodOrIP checks the flags of the Pod and address forms.
func (e Explain) validatePodOrIP(allNamespaces, showPods bool) error {
	if showPods {
		return exit.Usagef("--show-pods goes with svc/NAME")
	}
	if e.IP != "" {
		if e.PodMode || len(e.Names) > 0 || e.Selector != "" {
			return exit.Usagef("--ip takes no Service, Pod or -l: kubectl slices explain --ip ADDRESS")
		}
		if _, err := netip.ParseAddr(e.IP); err != nil {
			return exit.Usagef("--ip must be an IPv4 or IPv6 address such as 10.244.3.16 or fd00::10, got %s", english.QuoteClip(e.IP, english.ClipLen))
		}
		return nil
	}
	if allNamespaces {
		return exit.Usagef("-A goes with --ip; a Pod is named in one namespace (-n)")
	}
	switch {
	case len(e.Pods) > 0 && e.Selector != "":
		return exit.Usagef("name Pods or select them with -l, not both")
	case len(e.Pods) == 0 && e.Selector == "":
		return exit.Usagef("name the Pod to explain: pod/NAME, or pod -l SELECTOR")
	}
	if _, err := labels.Parse(e.Selector); err != nil {
		return exit.Usagef("-l %s is not a label selector: %s", english.QuoteClip(e.Selector, english.ClipLen), english.Clip(err.Error(), english.ClipLen))
	}
	return nil
}
