package controller

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/standby"
)

// A replica standing by for the Lease keeps nothing per Service however
// many come and go (a queue, notes and observations it never takes would
// hold every key it ever saw); when it leads it queues every Service its
// caches hold and every Service a slice of ours names, deleted or not.
func TestStandingByQueuesNothingThenLeadQueuesTheCaches(t *testing.T) {
	cfg := standby.Config{TakeoverAfter: 5 * time.Second, HandbackHold: 30 * time.Second, ManagedBy: "test-manager"}
	orphan := testutil.NewSlice(testNS, "gone-abc").Service("gone").ManagedBy("test-manager").UID("u-gone").Build()
	c, client, _ := startedWith(t, everything, func(o *Options) {
		o.Standby = &cfg
		o.Leading = make(chan struct{}) // never closed: standing by
	}, node1, orphan)
	ctx := context.Background()
	for i := range 40 {
		name := fmt.Sprintf("web-%d", i)
		if _, err := client.CoreV1().Services(testNS).Create(ctx, service(name, map[string]string{"app": name}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod := testutil.NewPod(testNS, name+"-a").Label("app", name).Node("node-1").IP(fmt.Sprintf("10.0.1.%d", i)).Ready(true).Build()
		if _, err := client.CoreV1().Pods(testNS).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		if err := client.CoreV1().Services(testNS).Delete(ctx, fmt.Sprintf("web-%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitCached(t, "10 Services and 40 Pods", func() bool {
		return len(c.cache.Services.List()) == 10 && len(c.cache.Pods.List()) == 40
	})
	c.notes.mu.Lock()
	noted := len(c.notes.pods)
	c.notes.mu.Unlock()
	c.observed.mu.Lock()
	seen := len(c.observed.at)
	c.observed.mu.Unlock()
	if n := c.queue.Len(); n != 0 || noted != 0 || seen != 0 {
		t.Fatalf("standing by: %d queued, %d Services noted, %d observed; want none", n, noted, seen)
	}

	c.lead()
	got := drain(c)
	slices.Sort(got)
	want := []string{"ns/gone"}
	for i := 30; i < 40; i++ {
		want = append(want, fmt.Sprintf("ns/web-%d", i))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("queued on leading: %v, want %v", got, want)
	}
}

// A Service deleted keeps no noted Pods: a Pod event after its last sync
// (its namespace emptied) is taken with its removal.
func TestRemovedServiceForgetsItsNotes(t *testing.T) {
	c, client, _ := started(t, everything, node1, service("web", map[string]string{"app": "web"}),
		testutil.NewPod(testNS, "a").Label("app", "web").Node("node-1").IP("10.0.0.1").Ready(true).Build())
	syncUntil(t, c, "ns/web")
	c.notes.add("ns/web", "a") // a Pod event after the sync
	if err := client.CoreV1().Services(testNS).Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCached(t, "the deletion", func() bool { return len(c.cache.Services.List()) == 0 })
	syncUntil(t, c, "ns/web")
	c.notes.mu.Lock()
	defer c.notes.mu.Unlock()
	if _, ok := c.notes.pods["ns/web"]; ok {
		t.Fatalf("a deleted Service's notes kept: %v", c.notes.pods)
	}
}

// An error is printed once while it repeats; after the Service recovered
// (a sync that wrote nothing counts) it is news again, and nothing is kept.
func TestRecoveredErrorIsNewsAgain(t *testing.T) {
	var out bytes.Buffer
	r := NewReporter(&out, &out, false)
	boom := errors.New("the server is currently unable to handle the request")
	r.Error("ns/a", boom)
	r.Error("ns/a", boom)
	r.Recovered("ns/a")
	if len(r.lastErr) != 0 {
		t.Fatalf("kept after recovery: %v", r.lastErr)
	}
	r.Error("ns/a", boom)
	if n := bytes.Count(out.Bytes(), []byte("unable to handle")); n != 2 {
		t.Fatalf("printed %d times, want 2:\n%s", n, out.String())
	}
}
