package args

import (
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// ManagedBy checks a --managed-by value as the API server checks a label
// value, so a bad one is a usage error before any request.
func ManagedBy(v string) error {
	if v == "" {
		return exit.Usagef("--managed-by must not be empty")
	}
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		return exit.Usagef("--managed-by %s is not a valid label value: %s", english.QuoteClip(v, english.ClipLen), errs[0])
	}
	return nil
}

// ForceNeeded explains why writing under the controllers' own managed-by
// values needs --force: the slice controllers' values, and the Endpoints
// controller's mark, which --managed-by also sets on the Endpoints objects
// sync --with-endpoints writes (an object carrying it is the controller's,
// and writing under it would rewrite the controller's own objects). It is
// nil for any other value.
func ForceNeeded(managedBy string) error {
	who, what := map[string]string{
		reconcile.ControllerManagedBy: "kube-controller-manager's EndpointSlice controller",
		reconcile.MirroringManagedBy:  "kube-controller-manager's EndpointSlice mirroring controller",
		endpoints.ControllerManagedBy: "kube-controller-manager's Endpoints controller",
	}[managedBy], "the slices"
	if who == "" {
		return nil
	}
	if managedBy == endpoints.ControllerManagedBy {
		what = "the Endpoints objects"
	}
	return exit.Usagef("refusing to write under managed-by %q: %s owns that value and would fight kubectl-slices over %s; use the default (%s), or pass --force if that controller is off for good",
		managedBy, who, what, reconcile.DefaultManagedBy)
}
