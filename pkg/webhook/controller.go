package webhook

import (
	"fmt"
	"slices"

	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// ControllerValues are the managed-by values of kube-controller-manager's
// EndpointSlice and mirroring controllers. The watch loop hands a Service
// back when slices under the first publish it, and kube-proxy routes by
// any slice: a slice forged under one of them would take a Service from
// the loop, so only the controller manager may write them.
var ControllerValues = []string{reconcile.ControllerManagedBy, reconcile.MirroringManagedBy}

// DefaultControllerUsers are the identities kube-controller-manager writes
// slices as (cmd/kube-controller-manager/app/discovery.go): its own user
// (system:kube-controller-manager in kubeadm's kubeconfig), or, with
// --use-service-account-credentials, the ServiceAccount of each controller
// in kube-system (controllerContext.NewClient("endpointslice-controller"),
// NewClient("endpointslicemirroring-controller")).
var DefaultControllerUsers = []string{
	"system:kube-controller-manager",
	"system:serviceaccount:kube-system:endpointslice-controller",
	"system:serviceaccount:kube-system:endpointslicemirroring-controller",
}

// guardController refuses a CREATE or UPDATE of a slice that carries a
// controller's value, before or after, unless the writer (as the API server
// authenticated it) is one of ControllerUsers. Values we write ourselves (a
// ManagedBy set to a controller's writes both, reconcile.OurValues) are
// not this rule's: kubectl-slices runs under them when the controllers are
// off for good, and Judge hands such writes to guardOurs before this rule.
func (g Guard) guardController(w SliceWrite) Verdict {
	mgr := g.controllerValue(w.New)
	if mgr == "" && w.Old != nil {
		mgr = g.controllerValue(w.Old)
	}
	if mgr == "" || len(g.ControllerUsers) == 0 {
		return Verdict{Allowed: true}
	}
	if w.User != "" && slices.Contains(g.ControllerUsers, w.User) {
		return Verdict{Allowed: true}
	}
	msg := fmt.Sprintf("endpointslice %s is labelled %s=%s, which only kube-controller-manager writes (the users named by --controller-user); %s is not one of them: a slice under a controller's value would hand its Service to a controller that did not write it; label your own slices with a value of your own",
		w.New.Name, discovery.LabelManagedBy, mgr, w.User)
	return Verdict{Allowed: false, Message: msg + " [refused for " + refusedFor(w) + "]"}
}

// controllerValue is s's managed-by value when it is a controller's, else
// "". (One we write never gets here: guardOurs judged it.)
func (g Guard) controllerValue(s *discovery.EndpointSlice) string {
	mgr := s.Labels[discovery.LabelManagedBy]
	if !slices.Contains(ControllerValues, mgr) {
		return ""
	}
	return mgr
}

// OwnerMetadataOnly says whether an update changes nothing but what the
// garbage collector writes (k8s.io/kubernetes pkg/controller/garbagecollector,
// patch.go): ownerReferences removed (an owner deleted with
// --cascade=orphan, or gone) or with blockOwnerDeletion cleared (a
// foreground deletion's dangling owner), none added or otherwise altered
// (ownerRefsOnlyShrunk); and finalizers removed only (the collector
// removes foregroundDeletion and orphan once done; the API server adds them
// in the DELETE itself, not in an update); besides what the API server sets
// on every write (managedFields, resourceVersion, generation).
//
// Such a change is allowed whoever makes it, so that the collector passes
// under any identity (its ServiceAccount, generic-garbage-collector, with
// --use-service-account-credentials; the controller manager's own user
// without). It gives no one more than DELETE, which the guard always
// allows: a reference removed or unblocked only lets the collector delete
// the slice sooner or not at all, and a finalizer removed only lets a
// deletion already asked for finish. An added or altered ownerReference
// stays guarded: one naming another Service would make the slice that
// Service's (or no one's) to the loop, the standby and check, and one
// naming a dangling owner would have the collector delete it. Endpoints,
// ports, labels, annotations and added finalizers (which would keep a slice
// the loop deleted published) stay guarded too.
func OwnerMetadataOnly(old, new *discovery.EndpointSlice) bool {
	for _, f := range new.Finalizers {
		if !slices.Contains(old.Finalizers, f) {
			return false
		}
	}
	if !ownerRefsOnlyShrunk(old.OwnerReferences, new.OwnerReferences) {
		return false
	}
	a, b := *old, *new // shallow copies: the inputs are not changed
	for _, s := range []*discovery.EndpointSlice{&a, &b} {
		s.OwnerReferences, s.Finalizers, s.ManagedFields = nil, nil, nil
		s.ResourceVersion, s.Generation = "", 0
	}
	return equality.Semantic.DeepEqual(a, b)
}

// ownerRefsOnlyShrunk says whether each reference in new is one of old's
// (each old one used at most once), the same but for blockOwnerDeletion,
// which may only be cleared (false or unset): the garbage collector's
// deleteOwnerRef and unblockOwnerReferences patches, nothing else.
func ownerRefsOnlyShrunk(old, new []metav1.OwnerReference) bool {
	used := make([]bool, len(old))
	for _, n := range new {
		found := false
		for i, o := range old {
			if !used[i] && sameOwnerRef(o, n) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func isTrue(b *bool) bool { return b != nil && *b }

func sameOwnerRef(o, n metav1.OwnerReference) bool {
	if o.APIVersion != n.APIVersion || o.Kind != n.Kind || o.Name != n.Name || o.UID != n.UID ||
		isTrue(o.Controller) != isTrue(n.Controller) {
		return false
	}
	return !isTrue(n.BlockOwnerDeletion) || isTrue(o.BlockOwnerDeletion)
}

// CheckControllerUsers refuses --controller-user values that name no one.
func CheckControllerUsers(users []string) error {
	for _, u := range users {
		if u == "" {
			return fmt.Errorf("--controller-user must name a user, e.g. system:kube-controller-manager")
		}
	}
	return nil
}
