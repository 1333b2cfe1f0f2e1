package controlplane

import (
	"context"
	"os"
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestFaultHooks proves the hooks the fault tests stand on: a
// ServiceAccount's kubeconfig writes as that identity and the audit log
// says so, also after kube-apiserver restarts; after Compact a watch from
// an older resourceVersion is answered 410; etcd comes back with its data;
// a frozen kube-controller-manager is still stopped by Stop.
func TestFaultHooks(t *testing.T) {
	if os.Getenv("KUBECTL_SLICES_BIN_DIR") == "" {
		t.Skip("KUBECTL_SLICES_BIN_DIR not set (make test sets it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Without the watch cache, which would answer a watch from a compacted
	// revision it still holds (Compact).
	cp, err := Start(ctx, Options{AuditLog: true, APIServerArgs: []string{"--watch-cache=false"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	if err := cp.Namespace(ctx, "faults"); err != nil {
		t.Fatal(err)
	}
	kc, err := cp.ServiceAccountKubeconfig(ctx, "faults", "loop", "")
	if err != nil {
		t.Fatal(err)
	}
	// cluster-admin: the test needs a writer, not least privilege.
	if _, err := cp.Admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "faults-loop"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "faults", Name: "loop"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	sa, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	user := ServiceAccountUser("faults", "loop")
	writeSlice := func(name string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second) // RBAC reaches the authorizer a moment after the write
		for {
			_, err := sa.DiscoveryV1().EndpointSlices("faults").Create(ctx, &discovery.EndpointSlice{
				ObjectMeta: metav1.ObjectMeta{Name: name}, AddressType: discovery.AddressTypeIPv4}, metav1.CreateOptions{})
			if err == nil {
				return
			}
			if !apierrors.IsForbidden(err) || time.Now().After(deadline) {
				t.Fatalf("create slice %s as %s: %v", name, user, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	countBy := func(name string) int {
		t.Helper()
		events, err := cp.Audit()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range events {
			if e.User == user && e.Verb == "create" && e.Resource == "endpointslices" && e.Namespace == "faults" && e.Code == 201 &&
				(e.Name == name || e.Name == "") && !e.Time.Before(e.Received) {
				n++
			}
		}
		return n
	}
	writeSlice("before")
	if n := countBy("before"); n != 1 {
		t.Fatalf("audit events of the first create: %d, want 1", n)
	}

	// The restarted API server appends to the same log.
	cp.StopAPIServer()
	if err := cp.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	writeSlice("after-restart")
	if n, m := countBy("before"), countBy("after-restart"); n != 1 || m != 1 {
		t.Fatalf("after the restart: %d and %d events, want 1 and 1", n, m)
	}

	// Compact: a watch from before answers 410 Gone.
	old, err := cp.Admin.DiscoveryV1().EndpointSlices("faults").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Two writes: a watch from rv starts at rv+1, which must be compacted.
	writeSlice("moves-the-revision")
	writeSlice("moves-it-again")
	if err := cp.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := WatchStartError(cp.Admin.DiscoveryV1().EndpointSlices("faults").Watch(ctx, metav1.ListOptions{ResourceVersion: old.ResourceVersion})); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("watch from resourceVersion %s after Compact: %v, want 410 Gone", old.ResourceVersion, err)
	}

	// etcd down and back: the data survives.
	cp.StopEtcd()
	if err := cp.StartEtcd(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cp.Admin.DiscoveryV1().EndpointSlices("faults").Get(ctx, "before", metav1.GetOptions{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after etcd restarted: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// A frozen controller manager: Stop still ends it, promptly.
	if err := cp.StartControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	cp.FreezeControllerManager()
	cp.ThawControllerManager()
	cp.FreezeControllerManager()
	start := time.Now()
	cp.Stop()
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("Stop with kube-controller-manager frozen took %v", took)
	}
}
