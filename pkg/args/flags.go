package args

import (
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// Size parses a flag's size (a quantity: 64Mi, 1Gi) into bytes; it must be
// positive.
func Size(flag, v string) (int64, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 {
		return 0, exit.Usagef("%s must be a positive size such as 64Mi, got %q", flag, v)
	}
	return q.Value(), nil
}

// Duration parses a flag's optional duration (90s, 5m): empty is none (0),
// anything else must be positive.
func Duration(flag, v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, exit.Usagef("%s must be a positive duration such as 90s or 5m, got %q", flag, v)
	}
	return d, nil
}

// Shared checks the flags every command shares: --color, --qps and --burst.
func Shared(color string, qps float32, burst int) error {
	switch color {
	case "auto", "always", "never":
	default:
		return exit.Usagef("--color must be auto, always or never, got %q", color)
	}
	if qps <= 0 || burst <= 0 {
		return exit.Usagef("--qps and --burst must be positive")
	}
	return nil
}

// DryRun checks a --dry-run value.
func DryRun(d apply.DryRun) error {
	switch d {
	case apply.DryRunNone, apply.DryRunClient, apply.DryRunServer:
		return nil
	}
	return exit.Usagef(`--dry-run must be "none", "client" or "server", got %q`, d)
}

// Namespace refuses a namespace no object can be in (-n 'BAD NS'), as a
// usage error before any request.
func Namespace(ns string) error {
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return exit.Usagef("%q is not a valid namespace: %s", ns, errs[0])
	}
	return nil
}

// Output checks an -o value against the formats a command prints; "" among
// them is the default (its output for people) and is not named.
func Output(got string, formats ...string) error {
	if slices.Contains(formats, got) {
		return nil
	}
	named := slices.DeleteFunc(slices.Clone(formats), func(f string) bool { return f == "" })
	list := named[len(named)-1]
	if len(named) > 1 {
		list = strings.Join(named[:len(named)-1], ", ") + " or " + list
	}
	return exit.Usagef("-o must be %s, got %q", list, got)
}
