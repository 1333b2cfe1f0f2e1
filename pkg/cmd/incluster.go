package cmd

import (
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/daemon"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// LeaderFlags are sync --watch's flags for running in a cluster: leader
// election among replicas and the health/metrics endpoint.
type LeaderFlags struct {
	Elect         bool
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	Name          string
	Namespace     string
	HealthAddr    string
}

// watchOnlyFlags are valid only with --watch; leaseFlags only with
// --leader-elect as well.
var (
	leaseFlags     = []string{"leader-elect-lease-duration", "leader-elect-renew-deadline", "leader-elect-retry-period", "leader-elect-resource-name", "leader-elect-resource-namespace"}
	watchOnlyFlags = append([]string{"leader-elect", "health-addr", "batch-period", "summary-interval", "concurrent-syncs"}, leaseFlags...)
)

func addLeaderFlags(cmd *cobra.Command, l *LeaderFlags) {
	f := cmd.Flags()
	f.BoolVar(&l.Elect, "leader-elect", false, "With --watch: take a coordination.k8s.io Lease before writing, so that of several replicas one writes and the others stand by with warm caches")
	// kube-controller-manager's defaults.
	f.DurationVar(&l.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "With --leader-elect: how long a standby waits after the last renewal before taking the lease")
	f.DurationVar(&l.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "With --leader-elect: how long the leader keeps retrying a renewal before it gives up leading (and exits)")
	f.DurationVar(&l.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "With --leader-elect: how often to try to take or renew the lease")
	f.StringVar(&l.Name, "leader-elect-resource-name", "kubectl-slices", "With --leader-elect: the name of the Lease")
	f.StringVar(&l.Namespace, "leader-elect-resource-namespace", "", "With --leader-elect: the namespace of the Lease (default: the namespace the process runs in: its ServiceAccount's in a Pod, else the kubeconfig's or -n)")
	f.StringVar(&l.HealthAddr, "health-addr", "", "With --watch: serve /healthz, /readyz and /metrics on HOST:PORT (e.g. :8080; empty: off)")
}

// validateLeader checks the in-cluster flags; watch says --watch was given,
// changed which flags were set on the command line. The lease's durations
// are the election's to judge (daemon.Lease.Validate).
func validateLeader(changed func(string) bool, l LeaderFlags, watch bool) error {
	for _, name := range watchOnlyFlags {
		if changed(name) && !watch {
			return exit.Usagef("--%s is valid only with --watch", name)
		}
	}
	for _, name := range leaseFlags {
		if changed(name) && !l.Elect {
			return exit.Usagef("--%s is valid only with --leader-elect", name)
		}
	}
	if err := l.lease("").Validate(); err != nil {
		return &exit.Error{Code: exit.Usage, Err: err}
	}
	if l.HealthAddr != "" {
		if _, _, err := net.SplitHostPort(l.HealthAddr); err != nil {
			return exit.Usagef("--health-addr must be HOST:PORT (e.g. :8080): %v", err)
		}
	}
	return nil
}

// lease is the election's configuration; ns is the Lease's namespace when
// --leader-elect-resource-namespace is not given.
func (l LeaderFlags) lease(ns string) *daemon.Lease {
	if l.Namespace != "" {
		ns = l.Namespace
	}
	return &daemon.Lease{Name: l.Name, Namespace: ns, LeaseDuration: l.LeaseDuration, RenewDeadline: l.RenewDeadline, RetryPeriod: l.RetryPeriod}
}
