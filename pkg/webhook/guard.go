package webhook

import (
	"fmt"
	"slices"

	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// SliceWrite is what the guard needs to know of a write to an EndpointSlice.
type SliceWrite struct {
	// Operation is CREATE, UPDATE or DELETE.
	Operation string
	// Old and New are the slice before and after; Old is nil on CREATE,
	// New is nil on DELETE.
	Old, New *discovery.EndpointSlice
	// FieldManager is the request's, from its Create/UpdateOptions (a
	// patch is presented as an update with the patch's field manager).
	FieldManager string
	// User and Groups are the writer as the API server authenticated it
	// (the AdmissionReview's userInfo): the only part the client cannot
	// choose.
	User   string
	Groups []string
}

// Guard says which writers may write our slices, and the slices of
// kube-controller-manager's EndpointSlice controllers.
type Guard struct {
	// ManagedBy is our managed-by value.
	ManagedBy string
	// FieldManagers are the field managers of kubectl-slices' own writes.
	FieldManagers []string
	// Users and Groups are the identities allowed to write our slices
	// (the loop's ServiceAccount, the people who run sync by hand), as
	// the API server authenticated them.
	Users, Groups []string
	// ControllerUsers are the identities allowed to write slices under
	// the controllers' managed-by values (ControllerValues), as the API
	// server authenticated them; none leaves those slices unguarded.
	ControllerUsers []string
}

// Judge allows a write to an EndpointSlice unless it touches one of our
// slices and either comes from an identity the guard does not allow, or
// does not come from kubectl-slices (a hand edit the next sync would undo,
// or a relabel that moves our slice to another manager); or it touches a
// slice under a controller's value (ControllerValues) and does not come
// from one of ControllerUsers (guardController). The identity decides who
// may write at all: it is the API server's word. The field manager is the
// client's word (anyone can send --field-manager=kubectl-slices), so it
// never admits a writer by itself; it only tells an allowed writer's
// kubectl edit, an accident, from its sync.
//
// Allowed whoever writes: DELETE (prune, release and the garbage collector
// delete, deleting needs the RBAC right to, and a running loop re-creates
// what it still owns), and an update that changes only what the garbage
// collector writes: ownerReferences removed or unblocked, finalizers
// removed (OwnerMetadataOnly).
func (g Guard) Judge(w SliceWrite) Verdict {
	if w.Operation == "DELETE" || w.New == nil {
		return Verdict{Allowed: true}
	}
	if w.Old != nil && OwnerMetadataOnly(w.Old, w.New) {
		return Verdict{Allowed: true}
	}
	if v, ok := g.guardOurs(w); ok {
		return v
	}
	return g.guardController(w)
}

// guardOurs judges a write that touches one of our slices (ok); other
// writes are not its to judge. Ours are those under any value we write
// (reconcile.IsOurs): under a controller's value, both controllers' values,
// as guardController leaves both to this rule.
func (g Guard) guardOurs(w SliceWrite) (v Verdict, ok bool) {
	oldOurs := w.Old != nil && reconcile.IsOurs(w.Old.Labels[discovery.LabelManagedBy], g.ManagedBy)
	newMgr := w.New.Labels[discovery.LabelManagedBy]
	newOurs := reconcile.IsOurs(newMgr, g.ManagedBy)
	if !oldOurs && !newOurs {
		return Verdict{}, false
	}
	allowed := g.allows(w.User, w.Groups)
	if allowed && w.FieldManager != "" && slices.Contains(g.FieldManagers, w.FieldManager) {
		return Verdict{Allowed: true}, true
	}
	s := w.New
	svc := s.Labels[discovery.LabelServiceName]
	at := "svc/" + svc + " -n " + s.Namespace
	var msg string
	switch {
	case oldOurs && !newOurs:
		msg = fmt.Sprintf("endpointslice %s is managed by %s; relabelling it to %s by hand leaves two writers fighting over it: to hand the Service's slices back, run `kubectl slices release %s`",
			s.Name, g.ManagedBy, describeManager(newMgr), at)
	case !oldOurs:
		msg = fmt.Sprintf("endpointslice %s may not be labelled %s=%s by hand: only kubectl-slices writes its slices; run `kubectl slices sync %s`",
			s.Name, discovery.LabelManagedBy, newMgr, at)
	default:
		msg = fmt.Sprintf("endpointslice %s is managed by %s and its next sync would undo this edit; change the Service or its Pods and run `kubectl slices sync %s`, or hand the slices back with `kubectl slices release %s`",
			s.Name, g.ManagedBy, at, at)
	}
	if !allowed {
		msg = fmt.Sprintf("endpointslice %s is managed by %s and only the identities its webhook allows write it (the loop's ServiceAccount, and those named by --allow-user and --allow-group); %s is not one of them, whatever its field manager: ask someone allowed to run `kubectl slices sync %s`",
			s.Name, g.ManagedBy, w.User, at)
		if svc == "" {
			msg = fmt.Sprintf("endpointslice %s is managed by %s and only the identities its webhook allows write it; %s is not one of them, whatever its field manager", s.Name, g.ManagedBy, w.User)
		}
	} else if svc == "" {
		msg = fmt.Sprintf("endpointslice %s is managed by %s; only kubectl-slices writes it (delete it, or run `kubectl slices prune -n %s`)", s.Name, g.ManagedBy, s.Namespace)
	}
	return Verdict{Allowed: false, Message: msg + " [refused for " + refusedFor(w) + "]"}, true
}

func refusedFor(w SliceWrite) string {
	if w.FieldManager != "" {
		return w.User + " (field manager " + w.FieldManager + ")"
	}
	return w.User
}

// allows says whether the authenticated user, or one of its groups, is
// allowed to write our slices.
func (g Guard) allows(user string, groups []string) bool {
	if user != "" && slices.Contains(g.Users, user) {
		return true
	}
	for _, grp := range groups {
		if slices.Contains(g.Groups, grp) {
			return true
		}
	}
	return false
}

func describeManager(mgr string) string {
	if mgr == "" {
		return "a slice without manager"
	}
	return mgr
}

// everyone are the groups that hold every user of a kind: allowing one
// would let anyone with an EndpointSlice Role write our slices, the very
// thing the guard is for.
var everyone = map[string]string{
	"system:authenticated":   "every authenticated user",
	"system:unauthenticated": "every anonymous request",
	"system:serviceaccounts": "every ServiceAccount of the cluster",
}

// CheckAllowed refuses --allow-user and --allow-group values that name no
// one or everyone.
func CheckAllowed(users, groups []string) error {
	for _, u := range users {
		if u == "" {
			return fmt.Errorf("--allow-user must name a user, e.g. system:serviceaccount:NS:NAME")
		}
	}
	for _, g := range groups {
		if g == "" {
			return fmt.Errorf("--allow-group must name a group, e.g. system:masters")
		}
		if who, ok := everyone[g]; ok {
			return fmt.Errorf("--allow-group %s would let %s write our EndpointSlices; name a narrower group (e.g. system:masters, or your operators' group)", g, who)
		}
	}
	return nil
}
