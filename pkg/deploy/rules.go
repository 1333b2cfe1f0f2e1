package deploy

import (
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Right is one verb on one resource, with the code path that needs it.
type Right struct {
	Group, Resource, Verb string
	// Why names the code path that makes the call.
	Why string
	// ClusterOnly rights exist only in cluster mode: the resource is
	// cluster-scoped (Nodes), so a namespace Role cannot grant it.
	ClusterOnly bool
	// Lease rights are granted in the loop's own namespace only.
	Lease bool
	// ResourceNames pins the right to the named objects.
	ResourceNames []string
	// Webhook rights are granted only when the loop also serves the
	// admission webhook (deploy --webhook).
	Webhook bool
	// In is the namespace a verifier right is granted in ("": every
	// namespace, with the ClusterRole); Tier, when set, is the verify
	// tier that needs it (deploy --verify-tiers).
	In, Tier string
}

// LeaseName is the Lease the deployed loop elects its leader on; the Role
// grants get and update on it alone, not on the other applications' Leases
// of the namespace.
const LeaseName = Name

// Rights is every call the watch loop makes, verb by verb. Nothing else is
// granted. SelfSubjectAccessReviews (the start-up check of these rights)
// need no rule: every authenticated user may create them (system:basic-user).
var Rights = []Right{
	{Group: "", Resource: "services", Verb: "get", Why: "pkg/cluster Reader.Service re-reads a Service after a write conflict (pkg/syncer Options.Retry)"},
	{Group: "", Resource: "services", Verb: "list", Why: "pkg/cluster Cache.Informers: the Service informer's list"},
	{Group: "", Resource: "services", Verb: "watch", Why: "pkg/cluster Cache.Informers: the Service informer's watch"},
	{Group: "", Resource: "pods", Verb: "list", Why: "pkg/cluster Cache.Informers: the Pod informer; Reader.Pods after a write conflict"},
	{Group: "", Resource: "pods", Verb: "watch", Why: "pkg/cluster Cache.Informers: the Pod informer's watch"},
	{Group: "discovery.k8s.io", Resource: "endpointslices", Verb: "list", Why: "pkg/cluster Cache.Informers: the EndpointSlice informer; Reader.Slices after a write conflict"},
	{Group: "discovery.k8s.io", Resource: "endpointslices", Verb: "watch", Why: "pkg/cluster Cache.Informers: the EndpointSlice informer's watch"},
	{Group: "discovery.k8s.io", Resource: "endpointslices", Verb: "create", Why: "pkg/apply Apply: slices the plan creates"},
	{Group: "discovery.k8s.io", Resource: "endpointslices", Verb: "update", Why: "pkg/apply Apply: slices the plan changes (ours only)"},
	{Group: "discovery.k8s.io", Resource: "endpointslices", Verb: "delete", Why: "pkg/apply Apply: slices the plan removes (ours only, with a UID precondition)"},
	{Group: "", Resource: "endpoints", Verb: "list", Why: "pkg/cluster Cache.Informers: the Endpoints informer, mirrored for selectorless Services (pkg/mirror)"},
	{Group: "", Resource: "endpoints", Verb: "watch", Why: "pkg/cluster Cache.Informers: the Endpoints informer's watch"},
	{Group: "", Resource: "endpoints", Verb: "get", Why: "pkg/cluster Cache.EndpointsOf reads whole a controller-written Endpoints object (cached emptied) to mirror it once its Service lost its selector"},
	{Group: "", Resource: "nodes", Verb: "get", Why: "pkg/cluster Reader.Nodes re-reads a Service's Nodes after a write conflict", ClusterOnly: true},
	{Group: "", Resource: "nodes", Verb: "list", Why: "pkg/cluster Cache.Informers: the Node informer (zones for hints and topology)", ClusterOnly: true},
	{Group: "", Resource: "nodes", Verb: "watch", Why: "pkg/cluster Cache.Informers: the Node informer's watch", ClusterOnly: true},
	{Group: "", Resource: "events", Verb: "create", Why: "Events on a Service whose sync fails, as upstream records them (client-go tools/record)"},
	{Group: "", Resource: "events", Verb: "patch", Why: "client-go tools/record: a repeated Event is counted by patching it"},
	{Group: "coordination.k8s.io", Resource: "leases", Verb: "get", Why: "--leader-elect: client-go leaderelection reads the Lease (its own only)", Lease: true, ResourceNames: []string{LeaseName}},
	{Group: "coordination.k8s.io", Resource: "leases", Verb: "create", Why: "--leader-elect: client-go leaderelection creates the Lease the first time (not pinned by name: RBAC cannot restrict create by resourceNames, since the name is not known when the request is authorized)", Lease: true},
	{Group: "coordination.k8s.io", Resource: "leases", Verb: "update", Why: "--leader-elect: client-go leaderelection acquires and renews the Lease (its own only)", Lease: true, ResourceNames: []string{LeaseName}},
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews", Verb: "create", Why: "pkg/webhook AccessCache: a Service warning names Pods, labels and ports only to a writer who may list Pods in the namespace (cached per user and namespace)", ClusterOnly: true, Webhook: true},
}

// WhyAnnotationPrefix prefixes the annotations that give each rule's reason:
// why.kubectl-slices.io/RESOURCE[.GROUP] = "VERB: code path; ..." (WhyKey).
const WhyAnnotationPrefix = "why.kubectl-slices.io/"

// WhyKey is the annotation key's part after WhyAnnotationPrefix for a
// resource: RESOURCE[.GROUP], a subresource's slash an underscore
// (pods_exec), since a key holds no second slash.
func WhyKey(group, resource string) string {
	key := strings.ReplaceAll(resource, "/", "_")
	if group != "" {
		key += "." + group
	}
	return key
}

// selectRights returns the rights keep accepts, in table order.
func selectRights(keep func(Right) bool) []Right {
	var out []Right
	for _, r := range Rights {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// policy turns rights into one PolicyRule per resource and resource names
// (verbs in table order) and the annotations giving the reason for each
// verb.
func policy(rights []Right) ([]rbacv1.PolicyRule, map[string]string) {
	var rules []rbacv1.PolicyRule
	index := map[string]int{}
	why := map[string][]string{}
	for _, r := range rights {
		key := WhyKey(r.Group, r.Resource)
		rule := key + "/" + strings.Join(r.ResourceNames, ",")
		i, ok := index[rule]
		if !ok {
			i = len(rules)
			index[rule] = i
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{r.Group}, Resources: []string{r.Resource},
				ResourceNames: slices.Clone(r.ResourceNames)})
		}
		rules[i].Verbs = append(rules[i].Verbs, r.Verb)
		why[WhyAnnotationPrefix+key] = append(why[WhyAnnotationPrefix+key], r.Verb+": "+r.Why)
	}
	ann := map[string]string{}
	keys := make([]string, 0, len(why))
	for k := range why {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ann[k] = strings.Join(why[k], "; ")
	}
	return rules, ann
}
