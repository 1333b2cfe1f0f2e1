package e2e

import (
	"context"
	"strings"
	"testing"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// prune deletes our slices of a deleted Service and of a Service whose
// selector was removed, and nothing else: every other slice, another
// manager's for the same Services included, is byte-identical after.
func TestPruneOrphans(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, shared)
	for i, name := range []string{"gone", "nosel", "keep"} {
		mustService(t, shared, service(ns, name))
		mustPods(t, shared, ns, podSpec(name, 0, 20+i), podSpec(name, 1, 20+i))
		slices(t, "sync", "svc/"+name, "-n", ns).mustCode(t, 0)
		ours := listSlices(t, shared, ns, name, oursLabel)
		// Another manager's slice for each Service, and one of the controller's.
		copySlice(t, shared, ours[0], name+"-other", "someone-else", nil)
		copySlice(t, shared, ours[0], name+"-kcm", controllerLabel, nil)
	}
	doomed := map[string]bool{}
	for _, name := range []string{"gone", "nosel"} {
		for _, s := range listSlices(t, shared, ns, name, oursLabel) {
			doomed[s.Name] = true
		}
	}
	if err := shared.Admin.CoreV1().Services(ns).Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := shared.Admin.CoreV1().Services(ns).Get(ctx, "nosel", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Selector = nil
	if _, err := shared.Admin.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := sliceDump(t, shared, ns)

	// A dry run lists what goes and deletes nothing.
	r := slices(t, "prune", "-n", ns, "--dry-run=client").mustCode(t, 0)
	for name := range doomed {
		if !strings.Contains(r.Stdout, name) {
			t.Errorf("dry run does not list %s:\n%s", name, r.Stdout)
		}
	}
	if !strings.Contains(r.Stdout, "ServiceGone") || !strings.Contains(r.Stdout, "NoSelector") {
		t.Errorf("dry run gives no reasons:\n%s", r.Stdout)
	}
	if after := sliceDump(t, shared, ns); len(after) != len(before) {
		t.Fatalf("dry run deleted slices: %d -> %d", len(before), len(after))
	}

	r = slices(t, "prune", "-n", ns).mustCode(t, 0)
	after := sliceDump(t, shared, ns)
	for name, obj := range before {
		got, kept := after[name]
		switch {
		case doomed[name] && kept:
			t.Errorf("orphan %s was not pruned", name)
		case !doomed[name] && !kept:
			t.Errorf("slice %s was deleted", name)
		case !doomed[name] && got != obj:
			t.Errorf("slice %s changed:\nbefore %s\nafter  %s", name, obj, got)
		}
	}
	if len(after) != len(before)-len(doomed) {
		t.Errorf("%d slices before, %d after, %d doomed", len(before), len(after), len(doomed))
	}
	for _, s := range after {
		if strings.Contains(s, `"`+discovery.LabelManagedBy+`":"`+oursLabel+`"`) && !strings.Contains(s, `"`+discovery.LabelServiceName+`":"keep"`) {
			t.Errorf("one of our orphans survived: %s", s)
		}
	}
	// Nothing left to prune.
	r = slices(t, "prune", "-n", ns).mustCode(t, 0)
	if !strings.Contains(r.Stdout, "Nothing to prune") {
		t.Errorf("second prune: %s", r.Stdout)
	}
}
