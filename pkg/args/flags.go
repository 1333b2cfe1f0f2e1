package args

import (
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
