package daemon

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/controller"
	"github.com/kubectl-slices/kubectl-slices/pkg/progress"
)

// syncBuffer is a bytes.Buffer safe for the bar's writes and the test's
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// draws are the counts drawn ("Services 2/3"), in order, each once.
func draws(out string) []string {
	var d []string
	for _, l := range strings.Split(out, "\r\033[K") {
		l = strings.SplitN(l, " (", 2)[0]
		if l != "" && (len(d) == 0 || d[len(d)-1] != l) {
			d = append(d, l)
		}
	}
	return d
}

// stepClock moves a second at each reading: the bar draws every count it
// is given, whatever the poller's timing.
func stepClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

func cacheOf(t *testing.T, svcs ...*corev1.Service) *cluster.Cache {
	c := cluster.NewCache(fake.NewClientset(), "")
	if err := c.Fill(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs {
		c.AddService(s)
	}
	return c
}

func svc(ns, name string, labels map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

// The first pass counts the selected Services, counts done those that left
// the queue (never fewer than before, though events queue some again) and
// ends, clearing the line, once the queue is empty at two polls in a row.
func TestFirstPass(t *testing.T) {
	c := cacheOf(t, svc("shop", "web", map[string]string{"tier": "web"}), svc("shop", "api", map[string]string{"tier": "web"}),
		svc("shop", "db", map[string]string{"tier": "data"}), svc("shop", "cache", map[string]string{"tier": "web"}))
	sel, _ := labels.Parse("tier=web")
	queue := []int{0, 3, 3, 1, 2, 0, 1, 0, 0} // the handlers lag at first; an event queues one again
	var mu sync.Mutex
	queued := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := queue[0]
		if len(queue) > 1 {
			queue = queue[1:]
		}
		return n
	}
	var out syncBuffer
	bar := progress.New(&out, 0, stepClock(), 200)
	done := make(chan struct{})
	go func() {
		firstPass(context.Background(), bar, c, controller.Options{Selector: sel}, queued)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the first pass did not end on an empty queue")
	}
	got := draws(out.String())
	want := []string{"Services 0/3", "Services 2/3", "Services 3/3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("drawn %q, want %q", got, want)
	}
	if !strings.HasSuffix(out.String(), "\r\033[K") {
		t.Errorf("the line is not cleared at the end: %q", out.String())
	}
}

// Services named are the only ones counted.
func TestFirstPassNames(t *testing.T) {
	c := cacheOf(t, svc("shop", "web", nil), svc("shop", "api", nil), svc("other", "web", nil))
	var out syncBuffer
	bar := progress.New(&out, 0, stepClock(), 200)
	firstPass(context.Background(), bar, c, controller.Options{Names: map[string]bool{"shop/web": true, "other/web": true}}, func() int { return 0 })
	if got := draws(out.String()); strings.Join(got, "|") != "Services 0/2|Services 2/2" {
		t.Errorf("drawn %q, want the 2 Services named, then done", got)
	}
}
