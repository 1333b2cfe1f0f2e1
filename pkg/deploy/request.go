package deploy

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// Request is one run of the deploy command: the mode (cluster, one
// namespace, or a sidecar) and its settings, as its flags give them.
type Request struct {
	// Namespace is where the manifests go; OwnNamespace says it is
	// kubectl-slices' own, which cluster mode creates.
	Namespace    string
	OwnNamespace bool
	Image        string
	Replicas     int32
	HealthPort   int32
	// NamespaceScoped watches Namespace with a Role only.
	NamespaceScoped bool
	// SidecarFor is the workload (deploy/NAME, sts/NAME, ds/NAME) the
	// loop joins as a container; ServiceAccount its own, to bind to;
	// Patch asks for the patch that adds the container instead of RBAC.
	SidecarFor     string
	ServiceAccount string
	Patch          bool
	// Webhook adds the admission webhook; CertManager lets cert-manager
	// issue its certificate; Allowed may write our slices besides the loop.
	Webhook     bool
	CertManager bool
	Allowed     Allowed
	// WebhookSources are the CIDRs the webhook's NetworkPolicy admits.
	WebhookSources []string
	// PodCIDRs (--pod-cidr) are the cluster's Pod CIDRs; without them or
	// sources, Nodes are those the Nodes carry (nil: not read). The
	// NetworkPolicy admits every address but these.
	PodCIDRs []string
	Nodes    *NodePodCIDRs
	// WebhookClientCA, when set, is the CA (PEM) of the API server's
	// webhook client certificate, which the webhook then requires.
	WebhookClientCA []byte
	// Monitoring adds a PodMonitor and a PrometheusRule
	// (prometheus-operator's) beside the Deployment.
	Monitoring bool
	// Verify adds the verifier (verify --watch) as a Deployment of its
	// own, with the rights of VerifyTiers (VerifierObjects).
	Verify      bool
	VerifyTiers []string
}

// Validate refuses a combination of modes that does not go together, and
// settings no manifest can carry, worded by the flags that set them.
// checkAllowed judges the webhook's allowed identities (the webhook's own
// rule, webhook.CheckAllowed); its error is returned as it is.
func (r Request) Validate(checkAllowed func(users, groups []string) error) error {
	allowed := len(r.Allowed.Users) > 0 || len(r.Allowed.Groups) > 0
	switch {
	case r.NamespaceScoped && r.SidecarFor != "":
		return fmt.Errorf("--sidecar-for is namespace-scoped already; drop --namespace-scoped")
	case r.SidecarFor == "" && (r.Patch || r.ServiceAccount != ""):
		return fmt.Errorf("--patch and --service-account go with --sidecar-for")
	case r.Webhook && (r.NamespaceScoped || r.SidecarFor != ""):
		return fmt.Errorf("--webhook registers cluster-wide webhooks: it goes with cluster mode only")
	case r.CertManager && !r.Webhook:
		return fmt.Errorf("--cert-manager goes with --webhook")
	case allowed && !r.Webhook:
		return fmt.Errorf("--allow-user and --allow-group go with --webhook")
	case len(r.WebhookSources) > 0 && !r.Webhook:
		return fmt.Errorf("--webhook-source goes with --webhook")
	case len(r.PodCIDRs) > 0 && !r.Webhook:
		return fmt.Errorf("--pod-cidr goes with --webhook")
	case len(r.PodCIDRs) > 0 && len(r.WebhookSources) > 0:
		return fmt.Errorf("--pod-cidr goes without --webhook-source: the webhook port admits the sources alone; name sources that hold no Pod address")
	case r.WebhookClientCA != nil && !r.Webhook:
		return fmt.Errorf("--webhook-client-ca goes with --webhook")
	case r.Monitoring && r.SidecarFor != "":
		return fmt.Errorf("--monitoring scrapes the Deployment's Pods: it goes without --sidecar-for")
	case r.Verify && (r.NamespaceScoped || r.SidecarFor != ""):
		return fmt.Errorf("--verify reads every node's proxy: it goes with cluster mode only")
	}
	if r.WebhookClientCA != nil {
		if err := CheckClientCA(r.WebhookClientCA); err != nil {
			return err
		}
	}
	if err := CheckSources(r.WebhookSources); err != nil {
		return err
	}
	if err := CheckPodCIDRs(r.PodCIDRs); err != nil {
		return err
	}
	if err := checkAllowed(r.Allowed.Users, r.Allowed.Groups); err != nil {
		return err
	}
	switch {
	case r.Replicas < 1:
		return fmt.Errorf("--replicas must be at least 1")
	case r.HealthPort < 1 || r.HealthPort > 65535:
		return fmt.Errorf("--health-port must be between 1 and 65535")
	case r.Image == "":
		return fmt.Errorf("--image must name an image")
	}
	if r.SidecarFor != "" {
		if _, err := ParseWorkload(r.SidecarFor); err != nil {
			return fmt.Errorf("--sidecar-for: %w", err)
		}
	}
	return nil
}

