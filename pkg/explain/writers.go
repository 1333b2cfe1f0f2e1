package explain

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// FindingForeignWriter: a slice under a controller's managed-by value whose
// managedFields name a writer other than kube-controller-manager (a hint,
// see ForeignWriters).
const FindingForeignWriter FindingKind = "ForeignWriter"

// ControllerFieldManager is the field manager kube-controller-manager's
// writes carry: the API server names an update that gives none after the
// client's user agent up to its first "/", and every controller of the
// binary sends "kube-controller-manager/VERSION (...)".
const ControllerFieldManager = "kube-controller-manager"

// ForeignWriters finds the slices under the controllers' managed-by values
// whose managedFields name a writer other than kube-controller-manager: one
// finding per Service and value. A slice without managedFields says nothing
// (a client may clear them, and one that forges may as well name the
// controller's manager). Slices
// written under ourValue, when it is a controller's (sync --managed-by
// endpointslice-controller.k8s.io --force), may also name fieldManagers.
//
// A hint, never a proof, either way: the field manager is the client's word
// (kubectl create --field-manager=kube-controller-manager forges the trace),
// so a forged slice may pass, and an administrator's kubectl label of the
// controller's slice is flagged. What proves a writer is its identity, which
// only an admission webhook sees (webhook --controller-user). Deleting a
// flagged slice is safe whoever wrote it: the controller writes its own
// again.
func ForeignWriters(in []*discovery.EndpointSlice, ourValue string, fieldManagers []string) []Finding {
	byService := map[string]*Finding{}
	var keys []string
	for _, s := range in {
		mb := s.Labels[discovery.LabelManagedBy]
		if mb != reconcile.ControllerManagedBy && mb != reconcile.MirroringManagedBy {
			continue
		}
		allowed := []string{ControllerFieldManager}
		if reconcile.IsOurs(mb, ourValue) {
			allowed = append(allowed, fieldManagers...)
		}
		others := foreignManagers(s, allowed)
		if others == nil {
			continue
		}
		svc := s.Labels[discovery.LabelServiceName]
		key := s.Namespace + "/" + svc + "/" + mb
		f := byService[key]
		if f == nil {
			f = &Finding{Namespace: s.Namespace, Service: svc, Kind: FindingForeignWriter, ManagedBy: []string{mb}}
			byService[key] = f
			keys = append(keys, key)
		}
		f.Slices = append(f.Slices, s.Name)
		f.Message = strings.TrimPrefix(f.Message+"; ", "; ") + fmt.Sprintf("%s: %s", s.Name, strings.Join(others, ", "))
	}
	sort.Strings(keys)
	out := make([]Finding, 0, len(keys))
	for _, k := range keys {
		f := byService[k]
		f.Message = fmt.Sprintf("slices labelled %s, kube-controller-manager's value, name other writers in their managedFields (%s): a slice it did not write publishes endpoints it did not compute and makes the loop hand the Service back; field managers are the client's word, so this hints and proves nothing (the webhook's --controller-user guard decides by identity); deleting the slices is safe, the controller writes its own again",
			f.ManagedBy[0], f.Message)
		f.Command = "kubectl delete endpointslice -n " + f.Namespace + " " + strings.Join(f.Slices, " ")
		out = append(out, *f)
	}
	return out
}

// foreignManagers lists the writers of s outside allowed, sorted and
// deduplicated; nil when all are allowed.
func foreignManagers(s *discovery.EndpointSlice, allowed []string) []string {
	var out []string
	for _, e := range s.ManagedFields {
		if !slices.Contains(allowed, e.Manager) && !slices.Contains(out, e.Manager) {
			out = append(out, e.Manager)
		}
	}
	sort.Strings(out)
	return out
}
