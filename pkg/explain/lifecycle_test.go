package explain

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

const ours, kcm = reconcile.DefaultManagedBy, reconcile.ControllerManagedBy

func TestJudgeHandback(t *testing.T) {
	good1, good2 := ep("10.0.0.1", "web-1", true), ep("10.0.0.2", "web-2", true)
	_, plan := setup()
	desired := plan.Final()
	deleting := liveSlice("d", kcm, 8080, good1, good2)
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, tc := range []struct {
		name          string
		live          []*discovery.EndpointSlice
		same, current bool
		diffs         []string
	}{
		{"no controller slices", []*discovery.EndpointSlice{liveSlice("a", ours, 8080, good1, good2)}, false, false, nil},
		{"only a controller slice being deleted", []*discovery.EndpointSlice{liveSlice("a", ours, 8080, good1, good2), deleting}, false, false, nil},
		// Packing does not matter: two slices of the controller carry what one of ours does.
		{"same endpoints, other packing", []*discovery.EndpointSlice{liveSlice("a", ours, 8080, good1, good2),
			liveSlice("k1", kcm, 8080, good1), liveSlice("k2", kcm, 8080, good2)}, true, true, nil},
		{"controller current, none of ours", []*discovery.EndpointSlice{liveSlice("k", kcm, 8080, good1, good2)}, false, true,
			[]string{"10.0.0.1 (pod web-1) ports http:8080/TCP: published only by kube-controller-manager"}},
		{"condition differs", []*discovery.EndpointSlice{liveSlice("a", ours, 8080, good1, good2),
			liveSlice("k", kcm, 8080, good1, ep("10.0.0.2", "web-2", false))}, false, false,
			[]string{"10.0.0.2 (pod web-2) ports http:8080/TCP: kubectl-slices has ready=true serving=true", "kube-controller-manager has ready=false serving=false"}},
		{"port differs", []*discovery.EndpointSlice{liveSlice("a", ours, 8080, good1, good2),
			liveSlice("k", kcm, 9090, good1, good2)}, false, false,
			[]string{"ports http:8080/TCP: published only by kubectl-slices", "ports http:9090/TCP: published only by kube-controller-manager"}},
		{"endpoint missing", []*discovery.EndpointSlice{liveSlice("a", ours, 8080, good1, good2),
			liveSlice("k", kcm, 8080, good1)}, false, false, []string{"10.0.0.2 (pod web-2) ports http:8080/TCP: published only by kubectl-slices"}},
		{"duplicate in ours", []*discovery.EndpointSlice{liveSlice("a", ours, 8080, good1, good2), liveSlice("b", ours, 8080, good2),
			liveSlice("k", kcm, 8080, good1, good2)}, false, true, []string{"10.0.0.2 (pod web-2)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := judge.JudgeHandback(tc.live, ours, desired)
			if h.Same != tc.same || h.Current != tc.current {
				t.Errorf("same=%v current=%v, want %v %v; differences %v", h.Same, h.Current, tc.same, tc.current, h.Differences)
			}
			text := strings.Join(h.Differences, "\n")
			for _, want := range tc.diffs {
				if !strings.Contains(text, want) {
					t.Errorf("differences lack %q:\n%s", want, text)
				}
			}
			if tc.same && len(h.Differences) != 0 {
				t.Errorf("same, but differences %v", h.Differences)
			}
		})
	}
}

func TestOrphans(t *testing.T) {
	svc := func(name string) *testutil.ServiceBuilder { return testutil.NewService("shop", name).UID("svc-uid") }
	services := map[string]*corev1.Service{
		"web":  svc("web").Selector("app", "web").Build(),
		"ext":  svc("ext").ExternalName("db.example.com").Build(),
		"man":  svc("man").Build(), // no selector: endpoints by hand
		"new":  svc("new").UID("new-uid").Selector("app", "new").Build(),
		"bare": svc("bare").Selector("app", "bare").Build(),
	}
	slice := func(name, service, managedBy string) *discovery.EndpointSlice {
		s := liveSlice(name, managedBy, 8080)
		s.Labels[discovery.LabelServiceName] = service
		s.OwnerReferences[0].Name = service
		return s
	}
	bare := slice("bare-1", "bare", ours)
	bare.OwnerReferences = nil
	deleting := slice("gone-2", "gone", ours)
	deleting.DeletionTimestamp = &metav1.Time{}
	unlabelled := slice("x-1", "x", ours)
	delete(unlabelled.Labels, discovery.LabelServiceName)
	// A selector-less Service's slices mirrored from its Endpoints object
	// (owned by it) are live: sync keeps them current, prune must not delete
	// them. A Service-owned slice of a selector-less Service is an orphan.
	mirrored := func(name, service string) *discovery.EndpointSlice {
		s := slice(name, service, ours)
		s.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(
			&corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: service, UID: "ep-uid"}}, corev1.SchemeGroupVersion.WithKind("Endpoints"))}
		return s
	}
	live := []*discovery.EndpointSlice{
		mirrored("man-m", "man"), mirrored("ext-m", "ext"),
		slice("web-1", "web", ours), slice("gone-1", "gone", ours), slice("ext-1", "ext", ours), slice("man-1", "man", ours),
		slice("new-1", "new", ours), bare, deleting, unlabelled,
		// Other managers' slices are never orphans of ours, whatever their Service.
		slice("gone-k", "gone", kcm), slice("man-o", "man", "someone-else"), slice("new-k", "new", kcm),
	}
	got := map[string]OrphanReason{}
	for _, o := range Orphans(live, ours, func(_, name string) *corev1.Service { return services[name] }) {
		got[o.Slice.Name] = o.Reason
		if o.Message == "" {
			t.Errorf("%s: no message", o.Slice.Name)
		}
	}
	want := map[string]OrphanReason{"gone-1": ServiceGone, "ext-1": ExternalName, "man-1": NoSelector, "new-1": OwnerMismatch}
	if len(got) != len(want) {
		t.Errorf("orphans %v, want %v", got, want)
	}
	for name, r := range want {
		if got[name] != r {
			t.Errorf("%s: %q, want %q", name, got[name], r)
		}
	}
}

