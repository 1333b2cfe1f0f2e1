package mirror

import (
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

const (
	// DefaultMaxEndpointsPerSubset is kube-controller-manager's
	// --mirroring-max-endpoints-per-subset default.
	DefaultMaxEndpointsPerSubset = 1000
	// LeaderElectionAnnotation marks Endpoints used as a lock; never mirrored.
	LeaderElectionAnnotation = "control-plane.alpha.kubernetes.io/leader"
)

// Reasons in the plan's Service decision and warnings.
const (
	// SkipMirror: the Endpoints asks not to be mirrored.
	SkipMirror reconcile.Reason = "SkipMirror"
	// NoEndpoints: the selectorless Service has no Endpoints object.
	NoEndpoints reconcile.Reason = "NoEndpoints"
	// InvalidIPAddress and TooManyAddresses are upstream's event reasons.
	InvalidIPAddress reconcile.Reason = "InvalidIPAddress"
	TooManyAddresses reconcile.Reason = "TooManyAddressesToMirror"
	// EndpointsUnreadable: the caller could not read the Endpoints object.
	EndpointsUnreadable reconcile.Reason = "EndpointsUnreadable"
)

// Options tune a mirror plan.
type Options struct {
	ManagedBy             string
	MaxEndpointsPerSubset int
}

// Input is what a mirror plan is made from. Nothing in it is modified.
type Input struct {
	Service *corev1.Service
	// Endpoints is the Endpoints object of the Service's name, or nil.
	Endpoints *corev1.Endpoints
	// Slices are the live EndpointSlices labelled with the Service's name.
	Slices []*discovery.EndpointSlice
}

// Applies reports whether the mirror planner, not pkg/reconcile, plans svc:
// a Service without a selector (the API stores an empty one as none). Like
// upstream it does not look at the type: an ExternalName Service with an
// Endpoints object is mirrored too.
func Applies(svc *corev1.Service) bool {
	return svc != nil && len(svc.Spec.Selector) == 0
}

var endpointsKind = schema.GroupVersionKind{Version: "v1", Kind: "Endpoints"}

// Compute plans the mirrored slices of one selectorless Service.
func Compute(in Input, opts Options) (*reconcile.Plan, error) {
	svc := in.Service
	switch {
	case svc == nil:
		return nil, errors.New("no Service given")
	case !Applies(svc):
		return nil, fmt.Errorf("service %s/%s is not mirrored: it has a selector", svc.Namespace, svc.Name)
	case opts.ManagedBy == "":
		return nil, errors.New("managed-by value must not be empty")
	case opts.MaxEndpointsPerSubset < 1:
		return nil, fmt.Errorf("max endpoints per subset must be at least 1, got %d", opts.MaxEndpointsPerSubset)
	}
	plan := &reconcile.Plan{Service: reconcile.ServiceDecision{Namespace: svc.Namespace, Name: svc.Name}}
	ours := partition(plan, svc, in.Slices, opts.ManagedBy)
	plan.SetLive(ours)

	ep := in.Endpoints
	if ep != nil && (ep.Namespace != svc.Namespace || ep.Name != svc.Name) {
		return nil, fmt.Errorf("endpoints %s/%s do not belong to service %s/%s", ep.Namespace, ep.Name, svc.Namespace, svc.Name)
	}
	why := ""
	switch {
	case ep == nil:
		plan.Service.Reason, why = NoEndpoints, "the Service has no selector and no Endpoints object: nothing to mirror"
	case ep.Labels[discovery.LabelSkipMirror] == "true":
		plan.Service.Reason, why = SkipMirror, "Endpoints "+ep.Name+" carries "+discovery.LabelSkipMirror+"=true: not mirrored"
	case hasKey(ep.Annotations, LeaderElectionAnnotation):
		plan.Service.Reason, why = SkipMirror, "Endpoints "+ep.Name+" is a leader-election lock: not mirrored"
	}
	if why != "" {
		plan.Service.Message = why
		// Upstream deletes its mirrored slices then; ours are those owned by
		// an Endpoints object (others we leave, as pkg/reconcile does).
		for _, s := range ours {
			if ownerKind(s) == "Endpoints" {
				plan.Delete = append(plan.Delete, s)
			} else {
				plan.Unchanged = append(plan.Unchanged, s)
			}
		}
		if len(plan.Delete) > 0 {
			plan.Service.Message += fmt.Sprintf("; its %s mirrored by kubectl-slices are deleted", english.Plural(len(plan.Delete), "slice", "slices"))
		}
		return plan, nil
	}

	d := desire(ep, opts.MaxEndpointsPerSubset)
	plan.Service.Reason = reconcile.ServiceMirrored
	plan.Service.Message = fmt.Sprintf("endpoints are mirrored from Endpoints %s/%s: %s, %s mirrored",
		ep.Namespace, ep.Name, english.Plural(d.subsets, "subset", "subsets"), english.Plural(d.mirrored, "address", "addresses"))
	if d.invalid > 0 {
		plan.Warnings = append(plan.Warnings, reconcile.Warning{Reason: InvalidIPAddress, Object: "endpoints/" + ep.Name,
			Message: fmt.Sprintf("Skipped %d invalid IP addresses when mirroring to EndpointSlices", d.invalid)})
	}
	if d.skipped > d.invalid {
		plan.Warnings = append(plan.Warnings, reconcile.Warning{Reason: TooManyAddresses, Object: "endpoints/" + ep.Name,
			Message: fmt.Sprintf("A max of %d addresses can be mirrored to EndpointSlices per Endpoints subset. %d addresses were skipped", opts.MaxEndpointsPerSubset, d.skipped)})
	}
	reconcileSlices(plan, ep, d, ours, opts.ManagedBy)
	return plan, nil
}

// partition keeps our live slices of the Service (not being deleted),
// sorted by name, and records the others as foreign.
func partition(plan *reconcile.Plan, svc *corev1.Service, slices []*discovery.EndpointSlice, managedBy string) []*discovery.EndpointSlice {
	var ours []*discovery.EndpointSlice
	for _, s := range slices {
		if s == nil || s.Namespace != svc.Namespace || s.Labels[discovery.LabelServiceName] != svc.Name {
			continue
		}
		if s.Labels[discovery.LabelManagedBy] != managedBy {
			plan.Foreign = append(plan.Foreign, s)
			continue
		}
		if s.DeletionTimestamp == nil {
			ours = append(ours, s)
		}
	}
	sortByName(plan.Foreign)
	sortByName(ours)
	return ours
}

func sortByName(s []*discovery.EndpointSlice) {
	sort.SliceStable(s, func(i, j int) bool { return s[i].Name < s[j].Name })
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

func ownerKind(s *discovery.EndpointSlice) string {
	if ref := metav1.GetControllerOfNoCopy(s); ref != nil {
		return ref.Kind
	}
	return ""
}

// sliceMeta returns the labels and annotations a mirrored slice carries.
func sliceMeta(ep *corev1.Endpoints, managedBy string) (labels, annotations map[string]string) {
	labels = make(map[string]string, len(ep.Labels)+2)
	for k, v := range ep.Labels {
		labels[k] = v
	}
	labels[discovery.LabelServiceName] = ep.Name
	labels[discovery.LabelManagedBy] = managedBy
	annotations = map[string]string{}
	for k, v := range ep.Annotations {
		if k == corev1.EndpointsLastChangeTriggerTime || k == corev1.LastAppliedConfigAnnotation {
			continue
		}
		annotations[k] = v
	}
	return labels, annotations
}

func metaEqual(s *discovery.EndpointSlice, labels, annotations map[string]string) bool {
	return equality.Semantic.DeepEqual(s.Labels, labels) && equality.Semantic.DeepEqual(s.Annotations, annotations)
}
