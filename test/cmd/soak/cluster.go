package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
	"github.com/kubectl-slices/kubectl-slices/test/faultproxy"
)

// The Lease the replicas elect a leader with, in the namespace `kubectl
// slices deploy` makes.
const (
	leaseNamespace = "kubectl-slices"
	leaseName      = "kubectl-slices"
)

// kcmControllers: the EndpointSlice controller the loop stands by beside,
// and the namespace controller and garbage collector, without which a
// deleted namespace would stay terminating and a deleted Service's slices
// stay behind.
var kcmControllers = []string{"endpointslice-controller", "namespace-controller", "garbage-collector-controller"}

// soakAuditPolicy is the harness's policy (the writes of EndpointSlices,
// Endpoints and Leases, at Metadata) and the churn's writes of Pods,
// Services and namespaces: the takeover check dates a change the
// controller missed by when the API server received it. The namespace
// controller deletes a namespace's slices by deletecollection.
const soakAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted, Panic]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
  resources:
  - group: discovery.k8s.io
    resources: [endpointslices]
  - group: ""
    resources: [endpoints, pods, pods/status, services, namespaces]
  - group: coordination.k8s.io
    resources: [leases]
- level: None
`

// startCluster starts the control plane (its audit log under the soak's
// policy: a later --audit-policy-file wins), the Nodes and the controller
// manager.
func (s *soak) startCluster(ctx context.Context) error {
	dir := filepath.Join(s.out, "control-plane")
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s holds a previous run's control plane: give the soak a new directory", s.out)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	policy := filepath.Join(s.out, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(soakAuditPolicy), 0o644); err != nil {
		return err
	}
	bin, err := linkBinaries(os.Getenv("KUBECTL_SLICES_BIN_DIR"), filepath.Join(s.out, "control-plane-bin"))
	if err != nil {
		return err
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{BinDir: bin, Dir: dir, AuditLog: true, APIServerArgs: []string{"--audit-policy-file", policy}})
	if err != nil {
		return err
	}
	s.cp = cp
	for _, n := range soakNodes {
		if err := cp.Node(ctx, controlplane.NodeSpec{Name: n.Name, Zone: n.Zone}); err != nil {
			return err
		}
	}
	s.ids = identities{Controller: "system:kube-controller-manager", Admin: "admin"}
	return s.startControllerManager(ctx)
}

// linkBinaries makes a directory of symbolic links to the control plane's
// binaries and returns it. The soak runs them from there: their command
// lines then name the soak's directory, not the shared cache, so that
// make e2e's check for processes left behind, run by someone else during a
// long soak, does not take the soak's for its own.
func linkBinaries(from, to string) (string, error) {
	if from == "" {
		return "", errors.New("KUBECTL_SLICES_BIN_DIR is not set")
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return "", err
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kubectl"} {
		if err := os.Symlink(filepath.Join(from, b), filepath.Join(to, b)); err != nil {
			return "", err
		}
	}
	return to, nil
}

func (s *soak) startControllerManager(ctx context.Context) error {
	return s.cp.StartControllersWith(ctx, nil, kcmControllers...)
}

// client is a clientset of the admin's for the soak's own reads and
// writes, as protobuf, unthrottled on the client's side.
func (s *soak) client() (kubernetes.Interface, error) {
	cfg := rest.CopyConfig(s.cp.AdminConfig)
	cfg.QPS, cfg.Burst = -1, 0
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	return kubernetes.NewForConfig(cfg)
}

// adminEnv runs kubectl as the admin with the plugin on PATH.
func (s *soak) adminEnv() []string {
	return append(os.Environ(), "KUBECONFIG="+s.cp.Kubeconfig, "PATH="+s.pluginDir+string(os.PathListSeparator)+s.cp.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// kubectl runs kubectl as the admin, bounded, and returns its output and
// exit code.
func (s *soak) kubectl(ctx context.Context, limit time.Duration, args ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.cp.Kubectl(), args...)
	cmd.Env = s.adminEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil {
		return out.String(), ee.ExitCode(), nil
	}
	if err != nil {
		return out.String(), -1, fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	return out.String(), 0, nil
}

// grantReplicas applies the RBAC `kubectl slices deploy` prints, bound to
// both replicas' ServiceAccounts (deploy names one), and waits until the
// authorizer grants it.
func (s *soak) grantReplicas(ctx context.Context, accounts []string) error {
	out, code, err := s.kubectl(ctx, time.Minute, "slices", "deploy", "-o", "json")
	if err != nil || code != 0 {
		return fmt.Errorf("kubectl slices deploy: exit %d, %v\n%s", code, err, out)
	}
	var list unstructured.UnstructuredList
	if err := list.UnmarshalJSON([]byte(out)); err != nil {
		return fmt.Errorf("kubectl slices deploy -o json: %w", err)
	}
	var subjects []any
	for _, a := range accounts {
		subjects = append(subjects, map[string]any{"kind": "ServiceAccount", "name": a, "namespace": leaseNamespace})
	}
	var items []any
	for _, o := range list.Items {
		switch o.GetKind() {
		case "Namespace", "ClusterRole", "Role":
		case "ClusterRoleBinding", "RoleBinding":
			o.Object["subjects"] = subjects
		default:
			continue // the workload (no kubelet runs here) and its ServiceAccount
		}
		items = append(items, o.Object)
	}
	b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		return err
	}
	path := filepath.Join(s.out, "rbac.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return err
	}
	if out, code, err := s.kubectl(ctx, time.Minute, "apply", "-f", path); err != nil || code != 0 {
		return fmt.Errorf("kubectl apply -f %s: exit %d, %v\n%s", path, code, err, out)
	}
	for _, a := range accounts {
		for _, want := range []authorizationv1.ResourceAttributes{
			{Verb: "create", Group: "discovery.k8s.io", Resource: "endpointslices"},
			{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: leaseNamespace, Name: leaseName},
		} {
			if err := s.waitAccess(ctx, a, want); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitAccess waits until the authorizer allows a ServiceAccount an action:
// RBAC reaches it through its informers, a moment after the write.
func (s *soak) waitAccess(ctx context.Context, account string, attrs authorizationv1.ResourceAttributes) error {
	user := controlplane.ServiceAccountUser(leaseNamespace, account)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		r, err := s.cp.Admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + leaseNamespace, "system:authenticated"},
				ResourceAttributes: &attrs}}, metav1.CreateOptions{})
		if err == nil && r.Status.Allowed {
			return nil
		}
		if !sleep(ctx, 200*time.Millisecond) {
			return ctx.Err()
		}
	}
	return fmt.Errorf("%s is still not allowed to %s %s after 30s", user, attrs.Verb, attrs.Resource)
}

// newReplicas makes the replicas: each its own ServiceAccount, its own
// fault proxy to the API server, its own health port.
func (s *soak) newReplicas(ctx context.Context) error {
	names := []string{"a", "b"}
	var accounts []string
	for _, n := range names {
		accounts = append(accounts, "soak-"+n)
	}
	// The namespace first: the ServiceAccounts live in it.
	if err := s.grantReplicas(ctx, accounts); err != nil {
		return err
	}
	target := strings.TrimPrefix(s.cp.URL, "https://")
	for i, n := range names {
		p, err := faultproxy.Start(target)
		if err != nil {
			return err
		}
		s.proxies = append(s.proxies, p)
		kc, err := s.cp.ServiceAccountKubeconfig(ctx, leaseNamespace, accounts[i], p.URL())
		if err != nil {
			return err
		}
		tokens, err := newTokenFile(s.cp.Admin, kc, leaseNamespace, accounts[i])
		if err != nil {
			return err
		}
		s.tokens = append(s.tokens, tokens)
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		r := &replica{Name: n, User: controlplane.ServiceAccountUser(leaseNamespace, accounts[i]), proxy: p, healthAddr: addr,
			kubectl: s.cp.Kubectl(), plugin: filepath.Join(s.pluginDir, "kubectl-slices"), logPath: filepath.Join(s.out, "replica-"+n+".log"),
			args: []string{"slices", "sync", "--watch", "--standby", "--all", "-A",
				"--leader-elect", "--leader-elect-resource-namespace", leaseNamespace,
				"--leader-elect-lease-duration", s.o.LeaseDuration.String(), "--leader-elect-renew-deadline", s.o.RenewDeadline.String(),
				"--leader-elect-retry-period", s.o.RetryPeriod.String(),
				"--takeover-after", s.o.TakeoverAfter.String(), "--handback-hold", s.o.HandbackHold.String(),
				"--health-addr", addr},
			env: append(os.Environ(), "KUBECONFIG="+kc,
				"PATH="+s.pluginDir+string(os.PathListSeparator)+s.cp.BinDir+string(os.PathListSeparator)+os.Getenv("PATH")),
		}
		s.replicas = append(s.replicas, r)
		s.ids.Ours = append(s.ids.Ours, r.User)
	}
	return nil
}

// freeAddr asks the kernel for a free loopback port.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// buildPlugin builds kubectl-slices as make build does (its build tags)
// into dir.
func buildPlugin(ctx context.Context, root, dir string) error {
	tags, err := controlplane.BuildTags(root)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", tags, "-o", filepath.Join(dir, "kubectl-slices"),
		"-ldflags", "-X github.com/kubectl-slices/kubectl-slices/pkg/cmd.Version=v0.0.0-soak", "./cmd/kubectl-slices")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/kubectl-slices: %v\n%s", err, out)
	}
	return nil
}

// repoRoot is the directory above dir holding hack/build-tags.
func repoRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "hack", "build-tags")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no repository (hack/build-tags) above %s", dir)
		}
	}
}
