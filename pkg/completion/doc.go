// Package completion finds what a shell completion offers: names read from
// the live cluster within Timeout (a shell waiting on TAB must not hang on
// an unreachable cluster), names from the kubeconfig, and the candidates
// that fit what is typed. k8s.io/kubectl/pkg/util/completion is the model;
// pkg/cmd only registers these with cobra.
package completion
