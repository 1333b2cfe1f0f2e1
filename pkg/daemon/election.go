package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/controller"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
)

// Lease configures leader election among replicas, with
// kube-controller-manager's meaning for each duration.
type Lease struct {
	Name, Namespace                           string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Fence, when set, is the fence around the client's writes (its Wrap
	// goes around the client's transport); the election keeps it. Nil
	// makes one that guards the Lease's release alone.
	Fence *Fence
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

	run   func()
	lease Lease

	mu        sync.Mutex
	releasing bool
	lost      bool
}

// newElection prepares the election; Start runs it.
func newElection(ctx context.Context, client kubernetes.Interface, l Lease, watchdog *leaderelection.HealthzAdaptor, metrics *controller.Metrics, report *controller.Reporter) (*election, error) {
	// client-go's elector retries a lock it may not use forever and says
	// so only in its logs: check the rights it needs once, up front.
	ctx0, cancel0 := context.WithTimeout(ctx, 30*time.Second)
	defer cancel0()
	ns := l.Namespace
	// get and update are asked of the Lease by name, since a Role may
	// grant them on it alone; create cannot be granted by name.
	denied, err := cluster.DeniedVerb(ctx0, client, coordinationv1.GroupName, "leases", ns, l.Name, "get")
	if err == nil && denied == "" {
		denied, err = cluster.DeniedVerb(ctx0, client, coordinationv1.GroupName, "leases", ns, "", "create")
	}
	if err == nil && denied == "" {
		denied, err = cluster.DeniedVerb(ctx0, client, coordinationv1.GroupName, "leases", ns, l.Name, "update")
	}
	if err != nil {
		return nil, &APIError{fmt.Errorf("leader election: %w", err)}
	}
	if denied != "" {
		return nil, &APIError{fmt.Errorf("forbidden: cannot %s leases.coordination.k8s.io in namespace %s (leader election on the Lease %s); `kubectl slices deploy` prints the RBAC the loop needs", denied, ns, l.Name)}
	}
	id := identity()
	fence := l.Fence
	if fence == nil {
		fence = NewFence(l.RenewDeadline)
	}
	lock := fence.Lock(&resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: l.Name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	})
	abort, lose := context.WithCancel(context.Background())
	// The elector logs through its context's logger, errors included.
	runCtx, stop := context.WithCancel(klog.NewContext(context.Background(),
		electionErrors(func(msg string) { report.Notice("", msg) })))
	e := &election{Leading: make(chan struct{}), Abort: abort, lose: lose, stop: stop, done: make(chan struct{}), lease: l}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, Name: "kubectl-slices",
		LeaseDuration: l.LeaseDuration, RenewDeadline: l.RenewDeadline, RetryPeriod: l.RetryPeriod,
		ReleaseOnCancel: true,
		WatchDog:        watchdog,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { close(e.Leading) },
			OnStoppedLeading: func() {
				fence.close()
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
					report.Notice("", printers.LeaseHeldBy(ns, l.Name, who))
				}
			},
		},
	})
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("leader election: %v", err)}
	}
	if watchdog != nil {
		watchdog.SetLeaderElection(le)
	}
	e.run = func() {
		report.Notice("", printers.ElectionLease(ns, l.Name, id))
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

// lostError is the loop's error once the lease was lost.
func (e *election) lostError() error {
	return &APIError{fmt.Errorf("lost the lease %s/%s (not renewed within %v): stopped writing; exiting so that a restart stands by again",
		e.lease.Namespace, e.lease.Name, e.lease.RenewDeadline)}
}
