// Package help prints a cobra command tree's help and usage exactly as
// k8s.io/kubectl's templater does (kubectl's sections, command groups, the
// global flags listed once by an "options" command), in Go instead of
// text/template, which keeps the binary small (see kubectlHelp).
package help
