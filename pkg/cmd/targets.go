package cmd

import (
	"context"
	"errors"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/args"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/progress"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// TargetFlags select Services: names, -l, or --all, with -n or -A.
// Complete fills in the names and the namespace, Validate parses the
// selector; Run reads them.
type TargetFlags = syncer.Selection

// completeTargets normalises the arguments and resolves the namespace, once.
func (o *RootOptions) completeTargets(t *TargetFlags, argv []string) error {
	var err error
	if t.Names, err = args.Services(argv); err != nil {
		return err
	}
	t.AllNamespaces = o.AllNamespaces
	t.Namespace, err = o.Namespace()
	return err
}

// validateTargets checks the selection before anything is read and parses
// its selector.
func validateTargets(t *TargetFlags) error {
	var err error
	*t, err = args.Select(*t)
	return err
}

// connect builds the client and resolves the selected Services.
func (o *RootOptions) connect(ctx context.Context, t TargetFlags) (kubernetes.Interface, []syncer.Target, error) {
	client, err := o.Clientset()
	if err != nil {
		return nil, nil, err
	}
	targets, err := syncer.Resolve(ctx, client, t)
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
	return described(syncer.Many(ctx, client, targets, o.AllNamespaces, opts, func(_ int, key string, took time.Duration) { bar.Finish(key, took) }))
}
