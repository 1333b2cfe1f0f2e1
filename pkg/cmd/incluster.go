package cmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/controller"
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

// identity is this replica's name in the Lease: hostname (the Pod's name
// in a cluster) and a random suffix, so two processes on one host differ.
func identity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "kubectl-slices"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "_" + hex.EncodeToString(b)
}

// election runs the leader election beside the controller. Leading is
// closed once the lease is held; Abort is cancelled if it is lost, when
// writing must stop at once. Release gives the lease up after the
// controller stopped, so a standby takes over at once rather than after the
// lease duration.
type election struct {
	Leading chan struct{}
	Abort   context.Context
	lose    context.CancelFunc
	stop    context.CancelFunc
	done    chan struct{}

	run  func()
	name string // namespace/name of the Lease

	mu        sync.Mutex
	releasing bool
	lost      bool
}

// newElection prepares the election; Start runs it.
func newElection(ctx context.Context, client kubernetes.Interface, l LeaderFlags, ns string, watchdog *leaderelection.HealthzAdaptor, metrics *controller.Metrics, report *controller.Reporter) (*election, error) {
	// client-go's elector retries a lock it may not use forever and says
	// so only in its logs: check the rights it needs once, up front.
	ctx0, cancel0 := context.WithTimeout(ctx, 30*time.Second)
	defer cancel0()
	denied, err := deniedVerb(ctx0, client, coordinationv1.GroupName, "leases", ns, "", "get", "create", "update")
	if err != nil {
		return nil, &ExitError{Code: ExitAPI, Err: fmt.Errorf("leader election: %w", err)}
	}
	if denied != "" {
		return nil, &ExitError{Code: ExitAPI, Err: fmt.Errorf("forbidden: cannot %s leases.coordination.k8s.io in namespace %s (leader election on the Lease %s); `kubectl slices deploy` prints the RBAC the loop needs", denied, ns, l.Name)}
	}
	id := identity()
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: l.Name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	abort, lose := context.WithCancel(context.Background())
	runCtx, stop := context.WithCancel(context.Background())
	e := &election{Leading: make(chan struct{}), Abort: abort, lose: lose, stop: stop, done: make(chan struct{}), name: ns + "/" + l.Name}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, Name: "kubectl-slices",
		LeaseDuration: l.LeaseDuration, RenewDeadline: l.RenewDeadline, RetryPeriod: l.RetryPeriod,
		ReleaseOnCancel: true,
		WatchDog:        watchdog,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { close(e.Leading) },
			OnStoppedLeading: func() {
				e.mu.Lock()
				defer e.mu.Unlock()
				if !e.releasing {
					e.lost = true
					metrics.SetLeader(false)
					lose()
				}
			},
			OnNewLeader: func(who string) {
				if who != id {
					report.Notice("", fmt.Sprintf("lease %s/%s is held by %s", ns, l.Name, who))
				}
			},
		},
	})
	if err != nil {
		return nil, usageError("leader election: %v", err)
	}
	if watchdog != nil {
		watchdog.SetLeaderElection(le)
	}
	e.run = func() {
		report.Notice("", fmt.Sprintf("leader election: lease %s/%s as %s", ns, l.Name, id))
		go func() {
			defer close(e.done)
			le.Run(runCtx)
		}()
	}
	return e, nil
}

// Start begins campaigning for the lease.
func (e *election) Start() { e.run() }

// Release stops the election and, if leading, gives the lease up; it
// reports whether leadership had been lost before.
func (e *election) Release() (lost bool) {
	e.mu.Lock()
	e.releasing = !e.lost
	lost = e.lost
	e.mu.Unlock()
	e.stop()
	select {
	case <-e.done:
	case <-time.After(5 * time.Second): // the release is best effort
	}
	e.lose()
	return lost
}

// deniedVerb returns the first of verbs the caller may not do on a
// resource in namespace ("" for all), or "" when all are allowed.
func deniedVerb(ctx context.Context, client kubernetes.Interface, group, resource, namespace, name string, verbs ...string) (string, error) {
	for _, verb := range verbs {
		ok, err := cluster.Allowed(ctx, client, verb, group, resource, namespace, name)
		if err != nil {
			return "", err
		}
		if !ok {
			return verb, nil
		}
	}
	return "", nil
}
