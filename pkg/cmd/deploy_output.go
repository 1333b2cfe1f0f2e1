package cmd

// deploy's helpers around the pure builder: the generated certificate,
// printing, and completion of --sidecar-for.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/cert"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-slices/kubectl-slices/pkg/deploy"
)

// selfSignedTLS makes a CA and a serving certificate it signs for the
// webhook's Service (client-go util/cert: one year). The CA's key is not
// kept: running deploy again issues a new pair, which kubectl apply rolls out.
func selfSignedTLS(ns string) (deploy.TLS, error) {
	names := deploy.WebhookDNSNames(ns)
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(names[0], nil, names[1:])
	if err != nil {
		return deploy.TLS{}, fmt.Errorf("generate the webhook's certificate: %w", err)
	}
	// The serving certificate comes first, then the CA that signed it.
	certs, err := cert.ParseCertsPEM(certPEM)
	if err != nil || len(certs) != 2 {
		return deploy.TLS{}, fmt.Errorf("generate the webhook's certificate: %d certificates (%v)", len(certs), err)
	}
	ca, err := cert.EncodeCertificates(certs[1])
	if err != nil {
		return deploy.TLS{}, err
	}
	return deploy.TLS{CertPEM: certPEM, KeyPEM: keyPEM, CABundle: ca}, nil
}

// printObjects prints YAML documents, or one v1 List as JSON.
func printObjects(out io.Writer, format string, objs []runtime.Object) error {
	if format == "json" {
		list := &corev1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
		for _, obj := range objs {
			list.Items = append(list.Items, runtime.RawExtension{Object: obj})
		}
		return (&printers.JSONPrinter{}).PrintObj(list, out)
	}
	p := &printers.YAMLPrinter{}
	for _, obj := range objs {
		if err := p.PrintObj(obj, out); err != nil {
			return err
		}
	}
	return nil
}

func printPatch(out io.Writer, format string, patch map[string]any) error {
	var b []byte
	var err error
	if format == "json" {
		b, err = json.MarshalIndent(patch, "", "    ")
		b = append(b, '\n')
	} else {
		b, err = yaml.Marshal(patch)
	}
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// completeWorkloads completes --sidecar-for: the kinds first, then the
// workloads of that kind in the namespace, from the live cluster.
func (o *DeployOptions) completeWorkloads(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	kind, _, typed := strings.Cut(prefix, "/")
	if !typed {
		return []string{"deploy/", "sts/", "ds/"}, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	w, err := deploy.ParseWorkload(kind + "/x")
	client, cerr := o.completionClient()
	ns, nerr := o.Namespace()
	if err != nil || cerr != nil || nerr != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	var names []string
	apps := client.AppsV1()
	switch w.Resource {
	case "deployment":
		l, err := apps.Deployments(ns).List(ctx, metav1.ListOptions{})
		for i := 0; err == nil && i < len(l.Items); i++ {
			names = append(names, l.Items[i].Name)
		}
	case "statefulset":
		l, err := apps.StatefulSets(ns).List(ctx, metav1.ListOptions{})
		for i := 0; err == nil && i < len(l.Items); i++ {
			names = append(names, l.Items[i].Name)
		}
	case "daemonset":
		l, err := apps.DaemonSets(ns).List(ctx, metav1.ListOptions{})
		for i := 0; err == nil && i < len(l.Items); i++ {
			names = append(names, l.Items[i].Name)
		}
	}
	var out []string
	for _, n := range names {
		if c := kind + "/" + n; strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
