package e2enode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// verifyReport is the part of `kubectl slices verify -o json` the tests read.
type verifyReport struct {
	Status    string       `json:"status"`
	Nodes     []verifyNode `json:"nodes"`
	DNS       []dnsRow     `json:"dns"`
	Diagnosis string       `json:"diagnosis"`
	Next      string       `json:"next"`
}

type verifyNode struct {
	Node       string          `json:"node"`
	Proxy      string          `json:"proxy"`
	Mode       string          `json:"mode"`
	Pod        string          `json:"pod"`
	LastSync   *time.Time      `json:"lastSync"`
	Expected   int             `json:"expected"`
	Programmed int             `json:"programmed"`
	Missing    []verifyFinding `json:"missing"`
	Extra      []verifyFinding `json:"extra"`
	Status     string          `json:"status"`
	Reason     string          `json:"reason"`
	Tiers      []struct {
		Tier   string `json:"tier"`
		OK     bool   `json:"ok"`
		Reason string `json:"reason"`
	} `json:"tiers"`
	Evidence []struct {
		Service  string `json:"service"`
		Dispatch bool   `json:"dispatch"`
		Cluster  struct {
			Name      string   `json:"name"`
			Endpoints []string `json:"endpoints"`
		} `json:"cluster"`
	} `json:"evidence"`
	Execs int   `json:"execs"`
	Bytes int64 `json:"bytesRead"`
}

type verifyFinding struct {
	Service  string `json:"service"`
	What     string `json:"what"`
	Chain    string `json:"chain"`
	Endpoint string `json:"endpoint"`
	Detail   string `json:"detail"`
}

type dnsRow struct {
	Replica string `json:"replica"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
}

// verifyJSON runs kubectl slices verify -o json with args and parses it.
func verifyJSON(t testing.TB, args ...string) (verifyReport, result) {
	t.Helper()
	return verifyJSONWithin(t, 2*time.Minute, args...)
}

// verifyJSONWithin is verifyJSON within timeout (kubectlWithin's).
func verifyJSONWithin(t testing.TB, timeout time.Duration, args ...string) (verifyReport, result) {
	t.Helper()
	r := kubectlWithin(t, timeout, "", append([]string{"slices", "verify", "-o", "json"}, args...)...)
	var rep verifyReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("verify %s: -o json: %v (exit %d)\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, r.Code, r.Stdout, r.Stderr)
	}
	return rep, r
}

func (r verifyReport) node(t *testing.T, name string) verifyNode {
	t.Helper()
	for _, n := range r.Nodes {
		if n.Node == name {
			return n
		}
	}
	t.Fatalf("no row for node %s in %+v", name, r.Nodes)
	return verifyNode{}
}

// tiers is the node's reason per tier ("" when the tier answered).
func (n verifyNode) tiers() map[string]string {
	out := map[string]string{}
	for _, t := range n.Tiers {
		out[t.Tier] = t.Reason
		if t.OK {
			out[t.Tier] = "ok"
		}
	}
	return out
}

// endpoints are the endpoints the node's cluster chain of the Service
// (namespace/name) sends to, as verify read them.
func (n verifyNode) endpoints(svc string) []string {
	for _, e := range n.Evidence {
		if e.Service == svc {
			return e.Cluster.Endpoints
		}
	}
	return nil
}

func (n verifyNode) findings(what string, list []verifyFinding) []string {
	var out []string
	for _, f := range list {
		if f.What == what {
			out = append(out, f.Endpoint)
		}
	}
	return out
}

// wantCode fails the test unless verify exited code.
func wantCode(t *testing.T, r result, code int, what string) {
	t.Helper()
	if r.Code != code {
		t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", what, r.Code, code, r.Stdout, r.Stderr)
	}
}

// verifyUntil runs verify (-o json, args) until it exits code, at most
// timeout.
func verifyUntil(t testing.TB, timeout time.Duration, code int, args ...string) verifyReport {
	t.Helper()
	return verifyUntilEach(t, timeout, 2*time.Minute, code, args...)
}

// verifyUntilEach is verifyUntil with each run of verify within each.
func verifyUntilEach(t testing.TB, timeout, each time.Duration, code int, args ...string) verifyReport {
	t.Helper()
	var rep verifyReport
	eventually(t, timeout, fmt.Sprintf("verify %s exits %d", strings.Join(args, " "), code), func() error {
		var r result
		rep, r = verifyJSONWithin(t, each, args...)
		if r.Code != code {
			return fmt.Errorf("exit %d: %s", r.Code, rep.Diagnosis)
		}
		return nil
	})
	return rep
}

// processOf finds, among the processes of the test's PID namespace (both
// nodes' share it), the one running the program want[0] (its path ends
// so) whose command line has every other word of want.
func processOf(t testing.TB, want ...string) int {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []int
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil || len(b) == 0 {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		ok := argv[0] == want[0] || strings.HasSuffix(argv[0], "/"+want[0])
		for _, w := range want[1:] {
			ok = ok && slices.Contains(argv, w)
		}
		if ok {
			var pid int
			fmt.Sscanf(strings.Split(d, "/")[2], "%d", &pid)
			found = append(found, pid)
		}
	}
	if len(found) != 1 {
		t.Fatalf("processes with %q: %v, want one", want, found)
	}
	return found[0]
}

// stopProcess SIGSTOPs pid until the returned func (also a cleanup)
// SIGCONTs it.
func stopProcess(t *testing.T, pid int) func() {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	cont := func() { _ = syscall.Kill(pid, syscall.SIGCONT) }
	t.Cleanup(cont)
	return cont
}

// tokenKubeconfig makes the ServiceAccount sa in ns and writes a
// kubeconfig with a token of it from the TokenRequest API.
func tokenKubeconfig(t *testing.T, ns, sa string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := cluster.Admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expiry := int64(3600)
	tok, err := cluster.Admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster: {server: %q, insecure-skip-tls-verify: true}\n"+
		"users:\n- name: %[3]s\n  user: {token: %[2]q}\ncontexts:\n- name: %[3]s\n  context: {cluster: local, user: %[3]s, namespace: %[4]s}\ncurrent-context: %[3]s\n",
		cluster.URL, tok.Status.Token, sa, ns)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
