package cmd

import (
	"encoding/json"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
)

// scope is the client and the namespace a namespace-wide command works on:
// -n's (or the kubeconfig's), or every namespace ("") with -A.
func (o *RootOptions) scope() (kubernetes.Interface, string, error) {
	client, err := o.Clientset()
	if err != nil {
		return nil, "", err
	}
	ns, err := o.Namespace()
	if err != nil {
		return nil, "", err
	}
	if o.AllNamespaces {
		ns = metav1.NamespaceAll
	}
	return client, ns, nil
}

// printData writes v as indented JSON or as YAML.
func printData(w io.Writer, format string, v any) error {
	if format == "yaml" {
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(w, string(b))
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// validateDryRun checks a --dry-run value.
func validateDryRun(d apply.DryRun) error {
	switch d {
	case apply.DryRunNone, apply.DryRunClient, apply.DryRunServer:
		return nil
	}
	return usageError(`--dry-run must be "none", "client" or "server", got %q`, d)
}
