package e2e

import (
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The rough edges a new user meets, through kubectl on a real API server.
func TestExplainRoughEdges(t *testing.T) {
	ns := newNamespace(t, shared)

	// A headless Service with one StatefulSet-like Pod: shown as headless,
	// with its hostname; "1 Pod"; nothing excluded in one line.
	mustService(t, shared, service(ns, "db", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }))
	db := podSpec("db", 0, 62)
	db.Hostname, db.Subdomain = "db-0", "db"
	mustPods(t, shared, ns, db)
	r := slices(t, "explain", "svc", "db", "-n", ns, "--color", "never").mustCode(t, 1) // the "svc NAME" form
	for _, want := range []string{"Service " + ns + "/db  (headless, selector app=db)", "Selector matches 1 Pod\n", "HOSTNAME", "db-0   "} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("explain svc db lacks %q:\n%s", want, r.Stdout)
		}
	}
	r = slices(t, "explain", "svc/db", "-n", ns, "--show-pods=excluded").mustCode(t, 1)
	if !strings.Contains(r.Stdout, "\n  No Pod is excluded: 1 matched Pod is an endpoint.\n") || strings.Contains(r.Stdout, "POD ") {
		t.Errorf("--show-pods=excluded:\n%s", r.Stdout)
	}

	// A Service whose Pods include one on a missing Node (a warning) and
	// one without the named target port (no traffic on it).
	mustService(t, shared, service(ns, "web"))
	lost, portless := podSpec("web", 1, 62), podSpec("web", 2, 62)
	lost.Node = "node-gone"
	portless.Ports = []corev1.ContainerPort{{Name: "other", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
	mustPods(t, shared, ns, podSpec("web", 0, 62), lost, portless)
	plain := slices(t, "explain", "svc/web", "-n", ns, "--color", "never").mustCode(t, 1)
	if strings.Contains(plain.Stdout, "Warning") || !strings.Contains(plain.Stderr, "Warning: service "+ns+"/web: pod/web-1: ") {
		t.Errorf("warnings belong on stderr:\nstdout:\n%s\nstderr:\n%s", plain.Stdout, plain.Stderr)
	}
	if !regexp.MustCompile(`\n  web-2 +no port +true `).MatchString(plain.Stdout) ||
		!strings.Contains(plain.Stdout, "although 1 pod is ready") || !strings.Contains(plain.Stdout, "1 ready Pod has no target port for http and receives no traffic on it") {
		t.Errorf("the Pod without the target port:\n%s", plain.Stdout)
	}
	colored := slices(t, "explain", "svc/web", "-n", ns, "--color", "always").mustCode(t, 1)
	stripped := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(colored.Stdout, "")
	if stripped == colored.Stdout || stripped != plain.Stdout {
		t.Errorf("--color=always changes the layout:\n%s\n--- plain\n%s", stripped, plain.Stdout)
	}
	js := slices(t, "explain", "svc/web", "-n", ns, "-o", "json").mustCode(t, 1)
	if !strings.Contains(js.Stdout, `"warnings": [`+"\n"+`    "pod/web-1: `) || !strings.Contains(js.Stdout, `"missingPorts": [`+"\n"+`        "http"`) || strings.Contains(js.Stdout, "null") {
		t.Errorf("-o json:\n%s", js.Stdout)
	}

	// explain with no Service says what it wants, as sync does.
	r = slices(t, "explain", "-n", ns).mustCode(t, 2)
	if strings.TrimSpace(r.Stderr) != "error: name the Service to explain: svc/NAME" {
		t.Errorf("explain with no argument: %q", r.Stderr)
	}
}
