// Package args reads the Services a command line names, the ways kubectl
// lets a user name them: svc/NAME, service/NAME, a bare NAME, and
// "svc NAME...", and checks how Services are selected (Select: names, -l
// or --all, with -n or -A; the selector parsed once, for every later step)
// and the values of shared flags (--managed-by and when it needs --force,
// --dry-run, -n, sizes), and what explain is asked about (Explain: a
// Service, Pods or an address, and the flags each form takes). It reads
// nothing and talks to no server; its errors are usage errors (pkg/exit).
// Commands, their validation and their shell completion share it, so a
// name completes as it is later accepted.
package args
