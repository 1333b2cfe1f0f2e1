package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const svcYAML = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
`

const podYAML = `apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: shop, labels: {app: web}}
status: {phase: Running, podIP: 10.0.0.1}
`

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func readAndValidate(t *testing.T, content string) error {
	t.Helper()
	p := write(t, t.TempDir(), "in.yaml", content)
	m, err := ReadManifests(context.Background(), []string{p}, ReadOptions{})
	if err != nil {
		return err
	}
	m.ApplyDefaults("default")
	return m.Validate()
}

// Each value the API server refuses is refused offline, naming the object
// and the field.
func TestValidateAsTheAPIServer(t *testing.T) {
	if err := readAndValidate(t, svcYAML+"---\n"+podYAML); err != nil {
		t.Fatalf("valid input refused: %v", err)
	}
	svc := func(ports, selector string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: " + selector + "\n  ports: " + ports + "\n"
	}
	pod := func(status string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: shop, labels: {app: web}}\nstatus: " + status + "\n"
	}
	for _, c := range []struct{ name, in, want string }{
		{"port 70000", svc(`[{port: 70000}]`, `{app: web}`), "service shop/web: spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535"},
		{"port -1", svc(`[{port: -1}]`, `{app: web}`), "spec.ports[0].port: Invalid value: -1"},
		{"port 0", svc(`[{port: 0}]`, `{app: web}`), "spec.ports[0].port: Invalid value: 0"},
		{"targetPort 70000", svc(`[{port: 80, targetPort: 70000}]`, `{app: web}`), "spec.ports[0].targetPort: Invalid value: 70000"},
		{"targetPort bad name", svc(`[{port: 80, targetPort: "no_such name"}]`, `{app: web}`), "spec.ports[0].targetPort: Invalid value: \"no_such name\""},
		{"protocol ICMP", svc(`[{port: 80, protocol: ICMP}]`, `{app: web}`), "spec.ports[0].protocol: Unsupported value: \"ICMP\""},
		{"duplicate port names", svc(`[{name: a, port: 80}, {name: a, port: 81}]`, `{app: web}`), "spec.ports[1].name: Duplicate value: \"a\""},
		{"unnamed ports", svc(`[{port: 80}, {port: 81}]`, `{app: web}`), "spec.ports[0].name: Required value"},
		{"selector key", svc(`[{port: 80}]`, `{"app web": x}`), "service shop/web: spec.selector: Invalid value: \"app web\""},
		{"selector value", svc(`[{port: 80}]`, `{app: "a b"}`), "spec.selector: Invalid value: \"a b\""},
		{"podIP 999.1.1.1", pod(`{podIP: 999.1.1.1}`), "pod shop/web-1: status.podIP: Invalid value: \"999.1.1.1\""},
		{"podIP not-an-ip", pod(`{podIP: not-an-ip}`), "status.podIP: Invalid value: \"not-an-ip\""},
		{"podIP zone", pod(`{podIP: "fe80::1%eth0"}`), "status.podIP: Invalid value: \"fe80::1%eth0\""},
		{"podIP CIDR", pod(`{podIP: 10.0.0.1/24}`), "status.podIP: Invalid value: \"10.0.0.1/24\""},
		{"podIPs", pod(`{podIP: 10.0.0.1, podIPs: [{ip: 10.0.0.1}, {ip: bad}]}`), "status.podIPs[1].ip: Invalid value: \"bad\""},
		{"pod label", pod(`{}`)[:0] + "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop, labels: {\"a b\": x}}\n", "pod shop/p: metadata.labels: Invalid value: \"a b\""},
		{"no apiVersion", "kind: Service\nmetadata: {name: web}\n", "a Service has no apiVersion"},
		{"unknown apiVersion", "apiVersion: v2\nkind: Service\nmetadata: {name: web}\n", "Service has apiVersion \"v2\", want \"v1\""},
		{"slice apiVersion", "apiVersion: discovery.k8s.io/v1beta1\nkind: EndpointSlice\nmetadata: {name: s}\naddressType: IPv4\n", "want \"discovery.k8s.io/v1\""},
		{"no kind", "apiVersion: v1\nmetadata: {name: web}\n", "an object has no kind"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := readAndValidate(t, c.in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one containing %q", err, c.want)
			}
		})
	}
}

// An error about an object with no kind echoes its first 200 bytes, not
// the whole object.
func TestNoKindErrorIsClipped(t *testing.T) {
	for _, big := range []string{
		"apiVersion: v1\nmetadata: {name: web}\ndata: " + strings.Repeat("x", 1<<20) + "\n",
		"{\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\"name\": \"web\"},\n  \"data\": \"" + strings.Repeat("x", 1<<20) + "\"\n}\n",
	} {
		err := readAndValidate(t, big)
		if err == nil || !strings.Contains(err.Error(), "no kind") {
			t.Fatalf("err %v", err)
		}
		if len(err.Error()) > 400 || strings.Contains(err.Error(), "\n") {
			t.Fatalf("error of %d bytes: the object is echoed whole, or on several lines: %q", len(err.Error()), err.Error()[:min(len(err.Error()), 300)])
		}
	}
}

// An error about a 70 KB label value (a selector's, a Pod's) quotes its
// first 200 bytes and says how many more there were, not all of it.
func TestHugeLabelValueErrorIsClipped(t *testing.T) {
	v := strings.Repeat("a", 70_000)
	for _, in := range []string{
		"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: {app: " + v + "}\n  ports: [{port: 80}]\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop, labels: {app: " + v + "}}\n",
	} {
		err := readAndValidate(t, in)
		if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), "more bytes)") || !strings.Contains(err.Error(), "/") {
			t.Fatalf("error of %d bytes: %.300v", len(fmt.Sprint(err)), err)
		}
	}
}

// The same object twice counts once; two different objects of one name are
// an error naming both sources.
func TestDuplicateObjects(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "a.yaml", svcYAML+"---\n"+podYAML)
	m, err := ReadManifests(context.Background(), []string{a, a}, ReadOptions{})
	if err != nil || len(m.Services) != 1 || len(m.Pods) != 1 {
		t.Fatalf("identical duplicates: err %v, %d services, %d pods", err, len(m.Services), len(m.Pods))
	}
	b := write(t, dir, "b.yaml", strings.Replace(svcYAML, "port: 80", "port: 81", 1))
	_, err = ReadManifests(context.Background(), []string{a, b}, ReadOptions{})
	var ce *ConflictingObjectError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) {
		t.Fatalf("err %v, want a conflict naming %s and %s", err, a, b)
	}
}

// URLs are refused: offline reads no network.
func TestURLRefused(t *testing.T) {
	_, err := ReadManifests(context.Background(), []string{"http://127.0.0.1:1/x.yaml"}, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "not URLs") {
		t.Fatalf("err %v", err)
	}
}

// Input past the limit is refused with the limit and the flag named;
// /dev/zero does not grow without end.
func TestSizeLimit(t *testing.T) {
	_, err := ReadManifests(context.Background(), []string{"/dev/zero"}, ReadOptions{MaxBytes: 1 << 20})
	var tl *TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "1Mi") || !strings.Contains(err.Error(), "--max-input-size") {
		t.Fatalf("err %v", err)
	}
	p := write(t, t.TempDir(), "a.yaml", svcYAML)
	if _, err := ReadManifests(context.Background(), []string{p, p}, ReadOptions{MaxBytes: int64(len(svcYAML))*2 - 1}); !errors.As(err, &tl) {
		t.Fatalf("the limit is over all inputs: err %v", err)
	}
}

// A FIFO with no writer blocks open(2); a cancelled context ends the wait.
func TestFIFOFollowsContext(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	for _, path := range []string{fifo, dir} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := ReadManifests(ctx, []string{path}, ReadOptions{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: err %v, want the cancellation", path, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%s: returned %v after the cancellation", path, d)
		}
	}
}

// Items of a typed list (as `kubectl cluster-info dump` writes them) have
// their list's kind; a List's items need their own.
func TestTypedListItems(t *testing.T) {
	p := write(t, t.TempDir(), "pods.json", `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"web-1","namespace":"shop"}}]}`)
	m, err := ReadManifests(context.Background(), []string{p}, ReadOptions{})
	if err != nil || len(m.Pods) != 1 || m.Pods[0].Name != "web-1" {
		t.Fatalf("err %v, pods %v", err, m)
	}
	p = write(t, t.TempDir(), "list.json", `{"kind":"List","apiVersion":"v1","items":[{"metadata":{"name":"web-1"}}]}`)
	if _, err := ReadManifests(context.Background(), []string{p}, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "no kind") {
		t.Fatalf("err %v", err)
	}
}
