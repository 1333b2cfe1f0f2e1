package cmd

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// registerCompletions completes namespaces and contexts, as kubectl does.
func registerCompletions(cmd *cobra.Command, o *RootOptions) {
	_ = cmd.RegisterFlagCompletionFunc("namespace", func(c *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		client, err := o.Clientset()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		list, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, ns := range list.Items {
			if strings.HasPrefix(ns.Name, prefix) {
				out = append(out, ns.Name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("context", func(c *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		cfg, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for name := range cfg.Contexts {
			if strings.HasPrefix(name, prefix) {
				out = append(out, name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	for _, f := range []string{"color"} {
		_ = cmd.RegisterFlagCompletionFunc(f, cobra.FixedCompletions([]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
	}
}

// completeServices completes svc/NAME from the Services of the namespace.
func (o *RootOptions) completeServices(c *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	client, err := o.Clientset()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ns, err := o.Namespace()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list, err := client.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, s := range list.Items {
		for _, cand := range []string{"svc/" + s.Name, s.Name} {
			if strings.HasPrefix(cand, prefix) {
				out = append(out, cand)
				break
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
