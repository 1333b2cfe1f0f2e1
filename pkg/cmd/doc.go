// Package cmd wires kubectl-slices' cobra commands. Each command turns flags
// into typed options once (Complete), checks them (Validate) and runs (Run);
// reading, planning, writing and printing live in pkg/cluster,
// pkg/reconcile, pkg/apply and pkg/printers. IO streams are injected so that
// commands can be tested with genericiooptions.NewTestIOStreams.
package cmd
