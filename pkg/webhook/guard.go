package webhook

import (
	"fmt"
	"slices"

	discovery "k8s.io/api/discovery/v1"
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
	User         string
	Groups       []string
}

// Guard says which writers may write our slices.
type Guard struct {
	// ManagedBy is our managed-by value.
	ManagedBy string
	// FieldManagers are the field managers of kubectl-slices' own writes.
	FieldManagers []string
	// Users and Groups are identities allowed to write whatever their
	// field manager (e.g. the in-cluster service account).
	Users, Groups []string
}

// Judge allows a write to an EndpointSlice unless it touches one of our
// slices and does not come from kubectl-slices: a hand edit the next sync
// would undo, or a relabel that moves our slice to another manager. DELETE
// is always allowed: prune, release and the garbage collector delete, and a
// running loop re-creates what it still owns. Field managers and identities
// are what the client says it is, so this stops accidents, not an admin who
// sets --field-manager=kubectl-slices on purpose.
func (g Guard) Judge(w SliceWrite) Verdict {
	if w.Operation == "DELETE" || w.New == nil {
		return Verdict{Allowed: true}
	}
	oldOurs := w.Old != nil && w.Old.Labels[discovery.LabelManagedBy] == g.ManagedBy
	newMgr := w.New.Labels[discovery.LabelManagedBy]
	newOurs := newMgr == g.ManagedBy
	if !oldOurs && !newOurs {
		return Verdict{Allowed: true}
	}
	if g.fromUs(w) {
		return Verdict{Allowed: true}
	}
	s := w.New
	svc := s.Labels[discovery.LabelServiceName]
	at := "svc/" + svc + " -n " + s.Namespace
	who := w.User
	if w.FieldManager != "" {
		who += " (field manager " + w.FieldManager + ")"
	}
	var msg string
	switch {
	case oldOurs && !newOurs:
		msg = fmt.Sprintf("endpointslice %s is managed by %s; relabelling it to %s by hand leaves two writers fighting over it: to hand the Service's slices back, run `kubectl slices release %s`",
			s.Name, g.ManagedBy, describeManager(newMgr), at)
	case !oldOurs:
		msg = fmt.Sprintf("endpointslice %s may not be labelled %s=%s by hand: only kubectl-slices writes its slices; run `kubectl slices sync %s`",
			s.Name, discovery.LabelManagedBy, g.ManagedBy, at)
	default:
		msg = fmt.Sprintf("endpointslice %s is managed by %s and its next sync would undo this edit; change the Service or its Pods and run `kubectl slices sync %s`, or hand the slices back with `kubectl slices release %s`",
			s.Name, g.ManagedBy, at, at)
	}
	if svc == "" {
		msg = fmt.Sprintf("endpointslice %s is managed by %s; only kubectl-slices writes it (delete it, or run `kubectl slices prune -n %s`)", s.Name, g.ManagedBy, s.Namespace)
	}
	return Verdict{Allowed: false, Message: msg + " [refused for " + who + "]"}
}

func (g Guard) fromUs(w SliceWrite) bool {
	if w.FieldManager != "" && slices.Contains(g.FieldManagers, w.FieldManager) {
		return true
	}
	if slices.Contains(g.Users, w.User) {
		return true
	}
	for _, grp := range w.Groups {
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
