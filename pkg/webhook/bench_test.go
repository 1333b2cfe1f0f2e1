package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// BenchmarkServiceFindings judges a Service selecting 5,000 Pods, the
// shape of make bench-webhook's slowest admissions.
func BenchmarkServiceFindings(b *testing.B) {
	var pods []*corev1.Pod
	for i := range 5000 {
		pods = append(pods, pod(fmt.Sprintf("web-%04d", i), map[string]string{"app": "web"}, fmt.Sprintf("10.2.%d.%d", i/250, i%250+1), "web-rs", httpPort))
	}
	for _, target := range []string{"http", "metrics"} {
		s := svc(map[string]string{"app": "web"}, sport("http", 80, intstr.FromString(target)))
		b.Run(target, func(b *testing.B) {
			for b.Loop() {
				if _, err := ServiceFindings(s, Facts{Pods: pods}, reconcile.DefaultOptions()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHandler: the four Service shapes of make bench-webhook through
// the handler over a cluster.Cache of 5,000 Pods: decode, select from the
// cache, judge, encode.
func BenchmarkHandler(b *testing.B) {
	var pods []*corev1.Pod
	for i := range 5000 {
		pods = append(pods, pod(fmt.Sprintf("bench-%d", i), map[string]string{"app": "bench", "shard": fmt.Sprint(i % 10)}, fmt.Sprintf("10.2.%d.%d", i/250, i%250+1), "bench-rs", httpPort))
	}
	mux := cachedMux(pods)
	for name, s := range map[string]*corev1.Service{
		"all":    svc(map[string]string{"app": "bench"}, sport("http", 80, intstr.FromString("http"))),
		"noport": svc(map[string]string{"app": "bench"}, sport("http", 80, intstr.FromString("metrics"))),
		"typo":   svc(map[string]string{"app": "Bench"}, sport("http", 80, intstr.FromString("http"))),
		"shard":  svc(map[string]string{"app": "bench", "shard": "3"}, sport("http", 80, intstr.FromString("http"))),
	} {
		body, _ := json.Marshal(admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{UID: "u", Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: mustJSON(s)}}})
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, ServicesPath, bytes.NewReader(body)))
			}
		})
	}
}

// BenchmarkHandlerCrowded: one Service admitted into a namespace of 100
// workloads of 15 Pods, in a cache of 100 such namespaces (150,000 Pods,
// 10,000 groups: make bench-envelope's top step). An admission's work is
// its namespace's; what the rest of the cluster adds is the cost of
// finding that namespace's groups among all of them.
func BenchmarkHandlerCrowded(b *testing.B) {
	var pods []*corev1.Pod
	for n := range 100 {
		for w := range 100 {
			for i := range 15 {
				p := pod(fmt.Sprintf("w%d-%d", w, i), map[string]string{"app": fmt.Sprintf("w%d", w)}, fmt.Sprintf("10.%d.%d.%d", n, w, i+1), fmt.Sprintf("w%d-rs", w), httpPort)
				p.Namespace = fmt.Sprintf("ns-%d", n)
				if n == 0 {
					p.Namespace = "ns" // svc's
				}
				pods = append(pods, p)
			}
		}
	}
	mux := cachedMux(pods)
	s := svc(map[string]string{"app": "w7"}, sport("http", 80, intstr.FromString("http")))
	body, _ := json.Marshal(admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{UID: "u", Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: mustJSON(s)}}})
	for b.Loop() {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, ServicesPath, bytes.NewReader(body)))
	}
}

// cachedMux is the handler's mux over a cluster.Cache holding pods, its
// group memo told of each as the informer's notifications do.
func cachedMux(pods []*corev1.Pod) *http.ServeMux {
	c := &cluster.Cache{Pods: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cluster.PodIndexers()),
		Slices: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})}
	track := c.TrackPodGroups()
	for _, p := range pods {
		r := record(p)
		_ = c.Pods.Add(r)
		track.OnAdd(r, true)
	}
	h := &Handler{Plan: reconcile.DefaultOptions()}
	h.SetSource(CacheSource{Cache: c})
	return h.Mux()
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
