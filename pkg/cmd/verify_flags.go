package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/probe"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

// addVerifyFlags registers verify's flags: -o into output, the rest into r;
// comp completes --node's names.
func addVerifyFlags(cmd *cobra.Command, output *string, r *probe.Run, comp cobra.CompletionFunc) {
	f := cmd.Flags()
	f.StringVarP(output, "output", "o", "", "Output format: json or yaml, with the evidence read (default: for people)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	f.StringSliceVar(&r.OnlyNodes, "node", nil, "Read only these nodes' service proxies (names, comma-separated or repeated; default every node); DNS replicas are read wherever they run")
	_ = cmd.RegisterFlagCompletionFunc("node", comp)
	f.DurationVar(&r.NodeTimeout, "node-timeout", 10*time.Second, "The longest all of one node's reads may take; a node slower than that is UNKNOWN")
	f.IntVar(&r.Concurrency, "concurrency", 8, "How many nodes are read at once")
	f.Int64Var(&r.Limit, "max-answer-size", 32<<20, "The most bytes read from any one answer of a node")
	f.BoolVar(&r.Settle, "settle", false, "When something drifts, read every node and DNS replica again, once, after --sync-period, and report that reading")
	f.StringVar(&r.Domain, "cluster-domain", "cluster.local", "The cluster domain the DNS replicas serve")
	f.DurationVar(&r.SyncPeriod, "sync-period", 30*time.Second, "kube-proxy's sync period (its health timeout is twice it)")
}

// validateVerifyFlags checks the flags before anything is read; changed
// says whether a flag was given.
func validateVerifyFlags(changed func(string) bool, output string, r probe.Run) error {
	if output != "" && output != "json" && output != "yaml" {
		return exit.Usagef("-o must be json or yaml, got %q", output)
	}
	if r.NodeTimeout <= 0 || r.Concurrency <= 0 || r.Limit <= 0 || r.SyncPeriod <= 0 {
		return exit.Usagef("--node-timeout, --concurrency, --max-answer-size and --sync-period must be positive")
	}
	// --node "" (an unset variable in a script) would otherwise mean every
	// node: the very reading it was given to avoid.
	if changed("node") && len(r.OnlyNodes) == 0 {
		return exit.Usagef("--node has an empty name: give node names, comma-separated (kubectl get nodes lists them)")
	}
	for _, n := range r.OnlyNodes {
		if n == "" {
			return exit.Usagef("--node has an empty name: give node names, comma-separated (kubectl get nodes lists them)")
		}
	}
	return nil
}

// verifyWords is the selection as the user would type it again, for the
// next command a report suggests: the Services, and the nodes --node named.
func verifyWords(argv []string, sel syncer.Selection, nodes []string) string {
	w := append([]string(nil), argv...)
	if len(nodes) > 0 {
		w = append(w, "--node", strings.Join(nodes, ","))
	}
	if sel.Selector != "" {
		w = append(w, "-l", sel.Selector)
	}
	if sel.All {
		w = append(w, "--all")
	}
	if sel.AllNamespaces {
		return strings.Join(append(w, "-A"), " ")
	}
	return strings.Join(append(w, "-n", sel.Namespace), " ")
}

// verifyError words what the probe's run failed with as every command
// words it: a read of the API about a Service as Describe does, one about
// no one Service as Cluster does, the run's context ending as the
// interrupt.
func verifyError(ctx context.Context, err error) error {
	var re *probe.ReadError
	var nf *probe.NodeNotFoundError
	switch {
	case errors.As(err, &nf):
		err = &exit.Error{Code: exit.NotFound, Err: fmt.Errorf("%s: check the name (kubectl get nodes lists them)", nf)}
	case errors.As(err, &re) && re.Namespace == "" && re.Name == "":
		// About no one Service: the API server's own words name what
		// failed where.
		err = exit.Cluster(re.Err)
	case errors.As(err, &re):
		err = exit.Describe(re.Namespace, re.Name, re.Err)
	case errors.Is(err, context.Canceled):
		err = exit.FromSignal(ctx)
	}
	return exit.InterruptWins(ctx, err)
}

// verifyExit is the run's exit code: agree 0, drift exit.Changes, could
// not verify (UNKNOWN or PENDING) exit.NotVerified.
func verifyExit(s verdict.Status) error {
	switch s {
	case verdict.OK:
		return nil
	case verdict.Drift:
		return &exit.Error{Code: exit.Changes, Err: exit.ErrPrinted}
	}
	return &exit.Error{Code: exit.NotVerified, Err: exit.ErrPrinted}
}
