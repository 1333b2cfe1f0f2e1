package cmd

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/args"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/progress"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// TargetFlags select Services: names, -l, or --all. Complete fills in the
// names and the namespace once; Validate and Run read them.
type TargetFlags struct {
	Selector string
	All      bool
	// names are the Services named as arguments; namespace is -n's or the
	// kubeconfig's.
	names     []string
	namespace string
}

// complete normalises the arguments and resolves the namespace, once.
func (t *TargetFlags) complete(o *RootOptions, argv []string) error {
	var err error
	if t.names, err = args.Services(argv); err != nil {
		return err
	}
	t.namespace, err = o.Namespace()
	return err
}

// validate checks the selection before anything is read.
func (t TargetFlags) validate(allNamespaces bool) error {
	return args.Selection{Names: t.names, Selector: t.Selector, All: t.All, AllNamespaces: allNamespaces}.Validate()
}

// connect builds the client and resolves the selected Services: names
// in -n's namespace (or the kubeconfig's), -l and --all in it or, with -A,
// in every namespace.
func (o *RootOptions) connect(ctx context.Context, t TargetFlags) (kubernetes.Interface, []syncer.Target, error) {
	client, err := o.Clientset()
	if err != nil {
		return nil, nil, err
	}
	sel := syncer.Selection{Namespace: t.namespace, Names: t.names, Selector: t.Selector}
	if len(t.names) == 0 && o.AllNamespaces {
		sel.Namespace = metav1.NamespaceAll
	}
	targets, err := syncer.Resolve(ctx, client, sel)
	var re *syncer.ResolveError
	if errors.As(err, &re) {
		return nil, nil, exit.Describe(re.Namespace, re.Name, re.Err)
	}
	return client, targets, err
}

// syncMany runs syncer.Many over the targets with a progress line on a
// terminal (for more than one) and words each failure as the user reads it.
func (o *RootOptions) syncMany(ctx context.Context, client kubernetes.Interface, targets []syncer.Target, opts syncer.Options) []syncer.Outcome {
	var bar *progress.Bar // nil draws nothing
	if len(targets) > 1 {
		bar = progress.Start(o.ErrOut, len(targets))
	}
	defer bar.Done()
	return exit.Described(syncer.Many(ctx, client, targets, o.AllNamespaces, opts, func(_ int, key string, took time.Duration) { bar.Finish(key, took) }))
}
