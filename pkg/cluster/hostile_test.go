package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	corev1 "k8s.io/api/core/v1"
)

// hostile serves every list with a continue token (fresh, or always the
// same) and answers GET services/web with a Pod.
func hostile(t *testing.T, sameToken bool) (kubernetes.Interface, *atomic.Int64) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/services/web") {
			fmt.Fprint(w, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"","namespace":""}}`)
			return
		}
		token := fmt.Sprintf("t%d", n)
		if sameToken {
			token = "again"
		}
		fmt.Fprintf(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"continue":%q},"items":[]}`, token)
	}))
	t.Cleanup(srv.Close)
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return client, &requests
}

// A repeated continue token stops the list with an error at once.
func TestRepeatedContinueToken(t *testing.T) {
	client, requests := hostile(t, true)
	_, err := Reader{Client: client}.Pods(context.Background(), "shop", "")
	if err == nil || !strings.Contains(err.Error(), "repeated a continue token") {
		t.Fatalf("err %v", err)
	}
	if n := requests.Load(); n > 3 {
		t.Fatalf("%d requests for a server that repeats its token", n)
	}
}

// A server whose tokens never end is followed for at most max pages.
func TestPagesBounded(t *testing.T) {
	client, requests := hostile(t, false)
	call := boundedPages(func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Pods("shop").List(ctx, o)
	}, 50)
	err := list(context.Background(), call, func(runtime.Object) {})
	if err == nil || !strings.Contains(err.Error(), "more than 50 pages") {
		t.Fatalf("err %v", err)
	}
	if n := requests.Load(); n != 50 {
		t.Fatalf("%d requests, want 50", n)
	}
}

// Another kind of object for GET services/web is said to be the wrong kind.
func TestWrongKindForService(t *testing.T) {
	client, _ := hostile(t, false)
	_, err := Reader{Client: client}.Service(context.Background(), "shop", "web")
	if err == nil || !strings.Contains(err.Error(), "wrong kind of object for GET services/web") {
		t.Fatalf("err %v", err)
	}
}

var _ = corev1.Pod{}
