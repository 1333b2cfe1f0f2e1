package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyread"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

// kube-proxy's ports: /healthz on every address, metrics and /proxyMode
// on 127.0.0.1 (its defaults).
const (
	HealthzPort = 10256
	MetricsPort = 10249
	// maxHealthChecks bounds the health check node ports read per node.
	maxHealthChecks = 32
)

// Options configure a probe.
type Options struct {
	Client    kubernetes.Interface
	Transport Transport
	// Readers read the rules of a proxy mode; a mode without one leaves
	// the rules tier UNKNOWN.
	Readers map[proxyread.Mode]proxyread.Reader
	// NodeTimeout bounds all of one node's reads, Concurrency how many
	// nodes are read at once, Limit the bytes of any one answer.
	NodeTimeout time.Duration
	Concurrency int
	Limit       int64
}

// Nodes lists the Nodes; a node the caller may not list fails the run.
func Nodes(ctx context.Context, client kubernetes.Interface) ([]*corev1.Node, error) {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Node, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// readNodes reads every node's tiers that r allows, at most Concurrency
// nodes at once, each within NodeTimeout; it never fails: what could not be
// read is in each NodeState.
func readNodes(ctx context.Context, o Options, r rights, nodes []*corev1.Node, svcs []verdict.Service) []verdict.NodeState {
	var proxies map[string]proxyPod
	var listErr string
	proxies, err := findProxies(ctx, o.Client)
	switch {
	case apierrors.IsForbidden(err):
		listErr = "forbidden: needs list pods in " + ProxyNamespace
	case err != nil:
		listErr = "cannot list the Pods of " + ProxyNamespace + ": " + err.Error()
	}
	var out []verdict.NodeState
	for _, n := range nodes {
		out = append(out, verdict.NodeState{Node: n})
	}
	g := errgroup.Group{}
	g.SetLimit(max(o.Concurrency, 1))
	for i := range out {
		st := &out[i]
		g.Go(func() error {
			switch p, ok := proxies[st.Node.Name]; {
			case listErr != "":
				st.Unreadable = listErr
			case !verdict.Ready(st.Node):
				st.Unreadable, st.NotReady = "the node is NotReady", true
				if ok {
					st.Proxy, st.Pod = p.kind, p.pod.Namespace+"/"+p.pod.Name
				}
			case !ok:
				st.Unreadable = "no kube-proxy Pod on the node (" + ProxyNamespace + ", k8s-app=kube-proxy)"
			case p.kind != verdict.KubeProxy:
				st.Proxy, st.Pod = p.kind, p.pod.Namespace+"/"+p.pod.Name
				st.Unreadable = fmt.Sprintf("%s (Pod %s) serves this node's Services: a proxy that is not kube-proxy is not supported", p.kind, st.Pod)
			case p.pod.Status.Phase != corev1.PodRunning:
				st.Proxy, st.Pod = p.kind, p.pod.Namespace+"/"+p.pod.Name
				st.Unreadable = fmt.Sprintf("kube-proxy Pod %s is %s, not Running", st.Pod, p.pod.Status.Phase)
			default:
				st.Proxy, st.Pod = p.kind, p.pod.Namespace+"/"+p.pod.Name
				nctx, cancel := context.WithTimeout(ctx, o.NodeTimeout)
				defer cancel()
				o.read(nctx, st, p.pod, r, svcs)
			}
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// read fills one kube-proxy node's tiers, least privilege first. A hung
// kube-proxy (stopped, its HTTP servers wedged) answers neither /healthz
// nor its metrics while its rules stay in the kernel: each HTTP tier has
// at most a quarter of the node's time, so that the rules are still read.
func (o Options) read(ctx context.Context, st *verdict.NodeState, pod *corev1.Pod, r rights, svcs []verdict.Service) {
	ns, name := pod.Namespace, pod.Name
	share := o.NodeTimeout / 4
	if r.proxy != "" {
		st.Healthz = verdict.Denied[verdict.Healthz](r.proxy)
	} else {
		hctx, cancel := context.WithTimeout(ctx, share)
		status, body, err := o.Transport.ProxyGet(hctx, ns, name, HealthzPort, "healthz", o.Limit)
		st.Healthz = result(hctx, share, orStatus(err, status, body), func() (verdict.Healthz, error) { return verdict.ParseHealthz(status, body) })
		st.HealthChecks = o.healthChecks(hctx, share, pod, svcs)
		cancel()
	}
	if r.forward != "" {
		st.Metrics = verdict.Denied[verdict.Metrics](r.forward)
	} else {
		mctx, cancel := context.WithTimeout(ctx, share)
		ans, err := o.Transport.ForwardGet(mctx, ns, name, MetricsPort, []string{"/metrics", "/proxyMode"}, o.Limit)
		st.Metrics = result(mctx, share, err, func() (verdict.Metrics, error) {
			if ans[0].Status != 200 {
				return verdict.Metrics{}, fmt.Errorf("/metrics answered HTTP %d", ans[0].Status)
			}
			mode := ans[1].Body
			if ans[1].Status != 200 {
				mode = nil
			}
			return verdict.ParseMetrics(ans[0].Body, mode)
		})
		cancel()
	}
	o.readRules(ctx, st, pod, r, svcs)
}

// readRules reads the rules with the reader of kube-proxy's mode: the one
// it reports wins; without the metrics tier, the Pod's command line says
// it, or else its --config file (read through the exec the rules need).
func (o Options) readRules(ctx context.Context, st *verdict.NodeState, pod *corev1.Pod, r rights, svcs []verdict.Service) {
	exec := o.Transport.Exec(pod.Namespace, pod.Name, container(pod))
	mode, modeErr := modeOf(pod), ""
	if m := st.Metrics.Value; m != nil && m.Mode != "" {
		mode = m.Mode
	} else if path := configPath(pod); mode == "" && path != "" && r.exec == "" {
		var err error
		if mode, err = configMode(ctx, exec, path, o.Limit); err != nil {
			modeErr = ": " + result(ctx, o.NodeTimeout, err, func() (string, error) { return "", err }).Err
		}
	}
	reader := o.Readers[proxyread.Mode(mode)]
	switch {
	case r.exec != "":
		st.Rules = verdict.Denied[proxyread.Reading](r.exec)
	case mode == "":
		st.Rules = verdict.Result[proxyread.Reading]{Err: "the proxy mode is unknown (read from the metrics port, the Pod's --proxy-mode or its --config file" + ")" + modeErr + ": no rule reader chosen"}
	case reader == nil:
		st.Rules = verdict.Result[proxyread.Reading]{Err: fmt.Sprintf("no rule reader for kube-proxy's %s mode", mode)}
	default:
		reading, err := reader.Read(ctx, exec, verdict.Wants(svcs, st.Node))
		st.Rules = result(ctx, o.NodeTimeout, err, func() (proxyread.Reading, error) { return reading, nil })
	}
}

// healthChecks reads the health check node port of each Service that has
// one (externalTrafficPolicy Local), at most maxHealthChecks per node.
func (o Options) healthChecks(ctx context.Context, within time.Duration, pod *corev1.Pod, svcs []verdict.Service) map[string]verdict.Result[verdict.HealthCheck] {
	out := map[string]verdict.Result[verdict.HealthCheck]{}
	for _, s := range svcs {
		port := s.Service.Spec.HealthCheckNodePort
		if port == 0 || len(out) == maxHealthChecks {
			continue
		}
		status, body, err := o.Transport.ProxyGet(ctx, pod.Namespace, pod.Name, int(port), "", o.Limit)
		out[s.Service.Namespace+"/"+s.Service.Name] = result(ctx, within, orStatus(err, status, body), func() (verdict.HealthCheck, error) { return verdict.ParseHealthCheck(status, body) })
	}
	return out
}

// result words a tier's outcome: a deadline as the time it had (within),
// a Forbidden as the right it lacks, any other error clipped.
func result[T any](ctx context.Context, within time.Duration, err error, parse func() (T, error)) verdict.Result[T] {
	if err == nil {
		v, perr := parse()
		if perr == nil {
			return verdict.Answered(v)
		}
		err = perr
	}
	switch {
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		// A connection's deadline (the ctx's, set on the socket) can
		// pass a moment before the ctx says so.
		return verdict.Result[T]{Err: fmt.Sprintf("no answer within %s", within)}
	case apierrors.IsForbidden(err):
		return verdict.Result[T]{Err: "forbidden: " + english.Clip(err.Error(), english.ClipLen)}
	}
	return verdict.Result[T]{Err: english.Clip(err.Error(), english.ClipLen)}
}

// orStatus tells the API server's own failure to reach the Pod (a
// Kubernetes Status in a non-200 answer) from kube-proxy's answer.
func orStatus(err error, status int, body []byte) error {
	if err != nil || status == http.StatusOK {
		return err
	}
	var st metav1.Status
	if json.Unmarshal(body, &st) != nil || st.Kind != "Status" {
		return nil
	}
	if st.Reason == metav1.StatusReasonForbidden {
		return fmt.Errorf("forbidden: %s", st.Message)
	}
	return fmt.Errorf("the API server could not reach the Pod: %s", st.Message)
}