func TestCheckService(t *testing.T) {
	opts := Options{ManagedBy: ours, MaxEndpointsPerSlice: 100}
	good1, good2 := ep("10.0.0.1", "web-1", true), ep("10.0.0.2", "web-2", true)
	kinds := func(fs []Finding) string {
		var out []string
		for _, f := range fs {
			out = append(out, string(f.Kind)+" "+f.Command)
		}
		return strings.Join(out, "; ")
	}
	for _, tc := range []struct {
		name string
		live []*discovery.EndpointSlice
		max  int
		want string
	}{
		{"healthy, ours", []*discovery.EndpointSlice{liveSlice("a", ours, 8080, good1, good2)}, 100, ""},
		{"healthy, controller's", []*discovery.EndpointSlice{liveSlice("k", kcm, 8080, good1, good2)}, 100, ""},
		{"no slices", nil, 100, "NoSlices kubectl slices sync svc/web -n shop"},
		{"hand back", []*discovery.EndpointSlice{liveSlice("a", ours, 8080, good1, good2), liveSlice("k", kcm, 8080, good1, good2)}, 100,
			"HandBack kubectl slices release svc/web -n shop"},
		{"hand back once caught up", []*discovery.EndpointSlice{liveSlice("a", ours, 8080, good1, good2), liveSlice("k", kcm, 8080, good1)}, 100,
			"HandBack kubectl slices release --wait svc/web -n shop"}, // consumers see the union: nothing stale
		{"ours stale, controller current", []*discovery.EndpointSlice{liveSlice("a", ours, 8080, good1), liveSlice("k", kcm, 8080, good1, good2)}, 100,
			"HandBack kubectl slices release --force svc/web -n shop"},
		{"controller stale", []*discovery.EndpointSlice{liveSlice("k", kcm, 8080, good1, good2, ep("10.0.0.9", "gone", true))}, 100,
			"Stale kubectl slices sync svc/web -n shop"},
		{"over limit", []*discovery.EndpointSlice{liveSlice("a", ours, 8080, good1, good2)}, 1,
			"OverLimit kubectl slices explain svc/web -n shop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, plan := setup(tc.live...)
			o := opts
			o.MaxEndpointsPerSlice = tc.max
			if got := kinds(CheckService(in, plan, o)); got != tc.want {
				t.Errorf("findings %q\nwant     %q", got, tc.want)
			}
		})
	}
	// A mirrored slice left from before the Service had a selector: one
	// Orphaned finding (not also Stale), whose repair is a sync under a
	// controller's value, or a delete by hand under any other.
	mirrored := liveSlice("m", reconcile.MirroringManagedBy, 8080, ep("10.9.0.1", "", true))
	mirrored.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Endpoints", Name: "web", Controller: &[]bool{true}[0]}}
	mirrored.Endpoints[0].TargetRef = nil
	// Its owner does not matter: upstream's mirroring controller deletes
	// the slices labelled with the Service's name and its value, whoever
	// owns them.
	unowned := mirrored.DeepCopy()
	unowned.OwnerReferences = nil
	for _, tc := range []struct {
		managedBy, want string
		slice           *discovery.EndpointSlice
	}{
		{ours, "Orphaned kubectl delete endpointslice m -n shop", mirrored},
		{kcm, "Orphaned kubectl slices sync svc/web -n shop --managed-by " + kcm + " --force", mirrored},
		{ours, "Orphaned kubectl delete endpointslice m -n shop", unowned},
		{kcm, "Orphaned kubectl slices sync svc/web -n shop --managed-by " + kcm + " --force", unowned},
	} {
		in, plan := setup(liveSlice("a", tc.managedBy, 8080, good1, good2), tc.slice)
		o := opts
		o.ManagedBy = tc.managedBy
		fs := CheckService(in, plan, o)
		if got := kinds(fs); got != tc.want || !strings.Contains(fs[0].Message, "1 slice mirrored from Endpoints shop/web outlives the Service's selector") || fs[0].Slices[0] != "m" {
			t.Errorf("leftover under %s: %q, want %q (%+v)", tc.managedBy, got, tc.want, fs)
		}
	}
	// A Service without a selector is not judged here (its slices are not
	// planned), whatever it has.
	in, _ := setup()
	in.Service = in.Service.DeepCopy()
	in.Service.Spec.Selector = nil
	plan, err := reconcile.Compute(in, reconcile.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if fs := CheckService(in, plan, opts); len(fs) != 0 {
		t.Errorf("selectorless Service: %+v", fs)
	}
}