// Rendered is what a deploy run prints: the manifests, or the sidecar's
// patch. Next, for a sidecar's manifests, is the step that follows
// applying them: a comment for stderr, since stdout is for kubectl apply.
type Rendered struct {
	Data any
	Next string
}

// Render builds what r asks for; r has passed Validate, so an error is
// the certificate's generation failing (or a rule of the builders). The
// verifier's objects come last: nothing of the writer's refers to them.
func Render(r Request) (Rendered, error) {
	out, err := render(r)
	if err == nil && r.Verify {
		out.Data = append(out.Data.([]runtime.Object), VerifierObjects(r.Namespace, r.Image, r.HealthPort, r.VerifyTiers)...)
	}
	return out, err
}

func render(r Request) (Rendered, error) {
	if r.SidecarFor != "" {
		return renderSidecar(r)
	}
	scope := Cluster
	if r.NamespaceScoped {
		scope = Namespace
	}
	o := Options{Namespace: r.Namespace, Image: r.Image, Replicas: r.Replicas, Scope: scope, HealthPort: r.HealthPort,
		CreateNamespace: r.OwnNamespace && scope == Cluster, WebhookSources: r.WebhookSources, PodCIDRs: r.PodCIDRs}
	if len(r.PodCIDRs) == 0 && r.Nodes != nil {
		o.PodCIDRs = r.Nodes.CIDRs
	}
	objs, err := Objects(o)
	if err == nil && r.Monitoring {
		var mon []runtime.Object
		mon, err = Monitoring(r.Namespace, r.Verify)
		objs = append(objs, mon...)
	}
	if err != nil || !r.Webhook {
		return Rendered{Data: objs}, err
	}
	tls := TLS{CertManager: r.CertManager}
	if !r.CertManager {
		if tls, err = SelfSignedTLS(r.Namespace); err != nil {
			return Rendered{}, err
		}
	}
	objs, err = WithWebhook(objs, o, tls, r.Allowed)
	if err == nil && r.WebhookClientCA != nil {
		objs = withClientCA(objs, r.Namespace, r.WebhookClientCA)
	}
	return Rendered{Data: objs, Next: sourcesNote(r)}, err
}

// sourcesNote says on stderr whom the webhook port admits, unless a flag
// named it: every address but the Nodes' Pod CIDRs (which the network
// plugin may not use), or, with none known, every address and why.
func sourcesNote(r Request) string {
	if len(r.WebhookSources) > 0 || len(r.PodCIDRs) > 0 {
		return ""
	}
	n := r.Nodes
	if n != nil && len(n.CIDRs) > 0 {
		without := ""
		if n.Without > 0 {
			without = fmt.Sprintf(" (%d of %d Nodes have none: their Pods are let in)", n.Without, n.Nodes)
		}
		return fmt.Sprintf("# the NetworkPolicy admits the webhook port from every address but the Nodes' Pod CIDRs (spec.podCIDRs: %d)%s; "+
			"if the network plugin gives Pods addresses elsewhere (its own IP pools), name them with --pod-cidr CIDR\n", len(n.CIDRs), without)
	}
	why := "the Nodes were not read"
	switch {
	case n == nil:
	case n.Err != nil:
		why = fmt.Sprintf("the Nodes could not be read: %v", n.Err)
	case n.Nodes == 0:
		why = "the cluster has no Nodes"
	default:
		why = "no Node has spec.podCIDRs"
	}
	return "# the NetworkPolicy admits the webhook port from every address (" + why + "): name the cluster's Pod CIDRs with --pod-cidr CIDR, " +
		"or the addresses the API server calls webhooks from with --webhook-source CIDR, to keep other Pods out\n"
}

func renderSidecar(r Request) (Rendered, error) {
	w, err := ParseWorkload(r.SidecarFor)
	if err != nil {
		return Rendered{}, err
	}
	so := SidecarOptions{Namespace: r.Namespace, Workload: w, Image: r.Image, HealthPort: r.HealthPort, ServiceAccount: r.ServiceAccount}
	if r.Patch {
		patch, err := SidecarPatch(so)
		return Rendered{Data: patch}, err
	}
	var objs []runtime.Object
	if objs, err = SidecarObjects(so); err != nil {
		return Rendered{}, err
	}
	ns := r.Namespace
	return Rendered{Data: objs, Next: fmt.Sprintf("# apply the above (kubectl apply -f -), then add the container to %s/%s:\n"+
		"#   kubectl patch %s %s -n %s --type strategic -p \"$(kubectl slices deploy --sidecar-for %s -n %s --patch)\"\n",
		w.Resource, w.Name, w.Resource, w.Name, ns, r.SidecarFor, ns)}, nil
}
