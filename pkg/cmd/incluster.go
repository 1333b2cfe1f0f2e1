package cmd

import (
	"net"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/leaderelection"
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

// leaderFlagNames are the flags valid only with --watch.
var leaderFlagNames = []string{"leader-elect", "leader-elect-lease-duration", "leader-elect-renew-deadline",
	"leader-elect-retry-period", "leader-elect-resource-name", "leader-elect-resource-namespace", "health-addr"}

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
// changed which flags were set on the command line.
func validateLeader(changed func(string) bool, l LeaderFlags, watch bool) error {
	for _, name := range leaderFlagNames {
		if changed(name) && !watch {
			return usageError("--%s is valid only with --watch", name)
		}
	}
	if !l.Elect {
		for _, name := range leaderFlagNames[1:6] {
			if changed(name) {
				return usageError("--%s is valid only with --leader-elect", name)
			}
		}
	}
	switch {
	case l.LeaseDuration <= 0 || l.RenewDeadline <= 0 || l.RetryPeriod <= 0:
		return usageError("--leader-elect-lease-duration, --leader-elect-renew-deadline and --leader-elect-retry-period must be positive")
	case l.LeaseDuration <= l.RenewDeadline:
		return usageError("--leader-elect-lease-duration (%v) must be longer than --leader-elect-renew-deadline (%v)", l.LeaseDuration, l.RenewDeadline)
	case l.RenewDeadline <= time.Duration(leaderelection.JitterFactor*float64(l.RetryPeriod)):
		return usageError("--leader-elect-renew-deadline (%v) must be longer than %v times --leader-elect-retry-period (%v)", l.RenewDeadline, leaderelection.JitterFactor, l.RetryPeriod)
	case l.Elect && l.Name == "":
		return usageError("--leader-elect-resource-name must not be empty")
	}
	if l.HealthAddr != "" {
		if _, _, err := net.SplitHostPort(l.HealthAddr); err != nil {
			return usageError("--health-addr must be HOST:PORT (e.g. :8080): %v", err)
		}
	}
	return nil
}
