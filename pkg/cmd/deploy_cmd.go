package cmd

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/args"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/deploy"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/help"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/webhook"
)

// DeployOptions are deploy's typed options.
type DeployOptions struct {
	*RootOptions
	Image           string
	Replicas        int32
	NamespaceScoped bool
	SidecarFor      string
	ServiceAccount  string
	HealthPort      int32
	Patch           bool
	Webhook         bool
	CertManager     bool
	AllowUsers      []string
	AllowGroups     []string
	ControllerUsers []string
	WebhookSources  []string
	PodCIDRs        []string
	WebhookClientCA string
	Monitoring      bool
	Verify          bool
	VerifyTiers     string
	Output          string
	// namespace is where the manifests go; ownNamespace says it is
	// kubectl-slices' own, which cluster mode creates.
	namespace    string
	ownNamespace bool
	// clientCA is --webhook-client-ca's content, read by Validate.
	clientCA []byte
	// nodes are the Nodes' Pod CIDRs, read by Run when no flag names the
	// webhook's sources or the Pod CIDRs.
	nodes *deploy.NodePodCIDRs
	// tiers are --verify-tiers, parsed by Validate.
	tiers []string
	cmd   *cobra.Command
}

// defaultImage is the image of this build's version; no image is
// published by this repository, so a real deployment names its own.
func defaultImage() string { return "ghcr.io/kubectl-slices/kubectl-slices:" + Version }

