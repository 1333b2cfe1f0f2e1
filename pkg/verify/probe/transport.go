package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsread"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyread"
)

// Transport is the I/O towards one node's kube-proxy Pod, every call
// bounded by ctx in time and by limit in bytes.
type Transport interface {
	// ProxyGet GETs path on the Pod's port through the API server's
	// pods/proxy and returns the status and at most limit bytes of body.
	ProxyGet(ctx context.Context, ns, pod string, port int, path string, limit int64) (int, []byte, error)
	// ForwardGet opens one port-forward to the Pod's port (127.0.0.1 in
	// the Pod's network namespace) and GETs each path through it.
	ForwardGet(ctx context.Context, ns, pod string, port int, paths []string, limit int64) ([]Answer, error)
	// ForwardDial opens one port-forward to the Pod's port and returns a
	// dialer of it (a DNS replica's TCP 53) and what closes it.
	ForwardDial(ctx context.Context, ns, pod string, port int) (dnsread.Dial, func(), error)
	// Exec is proxyread's transport into the Pod's container.
	Exec(ns, pod, container string) proxyread.Exec
}

// Answer is one HTTP answer.
type Answer struct {
	Status int
	Body   []byte
}

// ErrTooLarge: the answer was larger than the limit.
var ErrTooLarge = errors.New("answer larger than the limit")

// REST is the Transport of a real cluster: pods/proxy, pods/portforward
// and pods/exec, as kubectl does them (exec and port-forward over
// websockets, falling back to SPDY).
type REST struct {
	Config *rest.Config
	Client kubernetes.Interface
	HTTP   *http.Client
}

// NewREST builds the transport from the client config.
func NewREST(cfg *rest.Config, client kubernetes.Interface) (*REST, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &REST{Config: cfg, Client: client, HTTP: hc}, nil
}

// ProxyGet does not go through client-go's request, which reads an error
// answer's body whole: a node's answer is read up to limit, whatever its
// status.
func (t *REST) ProxyGet(ctx context.Context, ns, pod string, port int, path string, limit int64) (int, []byte, error) {
	u := t.Client.CoreV1().RESTClient().Get().Namespace(ns).Resource("pods").
		Name(pod + ":" + strconv.Itoa(port)).SubResource("proxy").Suffix(path).URL()
	return get(ctx, t.HTTP, u.String(), limit)
}

func get(ctx context.Context, hc *http.Client, url string, limit int64) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := readLimited(resp.Body, limit)
	return resp.StatusCode, body, err
}

// readLimited reads at most limit bytes and fails past them.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w of %d bytes", ErrTooLarge, limit)
	}
	return body, nil
}

// ForwardGet forwards an ephemeral port on 127.0.0.1 to the Pod's port,
// GETs the paths and closes the forward.
func (t *REST) ForwardGet(ctx context.Context, ns, pod string, port int, paths []string, limit int64) ([]Answer, error) {
	local, stop, err := t.forward(ctx, ns, pod, port)
	if err != nil {
		return nil, err
	}
	defer stop()
	hc := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	var out []Answer
	for _, p := range paths {
		status, body, err := get(ctx, hc, fmt.Sprintf("http://127.0.0.1:%d%s", local, p), limit)
		if err != nil {
			return out, fmt.Errorf("GET %s: %w", p, err)
		}
		out = append(out, Answer{Status: status, Body: body})
	}
	return out, nil
}

// ForwardDial forwards an ephemeral port on 127.0.0.1 to the Pod's port
// and returns a dialer of it; stop closes the forward.
func (t *REST) ForwardDial(ctx context.Context, ns, pod string, port int) (dnsread.Dial, func(), error) {
	local, stop, err := t.forward(ctx, ns, pod, port)
	if err != nil {
		return nil, nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(local)))
	dial := func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
	return dial, stop, nil
}

// forward opens one port-forward, as kubectl port-forward does (over
// websockets, falling back to SPDY), and returns its local port.
func (t *REST) forward(ctx context.Context, ns, pod string, port int) (uint16, func(), error) {
	u := t.Client.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(pod).SubResource("portforward").URL()
	rt, upgrader, err := spdy.RoundTripperFor(t.Config)
	if err != nil {
		return 0, nil, err
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, http.MethodPost, u)
	ws, err := portforward.NewSPDYOverWebsocketDialer(u, t.Config)
	if err != nil {
		return 0, nil, err
	}
	dialer = portforward.NewFallbackDialer(ws, dialer, fallback)
	stopCh, ready := make(chan struct{}), make(chan struct{})
	stop := sync.OnceFunc(func() { close(stopCh) })
	var errOut bytes.Buffer
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(port)}, stopCh, ready, io.Discard, &limitedBuffer{buf: &errOut, limit: 4096})
	if err != nil {
		return 0, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- fw.ForwardPorts() }()
	select {
	case <-ctx.Done():
		stop()
		return 0, nil, ctx.Err()
	case err := <-done:
		return 0, nil, fmt.Errorf("port-forward: %v", err)
	case <-ready:
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		stop()
		return 0, nil, fmt.Errorf("port-forward: no local port: %v", err)
	}
	return ports[0].Local, stop, nil
}

// fallback: the websocket upgrade failed (an API server without
// websockets, a proxy, or one that authorizes the upgrade as "get", which
// the documented Role does not grant): SPDY, a POST, is tried. The error
// is client-go's, of k8s.io/streaming's httpstream since 1.36 (not
// apimachinery's, whose type it no longer is).
func fallback(err error) bool {
	return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
}

// Exec runs argv in the container through pods/exec, as kubectl exec
// does; standard output past limit stops the command with ErrTooLarge.
func (t *REST) Exec(ns, pod, container string) proxyread.Exec {
	return func(ctx context.Context, argv []string, stdin []byte, limit int64) ([]byte, error) {
		req := t.Client.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(pod).SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Container: container, Command: argv, Stdin: stdin != nil, Stdout: true, Stderr: true}, scheme.ParameterCodec)
		spdyExec, err := remotecommand.NewSPDYExecutor(t.Config, http.MethodPost, req.URL())
		if err != nil {
			return nil, err
		}
		wsExec, err := remotecommand.NewWebSocketExecutor(t.Config, http.MethodGet, req.URL().String())
		if err != nil {
			return nil, err
		}
		ex, err := remotecommand.NewFallbackExecutor(wsExec, spdyExec, fallback)
		if err != nil {
			return nil, err
		}
		var out, errOut bytes.Buffer
		opts := remotecommand.StreamOptions{Stdout: &limitedBuffer{buf: &out, limit: limit}, Stderr: &limitedBuffer{buf: &errOut, limit: 4096}}
		if stdin != nil {
			opts.Stdin = bytes.NewReader(stdin)
		}
		if err := ex.StreamWithContext(ctx, opts); err != nil {
			if errOut.Len() > 0 {
				return nil, fmt.Errorf("%w: %s", err, english.QuoteClip(errOut.String(), english.ClipLen))
			}
			return nil, err
		}
		return out.Bytes(), nil
	}
}

// limitedBuffer fails a write past its limit, which ends the stream.
type limitedBuffer struct {
	buf   *bytes.Buffer
	limit int64
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if int64(l.buf.Len()+len(p)) > l.limit {
		return 0, fmt.Errorf("%w of %d bytes", ErrTooLarge, l.limit)
	}
	return l.buf.Write(p)
}
