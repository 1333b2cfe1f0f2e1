package proxyprobe

import (
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// AddFlags registers verify's flags: -o into output, the rest into r.
func AddFlags(cmd *cobra.Command, output *string, r *Run) {
	f := cmd.Flags()
	f.StringVarP(output, "output", "o", "", "Output format: json or yaml, with the evidence read (default: for people)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	f.DurationVar(&r.NodeTimeout, "node-timeout", 10*time.Second, "The longest all of one node's reads may take; a node slower than that is UNKNOWN")
	f.IntVar(&r.Concurrency, "concurrency", 8, "How many nodes are read at once")
	f.Int64Var(&r.Limit, "max-answer-size", 32<<20, "The most bytes read from any one answer of a node")
	f.BoolVar(&r.Settle, "settle", false, "When something drifts, read every node and DNS replica again, once, after --sync-period, and report that reading")
	f.StringVar(&r.Domain, "cluster-domain", "cluster.local", "The cluster domain the DNS replicas serve")
	f.DurationVar(&r.SyncPeriod, "sync-period", 30*time.Second, "kube-proxy's sync period (its health timeout is twice it)")
}

// Validate checks the flags before anything is read.
func (r Run) Validate(output string) error {
	if output != "" && output != "json" && output != "yaml" {
		return exit.Usagef("-o must be json or yaml, got %q", output)
	}
	if r.NodeTimeout <= 0 || r.Concurrency <= 0 || r.Limit <= 0 || r.SyncPeriod <= 0 {
		return exit.Usagef("--node-timeout, --concurrency, --max-answer-size and --sync-period must be positive")
	}
	return nil
}

// Connect sets the client, the transport (built from the config load
// returns) and the rule readers.
func (r *Run) Connect(load func() (*rest.Config, error), client kubernetes.Interface) error {
	cfg, err := load()
	if err != nil {
		return exit.Usagef("cannot load kubeconfig: %v", err)
	}
	t, err := NewREST(cfg, client)
	r.Client, r.Transport, r.Readers = client, t, Readers(r.Limit)
	return err
}
