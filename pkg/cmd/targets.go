package cmd

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
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
	case t.Selector != "":
		if _, err := labels.Parse(t.Selector); err != nil {
			return usageError("invalid selector %q: %v", t.Selector, err)
		}
	}
	_, err := normalizeArgs(args)
	return err
}

// resolved is a Service found, or the error for one that was not.
type resolved struct {
	Service         *corev1.Service
	Namespace, Name string
	Err             error
}

// connect builds the client and resolves the selected Services.
func (o *RootOptions) connect(t TargetFlags, args []string) (kubernetes.Interface, []resolved, error) {
	client, err := o.Clientset()
	if err != nil {
		return nil, nil, err
	}
	targets, err := o.resolveServices(t, args)
	return client, targets, err
}

// resolveServices finds the selected Services with cli-runtime's resource
// builder, which applies -n, -A, -l and --all the way kubectl does. A missing
// Service is returned as a per-Service error so the others still run.
func (o *RootOptions) resolveServices(t TargetFlags, args []string) ([]resolved, error) {
	ns, err := o.Namespace()
	if err != nil {
		return nil, err
	}
	names, err := normalizeArgs(args)
	if err != nil {
		return nil, err
	}
	b := resource.NewBuilder(servicesOnly{o.ConfigFlags}).
		WithScheme(scheme.Scheme, scheme.Scheme.PrioritizedVersionsAllGroups()...).
		NamespaceParam(ns).DefaultNamespace().AllNamespaces(o.AllNamespaces).
		ContinueOnError().Flatten()
	if len(names) > 0 {
		b = b.ResourceTypeOrNameArgs(false, names...)
	} else {
		b = b.ResourceTypes("services").LabelSelectorParam(t.Selector).SelectAllParam(t.All)
	}
	infos, err := b.Do().Infos()
	var out []resolved
	for _, info := range infos {
		svc, ok := info.Object.(*corev1.Service)
		if !ok {
			return nil, fmt.Errorf("unexpected object %T for %s", info.Object, info.Name)
		}
		out = append(out, resolved{Service: svc, Namespace: svc.Namespace, Name: svc.Name})
	}
	for _, e := range flatten(err) {
		var status apierrors.APIStatus
		if apierrors.IsNotFound(e) && errors.As(e, &status) && status.Status().Details != nil {
			out = append(out, resolved{Namespace: ns, Name: status.Status().Details.Name, Err: e})
			continue
		}
		return nil, describe(ns, "", e)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func flatten(err error) []error {
	if err == nil {
		return nil
	}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		return utilerrors.Flatten(agg).Errors()
	}
	return []error{err}
}
