package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
	verifyprobe "github.com/kubectl-slices/kubectl-slices/pkg/verify/probe"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/watch"
)

// VerifyConfig is `verify --watch`'s: the probe run (connected), the
// Services it verifies, how often, and where it reports.
type VerifyConfig struct {
	Client    kubernetes.Interface
	Run       verifyprobe.Run
	Selection syncer.Selection
	// Interval is the longest time between two rounds; a change of the
	// slices or Services is verified Run.SyncPeriod after it.
	Interval   time.Duration
	HealthAddr string
	// Out gets a line per status change and the first round's statuses,
	// ErrOut the notices.
	Out, ErrOut io.Writer
	Now         func() time.Time
}

// eventGap is the least time between two DataPlaneDrift Events of one
// node or replica: a node flapping is told once in it.
const eventGap = 10 * time.Minute

// RunVerify verifies the Services' data plane in rounds until ctx is done
// (pkg/verify/watch decides when, and what changed): the Services, their
// slices, Pods and Nodes come from informers, so a round lists nothing but
// the proxy and DNS Pods it reads; each node's status is served as metrics
// and a change to DRIFT and back recorded as an Event on the Node (or the
// DNS Pod). It writes nothing else.
func RunVerify(ctx context.Context, cfg VerifyConfig) error {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	tuneGC() // a resident cache, as the loop's
	go CollectWhenQuiet(ctx, QuietGCInterval)
	var ln net.Listener
	if cfg.HealthAddr != "" {
		var err error
		if ln, err = listenHealth(cfg.HealthAddr); err != nil {
			return err
		}
		defer ln.Close()
	}
	c := cluster.NewCache(cfg.Client, cfg.Selection.Listed())
	c.ReadOnly = true
	infs, err := c.Informers(ctx)
	if err != nil {
		return err
	}
	if c.NodesUnreadable {
		return &APIError{fmt.Errorf("cannot verify without reading Nodes: %s", c.Denied["nodes"])}
	}
	v := &verifier{cfg: cfg, cache: c, metrics: newVerifyMetrics(), wake: make(chan struct{}, 1),
		state: watch.State{MinGap: eventGap}, schedule: watch.Schedule{Interval: cfg.Interval, Settle: cfg.Run.SyncPeriod}}
	if v.events, err = nodeEvents(ctx, cfg.Client, cfg.ErrOut); err != nil {
		return err
	}
	// An update is the old object's change too: a Service relabelled out
	// of a -l selection is one to read again.
	changed := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { v.changed(o) },
		UpdateFunc: func(old, o any) { v.changed(old); v.changed(o) },
		DeleteFunc: func(o any) { v.changed(o) },
	}
	for _, inf := range []cache.SharedIndexInformer{infs.Services, infs.Slices} {
		if _, err := inf.AddEventHandler(changed); err != nil {
			return err
		}
	}
	if ln != nil {
		hctx, stop := context.WithCancel(ctx)
		defer stop()
		serveHealth(hctx, ln, v.metrics.reg, probes{ready: []check{v.ready}, live: []check{v.live}})
		fmt.Fprintf(cfg.ErrOut, "serving /healthz, /readyz and /metrics on %s\n", ln.Addr())
	}
	infs.Start(ctx.Done())
	defer infs.Shutdown()
	if !infs.WaitForSync(ctx) {
		return nil
	}
	v.changedMu.Lock()
	v.synced = true
	v.changedMu.Unlock()
	v.missingNames()
	return v.run(ctx)
}

// missingNames says once which Services named are not there: a typo would
// otherwise be verified as nothing, every node OK, for as long as it runs.
func (v *verifier) missingNames() {
	sel := v.cfg.Selection
	for _, n := range sel.Names {
		if _, ok, _ := v.cache.Services.GetByKey(sel.Namespace + "/" + n); !ok {
			fmt.Fprintf(v.cfg.ErrOut, "service %s/%s not found: not verified until it is created\n", sel.Namespace, n)
		}
	}
}

