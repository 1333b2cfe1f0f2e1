package e2e

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"sync"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
	"github.com/kubectl-slices/kubectl-slices/test/faultproxy"
)

// The fault tests (fault_*_test.go) put one fault at a time between real
// replicas of the loop and a control plane of their own, and judge the
// outcome only from what the API server recorded (its audit log) and
// serves, never from what the loop says about itself.

// loopNamespace holds the replicas' ServiceAccounts and their Lease:
// deploy's namespace, whose Role grants the Lease by name.
const loopNamespace = "kubectl-slices"

// faultCluster is ownCluster with the audit log on.
func faultCluster(t testing.TB, ctx context.Context, apiServerArgs ...string) *controlplane.ControlPlane {
	t.Helper()
	cp, err := controlplane.Start(ctx, controlplane.Options{AuditLog: true, APIServerArgs: apiServerArgs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	if err := createNodes(ctx, cp); err != nil {
		t.Fatal(err)
	}
	return cp
}

// grantLoopRights applies the RBAC `kubectl slices deploy` prints (its
// ClusterRole, and its Role for the Lease in loopNamespace) and binds each
// named ServiceAccount of loopNamespace to both: the replicas run with the
// rights a deployed loop has, no more, each under an identity of its own.
func grantLoopRights(t testing.TB, cp *controlplane.ControlPlane, names ...string) {
	t.Helper()
	ctx := context.Background()
	kubectl(t, cp, "apply", "-f", manifestFile(t, ofKinds(deployObjects(t, cp), rbacKinds...))).mustCode(t, 0)
	var subjects []rbacv1.Subject
	for _, n := range names {
		subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: loopNamespace, Name: n})
	}
	ref := func(kind, name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
	}
	if _, err := cp.Admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "fault-replicas"}, RoleRef: ref("ClusterRole", "kubectl-slices"), Subjects: subjects,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Admin.RbacV1().RoleBindings(loopNamespace).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "fault-replicas"}, RoleRef: ref("Role", "kubectl-slices-leader-election"), Subjects: subjects,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		waitAccess(t, cp, loopNamespace, n, "update", "discovery.k8s.io", "endpointslices", "", true)
	}
}

// faultReplica is one `kubectl slices sync --watch` as its own
// ServiceAccount, reaching the API server through its own proxy.
type faultReplica struct {
	replica
	Name  string
	User  string // as the API server authenticates it
	Proxy *faultproxy.Proxy
}

// startFaultReplica runs `kubectl slices ARGS... --health-addr ADDR
// --summary-interval=0` as the ServiceAccount loopNamespace/name (granted
// by grantLoopRights) through a new proxy. The cleanup stops the process
// before closing its proxy.
func startFaultReplica(t testing.TB, cp *controlplane.ControlPlane, name string, args ...string) *faultReplica {
	t.Helper()
	u, err := url.Parse(cp.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close) // registered first, so run after the process is killed
	kc, err := cp.ServiceAccountKubeconfig(context.Background(), loopNamespace, name, proxy.URL())
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	w := startWatch(t, cp, kc, append(args, "--health-addr", addr, "--summary-interval=0")...)
	return &faultReplica{replica: replica{w, addr}, Name: name, User: controlplane.ServiceAccountUser(loopNamespace, name), Proxy: proxy}
}

// electionFlags put a replica under leader election on deploy's Lease.
func electionFlags(lease, renew, retry time.Duration) []string {
	return []string{"--leader-elect", "--leader-elect-resource-namespace", loopNamespace,
		"--leader-elect-lease-duration", lease.String(), "--leader-elect-renew-deadline", renew.String(),
		"--leader-elect-retry-period", retry.String()}
}

