// Package cmd wires kubectl-slices' cobra commands, as kubectl does: flags
// bind to a command's typed Options; Complete fills in what the flags alone
// do not say (the namespace, the Service names normalised once), Validate
// refuses bad input before any request (a usage error, exit 2), and Run
// connects the parts (runCommand runs the three). Reading, planning,
// judging, writing and printing live below: pkg/cluster, pkg/syncer,
// pkg/explain, pkg/lifecycle, pkg/daemon, pkg/printers, pkg/deploy,
// pkg/verify/probe and pkg/verify/verdict (verify, mapped in pkg/verify);
// arguments are read and checked by pkg/args and completed by
// pkg/completion; pkg/exit words errors and owns the exit codes. What a
// run over several Services exits with (outcomes.go) is decided here, since
// exit sits below syncer and knows no outcome.
// IO streams and the client (RootOptions.NewClient) are injected, so every
// command runs in unit tests through cobra against a fake clientset.
package cmd
