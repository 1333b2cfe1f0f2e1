package daemon

import (
	"context"
	"errors"
	"os"
	"runtime/debug"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-slices/kubectl-slices/pkg/controller"
)

// TuneGC sets the garbage collector for a long-running cache, unless GOGC
// says otherwise. main tunes it for a short-lived run (collect rarely, up
// to 2 GiB); a long-running cache should hold little more than it keeps:
// GOGC=50 lets the heap grow half its live size between collections (make
// bench-watch: 20,000 Pods cached; GOGC=100 measured 244 MiB resident).
func TuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(50)
	}
}

// Scope sets the loop's scope from a sync selection, kept as a filter:
// Services named are keys in ns; otherwise -l (selector) picks by label,
// or --all ("") every Service, in ns or, with allNamespaces, everywhere.
// An invalid selector is returned as labels.Parse words it.
func Scope(loop *controller.Options, ns string, allNamespaces bool, names []string, selector string) error {
	loop.Namespace, loop.Names, loop.Selector = ns, nil, labels.Everything()
	if allNamespaces {
		loop.Namespace = metav1.NamespaceAll
	}
	if len(names) > 0 {
		loop.Names = map[string]bool{}
		for _, n := range names {
			loop.Names[ns+"/"+n] = true
		}
		loop.Namespace = ns
	}
	if selector != "" {
		sel, err := labels.Parse(selector)
		if err != nil {
			return err
		}
		loop.Selector = sel
	}
	return nil
}

// RunLoop is Run for the loop, which a signal stops: what the signal cut
// short while starting (a request, the caches filling) is no failure; a
// ConfigError or an APIError still is.
func RunLoop(ctx context.Context, cfg Config) error {
	err := Run(ctx, cfg)
	var ce *ConfigError
	var ae *APIError
	if err != nil && ctx.Err() != nil && !errors.As(err, &ce) && !errors.As(err, &ae) {
		return nil
	}
	return err
}