// leaseHolder is the holder of deploy's Lease, "" when none or no Lease.
func leaseHolder(t testing.TB, cp *controlplane.ControlPlane) string {
	t.Helper()
	l, err := cp.Admin.CoordinationV1().Leases(loopNamespace).Get(context.Background(), "kubectl-slices", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return deref(l.Spec.HolderIdentity)
}

// auditLog is the audit log's events, in the order written.
type auditLog []controlplane.AuditEvent

func readAudit(t testing.TB, cp *controlplane.ControlPlane) auditLog {
	t.Helper()
	ev, err := cp.Audit()
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// auditUntil reads the audit log until cond holds of it, for at most
// auditLag, and returns the last read: the caller judges it as before. A
// write's effect is visible to readers once etcd commits it, but its
// ResponseComplete event is written when its handler returns, a moment
// later (longer on a loaded machine), so a test that has just seen the
// effect can read the log before the event is in it.
func auditUntil(t testing.TB, cp *controlplane.ControlPlane, cond func(auditLog) bool) auditLog {
	t.Helper()
	deadline := time.Now().Add(auditLag)
	for {
		a := readAudit(t, cp)
		if cond(a) || time.Now().After(deadline) {
			return a
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// auditLag bounds how long after a write's effect its audit event may come.
const auditLag = 5 * time.Second

// writes keeps the writes of resource by user (every user for ""), refused
// ones included: an attempt is what a fence must stop.
func (a auditLog) writes(user, resource string) auditLog {
	var out auditLog
	for _, e := range a {
		if (user == "" || e.User == user) && e.Resource == resource {
			out = append(out, e)
		}
	}
	return out
}

// succeeded keeps the writes the API server carried out.
func (a auditLog) succeeded() auditLog {
	var out auditLog
	for _, e := range a {
		if e.Code >= 200 && e.Code < 300 {
			out = append(out, e)
		}
	}
	return out
}

// receivedAfter keeps the writes that reached the API server at or after t.
func (a auditLog) receivedAfter(t time.Time) auditLog {
	var out auditLog
	for _, e := range a {
		if !e.Received.Before(t) {
			out = append(out, e)
		}
	}
	return out
}

// byReceived sorts a copy by arrival at the API server.
func (a auditLog) byReceived() auditLog {
	out := append(auditLog(nil), a...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Received.Before(out[j].Received) })
	return out
}

func (a auditLog) String() string {
	s := ""
	for _, e := range a {
		s += fmt.Sprintf("\n  %s..%s %s %s %s/%s %d", e.Received.Format("15:04:05.000000"), e.Time.Format("15:04:05.000000"),
			e.User, e.Verb, e.Namespace, e.Name, e.Code)
	}
	return s
}

// churnFlips flips a random Pod of the fleet every gap, from its own
// goroutine, until the function it returns is called (or the test ends);
// that waits for the last flip and returns how many were made.
func churnFlips(t testing.TB, f *fleet, gap time.Duration) (stop func() int) {
	quit, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	n := 0
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-time.After(gap):
			}
			if err := f.tryFlip(); err != nil {
				t.Errorf("churn: %v", err)
				return
			}
			n++
		}
	}()
	stop = func() int {
		once.Do(func() { close(quit) })
		<-done
		return n
	}
	t.Cleanup(func() { stop() }) // before the cluster stops, if the test ends early
	return stop
}

// tryFlip is fleet.flip of a random Service's random Pod, for a goroutine:
// the error is returned.
func (f *fleet) tryFlip() error {
	f.mu.Lock()
	svcs := sortedKeys(f.svcs)
	svc := svcs[f.r.Intn(len(svcs))]
	pods := sortedKeys(f.svcs[svc])
	p := f.svcs[svc][pods[f.r.Intn(len(pods))]]
	ready := !p.Ready
	f.mu.Unlock()
	if err := f.cp.SetPodReady(context.Background(), f.ns, p.Name, ready); err != nil {
		return fmt.Errorf("flip %s: %w", p.Name, err)
	}
	f.mu.Lock()
	p.Ready = ready
	f.mu.Unlock()
	return nil
}
