package controlplane

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Users the API server knows, by kubeconfig context name.
const (
	AdminContext   = "admin"
	LimitedContext = "limited"
	LimitedUser    = "limited"
)

// Options configure Start.
type Options struct {
	// BinDir holds etcd, kube-apiserver, kube-controller-manager and kubectl.
	// Empty means $KUBECTL_SLICES_BIN_DIR.
	BinDir string
	// Dir is where data, logs and the kubeconfig go. Empty means a new
	// temporary directory, removed by Stop.
	Dir string
	// BindAddress and AdvertiseAddress of kube-apiserver; empty means
	// 127.0.0.1. A real node's Pods need an address they can route to.
	BindAddress, AdvertiseAddress string
	// APIServerArgs are more flags for kube-apiserver.
	APIServerArgs []string
	// WebhookClientCert makes the API server present a client certificate
	// to every webhook it calls (an AdmissionConfiguration); its files are
	// in ControlPlane.WebhookClient.
	WebhookClientCert bool
	// AuditLog makes the API server write an audit log of the writes of
	// EndpointSlices, Endpoints and Leases, read by ControlPlane.Audit
	// (audit.go).
	AuditLog bool
}

// ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	BinDir     string
	Dir        string
	Kubeconfig string
	URL        string
	// Admin is a clientset for the admin user.
	Admin kubernetes.Interface
	// AdminConfig is the admin user's rest config.
	AdminConfig *rest.Config
	// WebhookClient, with Options.WebhookClientCert, are the files of the
	// client certificate the API server presents to webhooks.
	WebhookClient *WebhookClient

	ownDir     bool
	opts       Options
	adminToken string
	etcd       *process
	etcdArgs   []string
	etcdURL    string
	apiserver  *process
	apiArgs    []string
	kcm        *process
	// binder is the node whose loop binds Pods (the first started).
	binder *Node
}

// Start launches etcd and kube-apiserver and waits until the API server is
// ready. The caller must call Stop.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	cp := &ControlPlane{BinDir: opts.BinDir, Dir: opts.Dir, opts: opts}
	if cp.BinDir == "" {
		cp.BinDir = os.Getenv("KUBECTL_SLICES_BIN_DIR")
	}
	if cp.BinDir == "" {
		return nil, errors.New("no control-plane binaries: set KUBECTL_SLICES_BIN_DIR (make test does, from hack/build-control-plane.sh)")
	}
	if cp.Dir == "" {
		d, err := os.MkdirTemp("", "kubectl-slices-cp-")
		if err != nil {
			return nil, err
		}
		cp.Dir, cp.ownDir = d, true
	}
	if err := cp.start(ctx); err != nil {
		cp.Stop()
		return nil, err
	}
	return cp, nil
}

