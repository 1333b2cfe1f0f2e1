package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/deploy"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// allowAll answers every access review with "allowed", as for an admin;
// deny names one resource the caller may not use.
func allowAll(client *fake.Clientset, deny string) {
	client.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = r.Spec.ResourceAttributes == nil || r.Spec.ResourceAttributes.Resource != deny
		return true, r, nil
	})
}

// until runs the command until done says the fake cluster reached the
// state wanted (or 20 s passed), then cancels it as Ctrl-C would.
func until(t *testing.T, client *fake.Clientset, done func() bool, args ...string) fakeRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		deadline := time.Now().Add(20 * time.Second)
		for !done() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	return runOn(t, ctx, client, args...)
}

// sync --watch writes what one-shot sync writes and stops cleanly when
// cancelled; a right it lacks is named up front with exit 4.
func TestSyncWatchCommand(t *testing.T) {
	objs := webCluster()
	want := selectedIPs(objs, "web")
	client := fake.NewClientset(objs...)
	generateNames(client)
	allowAll(client, "")
	synced := func() bool { return sameStrings(slicesOf(t, client, "web")[reconcile.DefaultManagedBy], want) }
	r := until(t, client, synced, "sync", "--watch", "svc/web", "-n", testNS, "--summary-interval=0")
	mustCode(t, r, exit.OK)
	if !synced() {
		t.Errorf("after --watch: %v, want ours publishing %v\nstderr:\n%s", slicesOf(t, client, "web"), want, r.ErrOut)
	}

	client = fake.NewClientset(objs...)
	allowAll(client, "endpointslices")
	r = until(t, client, func() bool { return false }, "sync", "--watch", "--all", "-n", testNS, "--summary-interval=0")
	mustCode(t, r, exit.API)
	if !strings.Contains(r.Err.Error(), "forbidden") || writes(client) != 0 {
		t.Errorf("without rights on endpointslices: %v after %d writes", r.Err, writes(client))
	}
}

// webhook serves until cancelled (exit 0) and refuses a certificate it
// cannot read before any request (exit 2).
func TestWebhookCommand(t *testing.T) {
	dir := t.TempDir()
	tls, err := deploy.SelfSignedTLS("ops")
	if err != nil {
		t.Fatal(err)
	}
	crt, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(crt, tls.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, tls.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset(webCluster()...)
	allowAll(client, "")
	listed := func() bool {
		for _, a := range client.Actions() {
			if a.GetVerb() == "watch" {
				return true
			}
		}
		return false
	}
	r := until(t, client, listed, "webhook", "--webhook-addr", "127.0.0.1:0", "--tls-cert-file", crt, "--tls-private-key-file", key)
	mustCode(t, r, exit.OK)
	if writes(client) != 0 {
		t.Errorf("the webhook wrote %d times", writes(client))
	}
	// Without the right to watch Pods, the cache would retry for ever: the
	// webhook names the right and exits 4.
	client = fake.NewClientset(webCluster()...)
	allowAll(client, "pods")
	r = until(t, client, func() bool { return false }, "webhook", "--webhook-addr", "127.0.0.1:0", "--tls-cert-file", crt, "--tls-private-key-file", key)
	mustCode(t, r, exit.API)
	if !strings.Contains(r.Err.Error(), "pods") {
		t.Errorf("the error does not name pods: %v", r.Err)
	}
	r = runFake(t, webCluster(), "webhook", "--webhook-addr", "127.0.0.1:0", "--tls-cert-file", filepath.Join(dir, "none"), "--tls-private-key-file", key)
	mustCode(t, r, exit.Usage)
	if len(r.Client.Actions()) != 0 {
		t.Errorf("an unreadable certificate made %d requests", len(r.Client.Actions()))
	}
}