func newDeployCommand(root *RootOptions) *cobra.Command {
	o := &DeployOptions{RootOptions: root}
	cmd := &cobra.Command{
		Use:     "deploy [--namespace-scoped | --sidecar-for KIND/NAME]",
		Short:   "Print the manifests that run sync --watch in the cluster (never applies them)",
		Long:    help.Text("deploy.long") + defaultImage() + `; build it from the Dockerfile and name yours with --image.`,
		Example: help.Text("deploy.example"),
		Args:    cobra.NoArgs,
		RunE:    runCommand(o),
	}
	o.cmd = cmd
	f := cmd.Flags()
	f.StringVar(&o.Image, "image", defaultImage(), "Container image of kubectl-slices (built from the Dockerfile)")
	f.Int32Var(&o.Replicas, "replicas", 2, "Replicas of the Deployment; one leads, the others stand by with warm caches")
	f.BoolVar(&o.NamespaceScoped, "namespace-scoped", false, "Watch one namespace (-n) with a Role only: no cluster-scoped objects")
	f.StringVar(&o.SidecarFor, "sidecar-for", "", "Run the loop as a container of this workload (deploy/NAME, sts/NAME or ds/NAME), in its namespace")
	f.StringVar(&o.ServiceAccount, "service-account", "", "With --sidecar-for: bind the Role to the workload's own ServiceAccount instead of creating kubectl-slices")
	f.Int32Var(&o.HealthPort, "health-port", 8080, "Port of /healthz, /readyz and /metrics")
	f.BoolVar(&o.Patch, "patch", false, "With --sidecar-for: print the strategic-merge patch adding the container, not the RBAC")
	f.BoolVar(&o.Webhook, "webhook", false, "Also serve the admission webhook: its Service, certificate and ValidatingWebhookConfigurations (cluster mode)")
	f.BoolVar(&o.CertManager, "cert-manager", false, "With --webhook: let cert-manager issue the certificate and inject the CA, instead of generating them here")
	f.StringSliceVar(&o.AllowUsers, "allow-user", nil, "With --webhook: users besides the loop's ServiceAccount who may write our EndpointSlices (with kubectl slices sync)")
	f.StringSliceVar(&o.AllowGroups, "allow-group", nil, "With --webhook: groups whose members may write our EndpointSlices (with kubectl slices sync), e.g. system:masters")
	f.StringSliceVar(&o.ControllerUsers, "controller-user", webhook.DefaultControllerUsers, "With --webhook: the only users who may write EndpointSlices labelled with kube-controller-manager's managed-by values (its own user, and its controllers' ServiceAccounts with --use-service-account-credentials); empty leaves them unguarded")
	f.StringSliceVar(&o.WebhookSources, "webhook-source", nil, "With --webhook: CIDRs the API server calls webhooks from; the NetworkPolicy admits the webhook port from these only (default every address but the Pod CIDRs)")
	f.StringSliceVar(&o.PodCIDRs, "pod-cidr", nil, "With --webhook, without --webhook-source: the cluster's Pod CIDRs, cut out of the addresses the webhook port admits (default the Nodes' spec.podCIDRs, read from the cluster if it can be)")
	f.StringVar(&o.WebhookClientCA, "webhook-client-ca", "", "With --webhook: the CA (PEM file) of the client certificate the API server presents to webhooks (its AdmissionConfiguration); the webhook then refuses every other caller")
	f.BoolVar(&o.Monitoring, "monitoring", false, "Also print a PodMonitor and a PrometheusRule (prometheus-operator's monitoring.coreos.com/v1): the loop scraped, its alerts loaded")
	f.BoolVar(&o.Verify, "verify", false, "Also run verify --watch as a Deployment of its own, with its own ServiceAccount: the data plane under watch, as metrics and Events on the Nodes (cluster mode)")
	f.StringVar(&o.VerifyTiers, "verify-tiers", strings.Join(deploy.DefaultTiers, ","), "With --verify: the tiers it may read, and so the rights it is granted in kube-system: healthz (get pods/proxy), metrics (create pods/portforward; also the DNS replicas), rules (create pods/exec: root on the node)")
	_ = cmd.RegisterFlagCompletionFunc("verify-tiers", cobra.FixedCompletions(deploy.Tiers, cobra.ShellCompDirectiveNoFileComp))
	f.StringVarP(&o.Output, "output", "o", "yaml", "Output format: yaml or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"yaml", "json"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("sidecar-for", root.completer().WorkloadFlag)
	for _, name := range []string{"image", "replicas", "service-account", "health-port"} {
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
	}
	return cmd
}

// Validate checks the flags; nothing is printed on error.
func (o *DeployOptions) Validate() error {
	if err := args.Output(o.Output, "yaml", "json"); err != nil {
		return err
	}
	if o.AllNamespaces {
		return exit.Usagef("deploy takes no -A: cluster mode (the default) already watches every namespace")
	}
	if o.WebhookClientCA != "" {
		ca, err := os.ReadFile(o.WebhookClientCA)
		if err != nil {
			return exit.Usagef("--webhook-client-ca: %v", err)
		}
		o.clientCA = ca
	}
	if f := o.cmd.Flag("verify-tiers"); f != nil && f.Changed && !o.Verify {
		return exit.Usagef("--verify-tiers goes with --verify")
	}
	tiers, err := deploy.ParseTiers(o.VerifyTiers)
	if err != nil {
		return exit.Usagef("%v", err)
	}
	o.tiers = tiers
	if err := o.request().Validate(webhook.CheckAllowed); err != nil {
		return exit.Usagef("%v", err)
	}
	if !slices.Equal(o.ControllerUsers, webhook.DefaultControllerUsers) && !o.Webhook {
		return exit.Usagef("--controller-user goes with --webhook")
	}
	if err := webhook.CheckControllerUsers(o.ControllerUsers); err != nil {
		return exit.Usagef("%v", err)
	}
	return nil
}

// Complete resolves the namespace: -n if given; else the kubeconfig's,
// except in cluster mode, which gets a namespace of its own.
func (o *DeployOptions) Complete(c *cobra.Command, _ []string) error {
	if f := c.Flag("namespace"); (f == nil || !f.Changed) && o.SidecarFor == "" && !o.NamespaceScoped {
		o.namespace, o.ownNamespace = deploy.Name, true
		return nil
	}
	var err error
	o.namespace, err = o.Namespace()
	return err
}

// request is what the flags ask deploy for.
func (o *DeployOptions) request() deploy.Request {
	return deploy.Request{Namespace: o.namespace, OwnNamespace: o.ownNamespace, Image: o.Image, Replicas: o.Replicas, HealthPort: o.HealthPort,
		NamespaceScoped: o.NamespaceScoped, SidecarFor: o.SidecarFor, ServiceAccount: o.ServiceAccount, Patch: o.Patch,
		Webhook: o.Webhook, CertManager: o.CertManager, Allowed: deploy.Allowed{Users: o.AllowUsers, Groups: o.AllowGroups, ControllerUsers: o.ControllerUsers},
		WebhookSources: o.WebhookSources, PodCIDRs: o.PodCIDRs, Nodes: o.nodes, WebhookClientCA: o.clientCA, Monitoring: o.Monitoring,
		Verify: o.Verify, VerifyTiers: o.tiers}
}

// Run prints the manifests; a sidecar's next step goes to stderr, as
// stdout is for kubectl apply.
func (o *DeployOptions) Run(ctx context.Context) error {
	if o.Webhook && len(o.WebhookSources) == 0 && len(o.PodCIDRs) == 0 {
		o.nodes = o.readNodePodCIDRs(ctx)
	}
	if err := o.checkSidecarWorkload(ctx); err != nil {
		return err
	}
	out, err := deploy.Render(o.request())
	if err != nil {
		return err
	}
	if err := printers.Data(o.Out, o.Output, out.Data); err != nil {
		return err
	}
	fmt.Fprint(o.ErrOut, out.Next)
	return nil
}

// nodeReadTimeout bounds the read of the Nodes: deploy may run with no
// cluster at hand, and then prints every address instead of waiting.
const nodeReadTimeout = 10 * time.Second

// readNodePodCIDRs lists the Nodes for their Pod CIDRs; a cluster it
// cannot reach or may not list Nodes of leaves Err set, and the manifests
// admit every address.
func (o *DeployOptions) readNodePodCIDRs(ctx context.Context) *deploy.NodePodCIDRs {
	cs, err := o.Clientset()
	if err != nil {
		return &deploy.NodePodCIDRs{Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, nodeReadTimeout)
	defer cancel()
	nodes, err := cluster.Reader{Client: cs}.AllNodes(ctx)
	if err != nil {
		return &deploy.NodePodCIDRs{Err: err}
	}
	n := deploy.FromNodes(nodes)
	return &n
}
