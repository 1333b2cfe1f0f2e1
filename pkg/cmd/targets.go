package cmd

import (
	"context"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// TargetFlags select Services: names, -l, or --all.
type TargetFlags struct {
	Selector string
	All      bool
}

// serviceTypes are the ways kubectl lets a user name the Service type.
var serviceTypes = map[string]bool{"svc": true, "service": true, "services": true, "service.v1": true, "services.v1": true}

// normalizeArgs accepts svc/NAME, service/NAME, a bare NAME, and kubectl's
// "svc NAME..." form, and turns them into services/NAME. Anything naming
// another resource type is a usage error, caught before any request.
func normalizeArgs(args []string) ([]string, error) {
	if len(args) > 0 && serviceTypes[strings.ToLower(args[0])] && !strings.Contains(args[0], "/") {
		args = args[1:]
		if len(args) == 0 {
			return nil, usageError("name the Service: svc/NAME, or use -l SELECTOR or --all")
		}
	}
	out := make([]string, 0, len(args))
	for _, a := range args {
		typ, name, hasType := strings.Cut(a, "/")
		switch {
		case !hasType:
			name = typ
		case !serviceTypes[strings.ToLower(typ)]:
			return nil, usageError("%s is not a Service: kubectl slices works on Services (svc/NAME, service/NAME or NAME)", a)
		}
		if name == "" || strings.Contains(name, "/") {
			return nil, usageError("%q is not a Service name", a)
		}
		out = append(out, "services/"+name)
	}
	return out, nil
}

// validate checks the selection before anything is read.
func (t TargetFlags) validate(args []string) error {
	switch {
	case len(args) > 0 && (t.Selector != "" || t.All):
		return usageError("name Services or select them with -l/--all, not both")
	case len(args) == 0 && t.Selector == "" && !t.All:
		return usageError("name at least one Service (svc/NAME), or use -l SELECTOR or --all")
	case t.Selector != "" && t.All:
		return usageError("-l and --all do not go together: --all selects every Service, -l those with matching labels")
	case t.Selector != "":
		if _, err := labels.Parse(t.Selector); err != nil {
			return usageError("invalid selector %q: %v", t.Selector, err)
		}
	}
	_, err := normalizeArgs(args)
	return err
}

// connect builds the client and resolves the selected Services.
func (o *RootOptions) connect(ctx context.Context, t TargetFlags, args []string) (kubernetes.Interface, []syncer.Target, error) {
	client, err := o.Clientset()
	if err != nil {
		return nil, nil, err
	}
	targets, err := o.resolveServices(ctx, client, t, args)
	return client, targets, err
}

// resolveServices finds the selected Services as kubectl get would: names
// in -n's namespace (or the kubeconfig's), -l and --all in it or, with -A,
// in every namespace. Every request carries ctx, so Ctrl-C stops a stalled
// one. A missing Service is returned as a per-Service error so the others
// still run; any other error stops the run.
func (o *RootOptions) resolveServices(ctx context.Context, client kubernetes.Interface, t TargetFlags, args []string) ([]syncer.Target, error) {
	ns, err := o.Namespace()
	if err != nil {
		return nil, err
	}
	names, err := normalizeArgs(args)
	if err != nil {
		return nil, err
	}
	var out []syncer.Target
	if len(names) > 0 {
		if o.AllNamespaces {
			return nil, usageError("a Service cannot be named across all namespaces (-A): give its namespace with -n, or select with -l or --all")
		}
		seen := map[string]bool{}
		for _, n := range names {
			name := strings.TrimPrefix(n, "services/")
			if seen[name] {
				continue
			}
			seen[name] = true
			svc, err := cluster.Reader{Client: client}.Service(ctx, ns, name)
			switch {
			case apierrors.IsNotFound(err):
				out = append(out, syncer.Target{Namespace: ns, Name: name, Err: err})
			case err != nil:
				return nil, describe(ns, name, err)
			default:
				out = append(out, syncer.Target{Service: svc, Namespace: svc.Namespace, Name: svc.Name})
			}
		}
	} else {
		if o.AllNamespaces {
			ns = metav1.NamespaceAll
		}
		svcs, err := cluster.Reader{Client: client}.Services(ctx, ns, t.Selector)
		if err != nil {
			return nil, describe(ns, "", err)
		}
		for _, svc := range svcs {
			out = append(out, syncer.Target{Service: svc, Namespace: svc.Namespace, Name: svc.Name})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}