// verifier is RunVerify's state.
type verifier struct {
	cfg      VerifyConfig
	cache    *cluster.Cache
	metrics  *verifyMetrics
	events   record.EventRecorder // nil: Events may not be written
	state    watch.State
	wake     chan struct{}
	schedule watch.Schedule // under changedMu: informer handlers note changes

	changedMu sync.Mutex
	synced    bool
	lastRound time.Time // when the last round ended (zero: none yet)
	// started is when the round in flight started (zero: none in flight);
	// during the Services that changed since.
	started time.Time
	during  map[string]bool
}

// changed notes a change of a selected Service or of one of its slices.
func (v *verifier) changed(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	var svc *corev1.Service
	switch o := obj.(type) {
	case *corev1.Service:
		svc = o
	case *discovery.EndpointSlice:
		name := o.Labels[discovery.LabelServiceName]
		got, ok, _ := v.cache.Services.GetByKey(o.Namespace + "/" + name)
		if !ok {
			return // its Service is not cached (gone, or out of scope)
		}
		svc = got.(*corev1.Service)
	}
	if svc == nil || !v.selected(svc) {
		return
	}
	v.changedMu.Lock()
	if v.synced { // the initial lists are no change: the first round reads them
		v.schedule.Changed(v.cfg.Now())
	}
	if !v.started.IsZero() {
		v.during[svc.Namespace+"/"+svc.Name] = true
	}
	v.changedMu.Unlock()
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

// run runs the rounds as the schedule says until ctx is done.
func (v *verifier) run(ctx context.Context) error {
	for {
		v.changedMu.Lock()
		next := v.schedule.Next()
		v.changedMu.Unlock()
		if wait := next.Sub(v.cfg.Now()); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-v.wake:
				t.Stop()
				continue // a change: the schedule may now be due sooner
			case <-t.C:
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		v.round(ctx)
	}
}

// round reads and judges every selected Service on every node and DNS
// replica, then records what it found.
func (v *verifier) round(ctx context.Context) {
	start := v.cfg.Now()
	v.changedMu.Lock()
	v.schedule.Started(start)
	v.started, v.during = start, map[string]bool{}
	v.changedMu.Unlock()
	r := v.cfg.Run
	// The rights are reviewed each round: a verifier runs for months, and
	// its tiers follow its RBAC as it is changed.
	rep := r.Verify(ctx, v.cache, v.cache.EndpointsOf, r.Review(ctx), v.nodes(), v.services())
	v.changedMu.Lock()
	during := v.during
	v.started, v.during = time.Time{}, nil
	v.changedMu.Unlock()
	if ctx.Err() != nil {
		return // cut short by the signal: not a reading
	}
	end := v.cfg.Now()
	entries, events := v.state.Apply(rep, end, during)
	v.metrics.set(entries, float64(start.UnixNano())/1e9, end.Sub(start).Seconds())
	first := v.lastRoundAt().IsZero()
	for _, e := range entries {
		if first || e.Since.Equal(end) {
			fmt.Fprintln(v.cfg.Out, statusLine(e))
		}
	}
	for _, ev := range events {
		v.record(ev)
	}
	v.changedMu.Lock()
	v.lastRound = end
	v.changedMu.Unlock()
}

func (v *verifier) lastRoundAt() time.Time {
	v.changedMu.Lock()
	defer v.changedMu.Unlock()
	return v.lastRound
}

// statusLine is one target's status as printed.
func statusLine(e watch.Entry) string {
	line := fmt.Sprintf("%s %s: %s", e.Kind, e.Name, e.Status)
	if e.Reason != "" && e.Status != verdict.OK {
		line += ": " + e.Reason
	}
	return line
}

// selected: the selection names svc (names in the namespace) or, naming
// none, its labels match (-l; every Service with --all).
func (v *verifier) selected(svc *corev1.Service) bool {
	sel := v.cfg.Selection
	if len(sel.Names) > 0 {
		return svc.Namespace == sel.Namespace && slices.Contains(sel.Names, svc.Name)
	}
	return sel.Labels == nil || sel.Labels.Matches(labels.Set(svc.Labels))
}

// services are the selected Services, in key order.
func (v *verifier) services() []*corev1.Service {
	var out []*corev1.Service
	for _, o := range v.cache.Services.List() {
		if svc := o.(*corev1.Service); v.selected(svc) {
			out = append(out, svc)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name
	})
	return out
}

// nodes are the cached Nodes, in name order.
func (v *verifier) nodes() []*corev1.Node {
	var out []*corev1.Node
	for _, o := range v.cache.Nodes.List() {
		out = append(out, o.(*corev1.Node))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// record records ev on its Node, or on its DNS Pod.
func (v *verifier) record(ev watch.Event) {
	typ := corev1.EventTypeNormal
	if ev.Warning {
		typ = corev1.EventTypeWarning
	}
	fmt.Fprintf(v.cfg.Out, "%s: %s\n", ev.Reason, ev.Message)
	if v.events == nil {
		return
	}
	// With the UID: kubectl describe finds an object's Events by it.
	ref := &corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: ev.Name}
	if ev.Kind == watch.Replica {
		ns, name, _ := strings.Cut(ev.Name, "/")
		ref = &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: name, UID: types.UID(ev.UID)}
	} else if o, ok, _ := v.cache.Nodes.GetByKey(ev.Name); ok {
		ref.UID = o.(*corev1.Node).UID
	}
	v.events.Event(ref, typ, ev.Reason, ev.Message)
}

// ready: the caches are filled and a round has been judged.
func (v *verifier) ready(*http.Request) error {
	if v.lastRoundAt().IsZero() {
		return errors.New("no round judged yet")
	}
	return nil
}

// live fails when rounds stopped: none in flight and none started for
// the interval and a sync period (plus a minute) after the last ended, or
// the one in flight running past its worst case (roundBound).
func (v *verifier) live(*http.Request) error {
	v.changedMu.Lock()
	last, started := v.lastRound, v.started
	v.changedMu.Unlock()
	now := v.cfg.Now()
	if !started.IsZero() {
		if bound := v.roundBound(); now.Sub(started) > bound {
			return fmt.Errorf("a round has run for %s (bound %s)", now.Sub(started).Round(time.Second), bound)
		}
		return nil
	}
	if last.IsZero() {
		return nil // the caches fill; /readyz says so
	}
	bound := v.cfg.Interval + v.cfg.Run.SyncPeriod + time.Minute
	if late := now.Sub(last); late > bound {
		return fmt.Errorf("no round for %s (bound %s)", late.Round(time.Second), bound)
	}
	return nil
}

// roundBound is the longest a round may take: its nodes read
// --concurrency at a time, each within --node-timeout (the DNS replicas
// beside them, as many at a time), one batch more, and two minutes to
// plan the Services and judge.
func (v *verifier) roundBound() time.Duration {
	r := v.cfg.Run
	batches := (len(v.cache.Nodes.ListKeys()) + max(r.Concurrency, 1) - 1) / max(r.Concurrency, 1)
	return time.Duration(batches+1)*r.NodeTimeout + 2*time.Minute
}

// nodeEvents is the recorder for the Events on Nodes (kept in the default
// namespace) and on DNS Pods (kube-system); nil, said once, when neither
// may be written, and each namespace denied is said.
func nodeEvents(ctx context.Context, client kubernetes.Interface, errOut io.Writer) (record.EventRecorder, error) {
	allowed := 0
	for _, ns := range []string{metav1.NamespaceDefault, verifyprobe.ProxyNamespace} {
		denied, err := cluster.DeniedVerb(ctx, client, "", "events", ns, "", "create", "patch")
		if err != nil {
			return nil, &APIError{err}
		}
		if denied != "" {
			fmt.Fprintf(errOut, "no Events will be recorded in %s: %s\n", ns, denied)
			continue
		}
		allowed++
	}
	if allowed == 0 {
		return nil, nil
	}
	b := record.NewBroadcaster(record.WithContext(ctx))
	go func() { <-ctx.Done(); b.Shutdown() }()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	return b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubectl-slices-verify"}), nil
}
