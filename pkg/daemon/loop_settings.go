package daemon

import (
	"fmt"
	"time"

	"github.com/kubectl-slices/kubectl-slices/pkg/controller"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/standby"
)

// LoopSettings are sync's --watch settings as the command line gives them;
// errors name the flags.
type LoopSettings struct {
	Watch           bool
	BatchPeriod     time.Duration
	SummaryInterval time.Duration
	Workers         int
	// Standby: write a Service's slices only once kube-controller-manager
	// has failed it for TakeoverAfter; hand them back after HandbackHold.
	Standby       bool
	TakeoverAfter time.Duration
	HandbackHold  time.Duration
}

// Defaults of --takeover-after and --handback-hold; docs/in-cluster.md
// explains the threshold from measurements of the controller's lag under
// churn.
const (
	DefaultTakeoverAfter = 5 * time.Second
	DefaultHandbackHold  = 30 * time.Second
)

// ValidateStandby checks that --standby's flags go together: changed says
// which flags were set on the command line, managedBy is the run's value.
func (w LoopSettings) ValidateStandby(changed func(string) bool, managedBy string) error {
	switch {
	case (changed("takeover-after") || changed("handback-hold")) && !w.Standby:
		return fmt.Errorf("--takeover-after and --handback-hold tune --standby: add --standby")
	case w.Standby && !w.Watch:
		return fmt.Errorf("--standby stands by beside kube-controller-manager in the watch loop: add --watch")
	case w.Standby && len(reconcile.OurValues(managedBy)) > 1:
		return fmt.Errorf("--standby stands by beside kube-controller-manager, and --managed-by %s is its own value: drop one of them", managedBy)
	}
	return nil
}

// ValidateSync checks sync's flags that concern the loop, in this order:
// the in-cluster flags (LeaderSettings.Validate), --standby's, the
// webhook's (served from the loop alone), and, with --watch, --dry-run and
// -o, which the loop cannot honour, and the loop's numbers. changed says
// which flags were set on the command line (nil: none), dryRun that
// --dry-run is not "none", output is -o's value.
func (w LoopSettings) ValidateSync(changed func(string) bool, l LeaderSettings, hook WebhookSettings, managedBy string, dryRun bool, output string) error {
	if changed == nil {
		changed = func(string) bool { return false }
	}
	if err := l.Validate(changed, w.Watch); err != nil {
		return err
	}
	if err := w.ValidateStandby(changed, managedBy); err != nil {
		return err
	}
	if !w.Watch {
		if hook.Addr != "" || hook.CertFile != "" || hook.KeyFile != "" || hook.ClientCAFile != "" {
			return fmt.Errorf("--webhook-addr and the TLS flags serve the webhook from the watch loop: add --watch, or run 'kubectl slices webhook'")
		}
		return nil
	}
	if err := hook.Validate(false); err != nil {
		return err
	}
	switch {
	case dryRun:
		return fmt.Errorf("--watch writes; it cannot be combined with --dry-run")
	case output != "" && output != "json":
		return fmt.Errorf("with --watch, -o may only be json (one object per line)")
	}
	return w.ValidateLoop()
}

// ValidateLoop checks the loop's numbers, with --watch.
func (w LoopSettings) ValidateLoop() error {
	switch {
	case w.BatchPeriod < 0 || w.SummaryInterval < 0:
		return fmt.Errorf("--batch-period and --summary-interval must not be negative")
	case w.Workers < 1:
		return fmt.Errorf("--concurrent-syncs must be at least 1")
	case w.Standby && (w.TakeoverAfter <= 0 || w.HandbackHold < 0):
		return fmt.Errorf("--takeover-after must be positive and --handback-hold not negative")
	}
	return nil
}

// Apply sets the loop's batching, workers, summary and standby from the
// settings; managedBy is the run's value.
func (w LoopSettings) Apply(loop *controller.Options, managedBy string) {
	loop.BatchPeriod, loop.Workers, loop.SummaryInterval = w.BatchPeriod, w.Workers, w.SummaryInterval
	if w.Standby {
		loop.Standby = &standby.Config{TakeoverAfter: w.TakeoverAfter, HandbackHold: w.HandbackHold, ManagedBy: managedBy}
	}
}
