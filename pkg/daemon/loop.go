package daemon

import (
	"context"
	"errors"
	"os"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-slices/kubectl-slices/pkg/controller"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// tuneGC sets the garbage collector for a long-running cache, unless GOGC
// says otherwise. main tunes it for a short-lived run (collect rarely, up
// to 2 GiB); a long-running cache should hold little more than it keeps:
// GOGC=50 lets the heap grow half its live size between collections (make
// bench-watch: 20,000 Pods cached; GOGC=100 measured 244 MiB resident).
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(50)
	}
}

// Scope sets the loop's scope from a command's selection, kept as a
// filter: Services named are keys in its namespace; otherwise its parsed
// selector (-l) picks by label, or none (--all) every Service, in the
// namespace or, with -A, everywhere.
func Scope(loop *controller.Options, sel syncer.Selection) {
	loop.Namespace, loop.Names, loop.Selector = sel.Listed(), nil, labels.Everything()
	if len(sel.Names) > 0 {
		loop.Names = map[string]bool{}
		for _, n := range sel.Names {
			loop.Names[sel.Namespace+"/"+n] = true
		}
	}
	if sel.Labels != nil {
		loop.Selector = sel.Labels
	}
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