func (cp *ControlPlane) start(ctx context.Context) error {
	etcdPort, err := freePort()
	if err != nil {
		return err
	}
	peerPort, err := freePort()
	if err != nil {
		return err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	cp.etcdURL = etcdURL
	cp.etcdArgs = []string{"--data-dir", filepath.Join(cp.Dir, "etcd"), "--name", "default",
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default=" + peerURL, "--unsafe-no-fsync", "--log-level", "warn"}
	cp.etcd, err = startProcess(cp.Dir, "etcd", filepath.Join(cp.BinDir, "etcd"), cp.etcdArgs...)
	if err != nil {
		return err
	}

	secrets, err := cp.writeSecrets()
	if err != nil {
		return err
	}
	apiPort, err := freePort()
	if err != nil {
		return err
	}
	cp.URL = fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	bind, advertise := cp.opts.BindAddress, cp.opts.AdvertiseAddress
	if bind == "" {
		bind = "127.0.0.1"
	}
	if advertise == "" {
		advertise = "127.0.0.1"
	}
	cp.apiArgs = []string{"--etcd-servers", etcdURL, "--bind-address", bind, "--advertise-address", advertise,
		"--secure-port", strconv.Itoa(apiPort), "--cert-dir", filepath.Join(cp.Dir, "certs"),
		"--token-auth-file", secrets.tokens, "--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", secrets.saPub, "--service-account-signing-key-file", secrets.saKey,
		"--api-audiences", "https://kubernetes.default.svc.cluster.local",
		// Dual-stack, so the fidelity suite can cover IPv6 and dual-stack Services.
		"--service-cluster-ip-range", "10.96.0.0/16,fd00:10:96::/112",
		"--enable-priority-and-fairness=false", "--profiling=false", "--v=1"}
	if cp.opts.WebhookClientCert {
		args, err := cp.writeWebhookClientAuth()
		if err != nil {
			return err
		}
		cp.apiArgs = append(cp.apiArgs, args...)
	}
	if cp.opts.AuditLog {
		args, err := cp.writeAuditPolicy()
		if err != nil {
			return err
		}
		cp.apiArgs = append(cp.apiArgs, args...)
	}
	// Last, so that a test's flag wins over the defaults above.
	cp.apiArgs = append(cp.apiArgs, cp.opts.APIServerArgs...)
	cp.apiserver, err = startProcess(cp.Dir, "kube-apiserver", filepath.Join(cp.BinDir, "kube-apiserver"), cp.apiArgs...)
	if err != nil {
		return err
	}
	if err := cp.waitReady(ctx); err != nil {
		return err
	}
	if err := cp.writeKubeconfig(); err != nil {
		return err
	}
	cp.AdminConfig = &rest.Config{Host: cp.URL, BearerToken: cp.adminToken, QPS: 200, Burst: 400,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		// Tests write non-canonical IPs on purpose; the API's advice is noise.
		WarningHandler: rest.NoWarnings{}}
	cp.Admin, err = kubernetes.NewForConfig(cp.AdminConfig)
	return err
}

type secretFiles struct{ tokens, saKey, saPub string }

// writeSecrets makes the token file (admin in system:masters, a limited
// user, the controller manager, also in system:masters so that one token
// serves every controller it may be asked to run, and the kubelets of the
// real nodes, StartNode) and the service-account
// signing key.
func (cp *ControlPlane) writeSecrets() (secretFiles, error) {
	s := secretFiles{tokens: filepath.Join(cp.Dir, "tokens.csv"),
		saKey: filepath.Join(cp.Dir, "sa.key"), saPub: filepath.Join(cp.Dir, "sa.pub")}
	cp.adminToken = randomToken()
	tokens := fmt.Sprintf("%s,admin,admin,\"system:masters\"\n%s,%s,limited,\"\"\n%s,system:kube-controller-manager,kcm,\"system:masters\"\n"+
		"%s,%s,kubelet,\"system:nodes,system:masters\"\n%s,%s,kubelet-b,\"system:nodes,system:masters\"\n",
		cp.adminToken, randomToken(), LimitedUser, randomToken(), randomToken(), kubeletUser(NodeName), randomToken(), kubeletUser(NodeNameB))
	if err := os.WriteFile(s.tokens, []byte(tokens), 0o600); err != nil {
		return s, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return s, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return s, err
	}
	if err := os.WriteFile(s.saKey, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return s, err
	}
	return s, os.WriteFile(s.saPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// tokenOf reads a user's token back from the token file.
func (cp *ControlPlane) tokenOf(user string) string {
	b, _ := os.ReadFile(filepath.Join(cp.Dir, "tokens.csv"))
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ",")
		if len(f) > 2 && f[1] == user {
			return f[0]
		}
	}
	return ""
}

// answersOK reports whether a GET of url (with token, when not empty)
// answers 200: the readiness probe of every process the control plane waits
// for.
func answersOK(ctx context.Context, client *http.Client, url, token string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitReady polls /readyz until it answers ok, a process dies or 90 s pass.
func (cp *ControlPlane) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // loopback, self-signed
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		for _, p := range []*process{cp.etcd, cp.apiserver} {
			if p.exited() {
				return fmt.Errorf("%s exited during start-up:\n%s", p.name, tail(p.log.Name(), 2000))
			}
		}
		if answersOK(ctx, client, cp.URL+"/readyz", cp.adminToken) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("kube-apiserver not ready after 90s:\n%s", tail(cp.apiserver.log.Name(), 2000))
}

// writeKubeconfig writes a kubeconfig with an admin and a limited context;
// admin is current.
func (cp *ControlPlane) writeKubeconfig() error {
	cp.Kubeconfig = filepath.Join(cp.Dir, "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: %s
- name: %s
  user:
    token: %s
contexts:
- name: %s
  context: {cluster: local, user: admin, namespace: default}
- name: %s
  context: {cluster: local, user: %s, namespace: default}
current-context: %s
`, cp.URL, cp.adminToken, LimitedUser, cp.tokenOf(LimitedUser), AdminContext, LimitedContext, LimitedUser, AdminContext)
	if err := os.WriteFile(cp.Kubeconfig, []byte(cfg), 0o600); err != nil {
		return err
	}
	_, err := clientcmd.LoadFromFile(cp.Kubeconfig)
	return err
}

// Kubectl returns the path of the kubectl built with the control plane.
func (cp *ControlPlane) Kubectl() string { return filepath.Join(cp.BinDir, "kubectl") }

// StartControllerManager runs kube-controller-manager with only the
// EndpointSlice controller: the upstream behaviour kubectl-slices is
// compared with.
func (cp *ControlPlane) StartControllerManager(ctx context.Context) error {
	return cp.StartControllers(ctx, "endpointslice-controller")
}

// StartControllers runs kube-controller-manager with only the named
// controllers (e.g. "endpointslice-mirroring-controller",
// "endpoints-controller"). One runs at a time: StopControllerManager first.
func (cp *ControlPlane) StartControllers(ctx context.Context, controllers ...string) error {
	return cp.StartControllersWith(ctx, nil, controllers...)
}

// StartControllersWith is StartControllers with more flags for
// kube-controller-manager (e.g. --endpointslice-updates-batch-period=2s).
func (cp *ControlPlane) StartControllersWith(ctx context.Context, flags []string, controllers ...string) error {
	if cp.kcm != nil && !cp.kcm.exited() {
		return errors.New("kube-controller-manager is already running")
	}
	kc := filepath.Join(cp.Dir, "kcm.kubeconfig")
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster: {server: %q, insecure-skip-tls-verify: true}\n"+
		"users:\n- name: kcm\n  user: {token: %q}\ncontexts:\n- name: kcm\n  context: {cluster: local, user: kcm}\ncurrent-context: kcm\n",
		cp.URL, cp.tokenOf("system:kube-controller-manager"))
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	args := append([]string{"--kubeconfig", kc, "--controllers", strings.Join(controllers, ","), "--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(port),
		"--use-service-account-credentials=false", "--v=1"}, flags...)
	cp.kcm, err = startProcess(cp.Dir, "kube-controller-manager", filepath.Join(cp.BinDir, "kube-controller-manager"), args...)
	if err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond)
	if cp.kcm.exited() {
		return fmt.Errorf("kube-controller-manager exited:\n%s", tail(cp.kcm.log.Name(), 2000))
	}
	return nil
}

// StopControllerManager stops kube-controller-manager, as an outage would.
func (cp *ControlPlane) StopControllerManager() {
	cp.kcm.stop(5 * time.Second)
}

// KillControllerManager kills kube-controller-manager with SIGKILL, as a
// crash or an OOM kill would: nothing of it runs on.
func (cp *ControlPlane) KillControllerManager() {
	cp.kcm.stop(-1)
}

// StopAPIServer kills kube-apiserver (etcd keeps running), as a crash
// would: clients see their connections drop and then refused.
func (cp *ControlPlane) StopAPIServer() {
	cp.apiserver.stop(0)
}

// StartAPIServer starts kube-apiserver again on the same port, with the same
// etcd and credentials, and waits until it is ready.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	var err error
	cp.apiserver, err = startProcess(cp.Dir, "kube-apiserver-restarted", filepath.Join(cp.BinDir, "kube-apiserver"), cp.apiArgs...)
	if err != nil {
		return err
	}
	return cp.waitReady(ctx)
}

// SideAPIServer starts a second kube-apiserver on another port, on the same
// etcd, and returns an admin client for it and a function that stops it:
// the way to change the cluster while the main API server is down.
func (cp *ControlPlane) SideAPIServer(ctx context.Context) (kubernetes.Interface, func(), error) {
	port, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	args := append([]string(nil), cp.apiArgs...)
	for i := range args {
		if args[i] == "--secure-port" {
			args[i+1] = strconv.Itoa(port)
		}
	}
	p, err := startProcess(cp.Dir, "kube-apiserver-side", filepath.Join(cp.BinDir, "kube-apiserver"), args...)
	if err != nil {
		return nil, nil, err
	}
	stop := func() { p.stop(5 * time.Second) }
	side := &ControlPlane{URL: fmt.Sprintf("https://127.0.0.1:%d", port), adminToken: cp.adminToken, etcd: cp.etcd, apiserver: p}
	if err := side.waitReady(ctx); err != nil {
		stop()
		return nil, nil, err
	}
	cfg := rest.CopyConfig(cp.AdminConfig)
	cfg.Host = side.URL
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return client, stop, nil
}

// ControllerManagerPID is kube-controller-manager's process id, 0 if none.
func (cp *ControlPlane) ControllerManagerPID() int {
	if cp.kcm == nil || cp.kcm.cmd.Process == nil {
		return 0
	}
	return cp.kcm.cmd.Process.Pid
}

// Stop ends every process the control plane started and removes its
// directory if Start created it.
func (cp *ControlPlane) Stop() {
	if cp == nil {
		return
	}
	cp.kcm.stop(5 * time.Second)
	cp.apiserver.stop(10 * time.Second)
	cp.etcd.stop(5 * time.Second)
	if cp.ownDir && os.Getenv("KUBECTL_SLICES_KEEP_DIR") == "" {
		_ = os.RemoveAll(cp.Dir)
	}
}
