package endpoints

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

const (
	// LabelManagedBy marks who wrote an Endpoints object; upstream's
	// controller writes ControllerManagedBy under it.
	LabelManagedBy = "endpoints.kubernetes.io/managed-by"
	// ControllerManagedBy is kube-controller-manager's Endpoints controller.
	ControllerManagedBy = "endpoint-controller"
	// MaxCapacity is how many addresses upstream writes into one Endpoints.
	MaxCapacity = 1000
	// Truncated is the value of the over-capacity annotation.
	Truncated = "truncated"
)

// Action is what a Plan does with the Endpoints object.
type Action string

const (
	// None: the object is as it should be, or the Service gets none.
	None   Action = "None"
	Create Action = "Create"
	Update Action = "Update"
	// Skip: the object exists but was not written by us; it is left alone.
	Skip Action = "Skip"
)

// Options tune a Plan.
type Options struct {
	// ManagedBy is our endpoints.kubernetes.io/managed-by value.
	ManagedBy string
	// TriggerTime is stamped as endpoints.kubernetes.io/last-change-trigger-time;
	// the zero time removes it.
	TriggerTime time.Time
}

// Input is what an Endpoints plan is made from. Nothing in it is modified.
type Input struct {
	Service *corev1.Service
	// Pods are the Pods the Service's selector matched.
	Pods []*corev1.Pod
	// Live is the Endpoints object of the Service's name, or nil.
	Live *corev1.Endpoints
}

// Plan is the outcome of planning one Service's Endpoints object.
type Plan struct {
	Action Action
	// Message says why (for None and Skip) or what (for Create, Update).
	Message string
	// Desired is the object to create or update (with Live's
	// resourceVersion); set for every action but Skip when the Service has
	// an Endpoints object at all.
	Desired *corev1.Endpoints
	Live    *corev1.Endpoints
	// Ready and NotReady count the addresses written (after truncation);
	// Truncated says addresses beyond MaxCapacity were dropped.
	Ready, NotReady int
	Truncated       bool
}

// Compute plans the Endpoints object of one Service.
func Compute(in Input, opts Options) (*Plan, error) {
	svc := in.Service
	if svc == nil {
		return nil, errors.New("no Service given")
	}
	if opts.ManagedBy == "" {
		return nil, errors.New("managed-by value must not be empty")
	}
	pl := &Plan{Action: None, Live: in.Live}
	switch {
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		pl.Message = "ExternalName Services have no Endpoints object"
		return pl, nil
	case svc.Spec.Selector == nil:
		pl.Message = "the Service has no selector: its Endpoints object is written by hand, not by a controller"
		return pl, nil
	}
	if live := in.Live; live != nil {
		if got := live.Labels[LabelManagedBy]; got != opts.ManagedBy {
			pl.Action = Skip
			pl.Message = skipMessage(live, got, opts.ManagedBy)
			return pl, nil
		}
	}

	desired := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name}}
	if in.Live != nil {
		desired = in.Live.DeepCopy()
	}
	desired.Subsets = Repack(desiredSubsets(svc, in.Pods))
	desired.Labels = desiredLabels(svc, opts.ManagedBy)
	annotations := map[string]string{}
	for k, v := range desired.Annotations {
		annotations[k] = v
	}
	if opts.TriggerTime.IsZero() {
		delete(annotations, corev1.EndpointsLastChangeTriggerTime)
	} else {
		annotations[corev1.EndpointsLastChangeTriggerTime] = opts.TriggerTime.UTC().Format(time.RFC3339Nano)
	}
	if pl.Truncated = truncate(desired); pl.Truncated {
		annotations[corev1.EndpointsOverCapacity] = Truncated
	} else {
		delete(annotations, corev1.EndpointsOverCapacity)
	}
	desired.Annotations = annotations
	pl.Desired = desired
	for _, s := range desired.Subsets {
		pl.Ready += len(s.Addresses)
		pl.NotReady += len(s.NotReadyAddresses)
	}

	switch {
	case in.Live == nil:
		pl.Action = Create
		pl.Message = fmt.Sprintf("create: %d ready, %d not ready addresses", pl.Ready, pl.NotReady)
	case upToDate(in.Live, desired, pl.Truncated):
		pl.Message = "in sync"
	default:
		pl.Action = Update
		pl.Message = fmt.Sprintf("update: %d ready, %d not ready addresses", pl.Ready, pl.NotReady)
	}
	return pl, nil
}

func skipMessage(live *corev1.Endpoints, got, ours string) string {
	who := fmt.Sprintf("managed by %q", got)
	switch got {
	case "":
		// kube-controller-manager marks its Endpoints only from v1.33 on.
		who = "written by someone else (no " + LabelManagedBy + " label; kube-controller-manager's Endpoints controller before v1.33 writes none either)"
	case ControllerManagedBy:
		who = "managed by kube-controller-manager's Endpoints controller (" + LabelManagedBy + "=" + got + ")"
	}
	return fmt.Sprintf("Endpoints %s/%s left alone: %s; kubectl-slices only writes Endpoints it created (%s=%s)",
		live.Namespace, live.Name, who, LabelManagedBy, ours)
}

// desiredLabels: the Service's labels, the headless label exactly when the
// Service has no cluster IP, and the managed-by mark.
func desiredLabels(svc *corev1.Service, managedBy string) map[string]string {
	l := make(map[string]string, len(svc.Labels)+2)
	for k, v := range svc.Labels {
		l[k] = v
	}
	if reconcile.IsServiceIPSet(svc) {
		delete(l, corev1.IsHeadlessService)
	} else {
		l[corev1.IsHeadlessService] = ""
	}
	l[LabelManagedBy] = managedBy
	return l
}

// upToDate is upstream's skip test: the subsets equal the desired ones and
// the labels are right. Order is fixed on both sides here, so repacking the
// live subsets compares them as sets. Unlike upstream, which rewrites a
// truncated object on every sync, an object already truncated as planned
// is left alone.
func upToDate(live, desired *corev1.Endpoints, truncated bool) bool {
	if !subsetsEqual(Repack(live.Subsets), desired.Subsets) {
		return false
	}
	if !equality.Semantic.DeepEqual(live.Labels, desired.Labels) {
		return false
	}
	_, over := live.Annotations[corev1.EndpointsOverCapacity]
	return over == truncated
}

// subsetsEqual compares ignoring target resourceVersions, as upstream.
func subsetsEqual(a, b []corev1.EndpointSubset) bool {
	strip := func(in []corev1.EndpointSubset) []corev1.EndpointSubset {
		out := make([]corev1.EndpointSubset, len(in))
		for i := range in {
			out[i] = *in[i].DeepCopy()
			for _, list := range [][]corev1.EndpointAddress{out[i].Addresses, out[i].NotReadyAddresses} {
				for j := range list {
					if list[j].TargetRef != nil {
						list[j].TargetRef.ResourceVersion = ""
					}
				}
			}
		}
		return out
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}
