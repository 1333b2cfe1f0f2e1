package cmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// fakeRun is a command run through cobra against a fake clientset, as
// kubectl's NewTestFactory runs its commands.
type fakeRun struct {
	Client *fake.Clientset
	Out    string
	ErrOut string
	Err    error
}

// Code is the exit code main would return.
func (r fakeRun) Code() int { return exit.Code(r.Err) }

// runFake runs `kubectl slices args...` against a fake clientset holding
// objs. The kubeconfig is an empty file, so only -n and --context flags say
// where; its default namespace is "default".
func runFake(t *testing.T, objs []runtime.Object, args ...string) fakeRun {
	t.Helper()
	client := fake.NewClientset(objs...)
	generateNames(client)
	return runOn(t, context.Background(), client, args...)
}

// runOn runs `kubectl slices args...` against client until ctx is done, so
// that one test can run several commands against the same cluster.
func runOn(t *testing.T, ctx context.Context, client *fake.Clientset, args ...string) fakeRun {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &kubeconfig
	o := &RootOptions{
		IOStreams:   genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut},
		ConfigFlags: flags,
		NewClient:   func() (kubernetes.Interface, error) { return client, nil },
	}
	cmd := newRootCommand(o)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	return fakeRun{Client: client, Out: out.String(), ErrOut: errOut.String(), Err: err}
}

// generateNames gives created objects a name from their generateName, as
// the API server does and the fake tracker does not; the suffix counts up
// so that runs are deterministic.
func generateNames(client *fake.Clientset) {
	n := 0
	client.PrependReactor("create", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		obj := action.(k8stesting.CreateAction).GetObject()
		m, err := meta.Accessor(obj)
		if err == nil && m.GetName() == "" && m.GetGenerateName() != "" {
			n++
			m.SetName(fmt.Sprintf("%s%05d", m.GetGenerateName(), n))
		}
		return false, nil, nil
	})
}
