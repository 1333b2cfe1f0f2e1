package cmd

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/daemon"
)

// LeaderFlags are sync --watch's flags for running in a cluster: leader
// election among replicas and the health/metrics endpoint.
type LeaderFlags = daemon.LeaderSettings

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
