package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	discoveryclient "k8s.io/client-go/kubernetes/typed/discovery/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// slice is a slice of svc/web as read from the API server.
func slice(name, managedBy string) *discovery.EndpointSlice {
	return testutil.NewSlice("shop", name).Service("web").ManagedBy(managedBy).ResourceVersion("7").UID("u-" + name).Build()
}

func opts(d DryRun) Options {
	return Options{ManagedBy: reconcile.DefaultManagedBy, FieldManager: "kubectl-slices", DryRun: d, Workers: 4}
}

// Phases run creates, then updates, then deletes, with preconditions.
func TestApplyOrderAndPreconditions(t *testing.T) {
	live := []runtime.Object{slice("web-upd", reconcile.DefaultManagedBy), slice("web-del", reconcile.DefaultManagedBy)}
	client := fake.NewClientset(live...)
	create := slice("", reconcile.DefaultManagedBy)
	create.GenerateName, create.ResourceVersion = "web-", ""
	client.PrependReactor("create", "endpointslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s := a.(k8stesting.CreateAction).GetObject().(*discovery.EndpointSlice)
		s.Name = "web-new"
		return false, nil, nil
	})
	plan := &reconcile.Plan{Create: []*discovery.EndpointSlice{create}, Update: []*discovery.EndpointSlice{slice("web-upd", reconcile.DefaultManagedBy)},
		Delete: []*discovery.EndpointSlice{slice("web-del", reconcile.DefaultManagedBy)}}
	res, err := Apply(context.Background(), client.DiscoveryV1().EndpointSlices("shop"), plan, opts(DryRunNone))
	if err != nil || res.Writes() != 3 {
		t.Fatalf("writes %d, err %v", res.Writes(), err)
	}
	var verbs []string
	for _, a := range client.Actions() {
		verbs = append(verbs, a.GetVerb())
		if d, ok := a.(k8stesting.DeleteAction); ok {
			pre := d.GetDeleteOptions().Preconditions
			if pre == nil || *pre.ResourceVersion != "7" || *pre.UID != "u-web-del" {
				t.Errorf("delete without preconditions: %+v", pre)
			}
		}
		if c, ok := a.(k8stesting.CreateActionImpl); ok && c.CreateOptions.FieldManager != "kubectl-slices" {
			t.Errorf("field manager %q", c.CreateOptions.FieldManager)
		}
	}
	if want := []string{"create", "update", "delete"}; !equal(verbs, want) {
		t.Errorf("verbs %v, want %v", verbs, want)
	}
}

func TestApplyRefusesForeignSlices(t *testing.T) {
	client := fake.NewClientset()
	plan := &reconcile.Plan{Delete: []*discovery.EndpointSlice{slice("kcm", reconcile.ControllerManagedBy)}}
	_, err := Apply(context.Background(), client.DiscoveryV1().EndpointSlices("shop"), plan, opts(DryRunNone))
	if err == nil || len(client.Actions()) != 0 {
		t.Fatalf("err %v, %d actions", err, len(client.Actions()))
	}
}

// Under a controller's value a delete may name a slice of the other
// controller's value (a mirrored leftover); a create or update may not, and
// nothing else is widened.
func TestApplyDeletesUnderEitherControllerValue(t *testing.T) {
	ctl := Options{ManagedBy: reconcile.ControllerManagedBy, Workers: 1}
	cases := []struct {
		name string
		plan *reconcile.Plan
		o    Options
		ok   bool
	}{
		{"mirrored leftover deleted", &reconcile.Plan{Delete: []*discovery.EndpointSlice{slice("m", reconcile.MirroringManagedBy)}}, ctl, true},
		{"mirrored slice not updated", &reconcile.Plan{Update: []*discovery.EndpointSlice{slice("m", reconcile.MirroringManagedBy)}}, ctl, false},
		{"ours not deleted under the controller's", &reconcile.Plan{Delete: []*discovery.EndpointSlice{slice("o", reconcile.DefaultManagedBy)}}, ctl, false},
		{"mirroring slice not deleted under ours", &reconcile.Plan{Delete: []*discovery.EndpointSlice{slice("m", reconcile.MirroringManagedBy)}}, opts(DryRunNone), false},
	}
	for _, c := range cases {
		var live []runtime.Object
		for _, s := range append(c.plan.Update, c.plan.Delete...) {
			live = append(live, s)
		}
		client := fake.NewClientset(live...)
		res, err := Apply(context.Background(), client.DiscoveryV1().EndpointSlices("shop"), c.plan, c.o)
		if c.ok != (err == nil) || c.ok != (res.Writes() == 1) || !c.ok && len(client.Actions()) != 0 {
			t.Errorf("%s: writes %d, err %v, %d actions", c.name, res.Writes(), err, len(client.Actions()))
		}
	}
}

