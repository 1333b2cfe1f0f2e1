// Package completion finds what a shell completion offers: names read from
// the live cluster within Timeout (a shell waiting on TAB must not hang on
// an unreachable cluster), names from the kubeconfig, and the candidates
// that fit what is typed, and the cobra completion functions that offer
// them (Completer, cobra.go). k8s.io/kubectl/pkg/util/completion is the
// model; pkg/cmd only hands each command its function.
package completion
