package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// The client-side limits are lifted under API Priority and Fairness only
// when the user gave neither --qps nor --burst: limits given are kept.
func TestLimitsGivenAreKept(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: t}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		lift bool
	}{
		{nil, true},
		{[]string{"--qps", "50"}, false},
		{[]string{"--burst", "50"}, false},
	} {
		o := &RootOptions{IOStreams: genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
			ConfigFlags: genericclioptions.NewConfigFlags(true)}
		cmd := newRootCommand(o)
		cmd.SetArgs(append([]string{"version", "--client", "--kubeconfig", kubeconfig}, tc.args...))
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		c, err := o.ConfigFlags.ToRESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		if lifted := c.RateLimiter != nil; lifted != tc.lift {
			t.Errorf("%v: limits liftable %v, want %v", tc.args, lifted, tc.lift)
		}
	}
}