func TestDryRuns(t *testing.T) {
	plan := &reconcile.Plan{Update: []*discovery.EndpointSlice{slice("web-upd", reconcile.DefaultManagedBy)}}
	client := fake.NewClientset(slice("web-upd", reconcile.DefaultManagedBy))
	res, err := Apply(context.Background(), client.DiscoveryV1().EndpointSlices("shop"), plan, opts(DryRunClient))
	if err != nil || len(client.Actions()) != 0 || len(res.Updated) != 1 {
		t.Fatalf("client dry run: err %v, %d actions", err, len(client.Actions()))
	}
	if _, err := Apply(context.Background(), client.DiscoveryV1().EndpointSlices("shop"), plan, opts(DryRunServer)); err != nil {
		t.Fatal(err)
	}
	u := client.Actions()[0].(k8stesting.UpdateActionImpl)
	if len(u.UpdateOptions.DryRun) != 1 || u.UpdateOptions.DryRun[0] != metav1.DryRunAll {
		t.Errorf("server dry run sent %+v", u.UpdateOptions)
	}
}

// A conflict is reported as ErrConflict and stops the later phases; a
// namespace being deleted is reported as such. Each carries its class, so
// it exits and reads as pkg/exit's table says.
func TestApplyErrors(t *testing.T) {
	gr := schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}
	client := fake.NewClientset(slice("web-upd", reconcile.DefaultManagedBy), slice("web-del", reconcile.DefaultManagedBy))
	client.PrependReactor("update", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(gr, "web-upd", errors.New("changed"))
	})
	plan := &reconcile.Plan{Update: []*discovery.EndpointSlice{slice("web-upd", reconcile.DefaultManagedBy)},
		Delete: []*discovery.EndpointSlice{slice("web-del", reconcile.DefaultManagedBy)}}
	_, err := Apply(context.Background(), client.DiscoveryV1().EndpointSlices("shop"), plan, opts(DryRunNone))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("err %v", err)
	}
	if d := exit.Describe("shop", "web", err); exit.Code(err) != exit.Conflicts || exit.Code(d) != exit.Conflicts || !strings.Contains(d.Error(), "kept changing while syncing") {
		t.Errorf("a conflict exits %d and reads %q, want exit %d", exit.Code(err), d, exit.Conflicts)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() == "delete" {
			t.Error("delete ran after a failed update phase")
		}
	}

	client = fake.NewClientset()
	client.PrependReactor("create", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) {
		e := apierrors.NewForbidden(gr, "", errors.New("namespace shop is being terminated"))
		e.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
		return true, nil, e
	})
	create := slice("", reconcile.DefaultManagedBy)
	_, err = Apply(context.Background(), client.DiscoveryV1().EndpointSlices("shop"), &reconcile.Plan{Create: []*discovery.EndpointSlice{create}}, opts(DryRunNone))
	var nt *NamespaceTerminatingError
	if !errors.As(err, &nt) {
		t.Fatalf("err %v", err)
	}
	if d := exit.Describe("shop", "web", err); exit.Code(err) != exit.API || exit.Code(d) != exit.API ||
		d.Error() != "service shop/web: namespace shop is terminating: no EndpointSlices can be created in it" {
		t.Errorf("a terminating namespace exits %d and reads %q, want exit %d", exit.Code(err), d, exit.API)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Every write that happened is reported, also those that finished after
// another write in the same phase failed.
func TestApplyReportsEveryWriteOnPartialFailure(t *testing.T) {
	const n = 6
	var live []runtime.Object
	var upd []*discovery.EndpointSlice
	for i := range n {
		s := slice(fmt.Sprintf("web-%d", i), reconcile.DefaultManagedBy)
		live, upd = append(live, s), append(upd, s.DeepCopy())
	}
	// All writes are in flight together (the barrier), and the first one
	// fails: the five others still happened and must be reported. The fake
	// clientset runs reactors under a lock, so the barrier wraps the client.
	client := &barrier{EndpointSliceInterface: fake.NewClientset(live...).DiscoveryV1().EndpointSlices("shop"), fail: "web-0"}
	client.arrived.Add(n)
	o := opts(DryRunNone)
	o.Workers = n
	res, err := Apply(context.Background(), client, &reconcile.Plan{Update: upd}, o)
	if err == nil || !apierrors.IsForbidden(err) {
		t.Fatalf("err %v", err)
	}
	if len(res.Updated) != n-1 {
		t.Fatalf("%d updates reported, %d happened", len(res.Updated), n-1)
	}
}

// An update that finds its slice deleted is a conflict to re-plan, not a
// missing Service.
func TestApplyUpdateOfDeletedSliceIsConflict(t *testing.T) {
	client := fake.NewClientset()
	plan := &reconcile.Plan{Update: []*discovery.EndpointSlice{slice("web-gone", reconcile.DefaultManagedBy)}}
	_, err := Apply(context.Background(), client.DiscoveryV1().EndpointSlices("shop"), plan, opts(DryRunNone))
	if !errors.Is(err, ErrConflict) || apierrors.IsNotFound(err) {
		t.Fatalf("err %v, want ErrConflict", err)
	}
}

// barrier holds every update until all have arrived, then fails one.
type barrier struct {
	discoveryclient.EndpointSliceInterface
	arrived sync.WaitGroup
	fail    string
}

func (b *barrier) Update(ctx context.Context, s *discovery.EndpointSlice, o metav1.UpdateOptions) (*discovery.EndpointSlice, error) {
	b.arrived.Done()
	b.arrived.Wait()
	if s.Name == b.fail {
		return nil, apierrors.NewForbidden(schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, s.Name, errors.New("no"))
	}
	return b.EndpointSliceInterface.Update(ctx, s, o)
}

// slowServer makes each create at once, as the API server does, and answers
// late; an answer the client stops waiting for is lost to it.
type slowServer struct {
	discoveryclient.EndpointSliceInterface
	mu    sync.Mutex
	made  int
	madeC chan struct{}
}

func (s *slowServer) Create(ctx context.Context, e *discovery.EndpointSlice, _ metav1.CreateOptions) (*discovery.EndpointSlice, error) {
	s.mu.Lock()
	s.made++
	s.mu.Unlock()
	s.madeC <- struct{}{}
	select {
	case <-time.After(50 * time.Millisecond):
		return e, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Interrupted mid-phase, Apply starts no new write and reports every write
// the server made, including those whose answer came after the interrupt.
func TestApplyInterruptedReportsEveryWriteMade(t *testing.T) {
	var plan reconcile.Plan
	for i := range 40 {
		s := slice(fmt.Sprintf("web-%d", i), reconcile.DefaultManagedBy)
		s.ResourceVersion = ""
		plan.Create = append(plan.Create, s)
	}
	srv := &slowServer{madeC: make(chan struct{}, 64)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for range 6 {
			<-srv.madeC
		}
		cancel() // four writes are on the wire
	}()
	o := opts(DryRunNone)
	o.Grace = 5 * time.Second
	res, err := Apply(ctx, srv, &plan, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want the interrupt", err)
	}
	srv.mu.Lock()
	made := srv.made
	srv.mu.Unlock()
	if made >= 40 {
		t.Fatalf("all %d writes made: the interrupt stopped nothing", made)
	}
	if len(res.Created) != made {
		t.Fatalf("%d creates reported, %d made by the server", len(res.Created), made)
	}
}

// A done Abort cuts writes in flight at once, whatever the grace.
func TestApplyAbortCutsWritesInFlight(t *testing.T) {
	plan := reconcile.Plan{Create: []*discovery.EndpointSlice{slice("web-1", reconcile.DefaultManagedBy)}}
	plan.Create[0].ResourceVersion = ""
	srv := &slowServer{madeC: make(chan struct{}, 1)}
	abort, lose := context.WithCancel(context.Background())
	o := opts(DryRunNone)
	o.Grace, o.Abort = time.Hour, abort
	go func() {
		<-srv.madeC
		lose()
	}()
	start := time.Now()
	res, err := Apply(context.Background(), &slowCreate{srv, time.Hour}, &plan, o)
	if !errors.Is(err, context.Canceled) || res.Writes() != 0 || time.Since(start) > 10*time.Second {
		t.Fatalf("err %v, %d writes after %v", err, res.Writes(), time.Since(start))
	}
}

// slowCreate answers after delay.
type slowCreate struct {
	*slowServer
	delay time.Duration
}

func (s *slowCreate) Create(ctx context.Context, e *discovery.EndpointSlice, _ metav1.CreateOptions) (*discovery.EndpointSlice, error) {
	s.madeC <- struct{}{}
	select {
	case <-time.After(s.delay):
		return e, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
