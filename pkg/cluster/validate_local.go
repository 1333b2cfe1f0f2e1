package cluster

import (
	"fmt"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate rejects, after ApplyDefaults, what the API server would refuse
// to store among the fields the planner reads, so that --local never
// explains a state no cluster can hold. The rules are upstream's
// (k8s.io/kubernetes pkg/apis/core/validation: ValidateService's ports and
// selector, ValidatePod's status IPs) written with apimachinery's helpers.
// The first error names the object and the field.
func (m *Manifests) Validate() error {
	for _, s := range m.Services {
		if errs := validateService(s); len(errs) > 0 {
			return fmt.Errorf("service %s/%s: %s", s.Namespace, s.Name, english.Clip(errs[0].Error(), english.ClipLen))
		}
	}
	for _, p := range m.Pods {
		if errs := validatePod(p); len(errs) > 0 {
			return fmt.Errorf("pod %s/%s: %s", p.Namespace, p.Name, english.Clip(errs[0].Error(), english.ClipLen))
		}
	}
	return nil
}

var serviceProtocols = sets.New(string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP))

func validateService(s *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	names := sets.New[string]()
	for i, p := range s.Spec.Ports {
		path := spec.Child("ports").Index(i)
		if len(s.Spec.Ports) > 1 && p.Name == "" {
			errs = append(errs, field.Required(path.Child("name"), "must be set when a Service has more than one port"))
		} else if p.Name != "" {
			for _, msg := range validation.IsDNS1123Label(p.Name) {
				errs = append(errs, field.Invalid(path.Child("name"), p.Name, msg))
			}
		}
		if names.Has(p.Name) {
			errs = append(errs, field.Duplicate(path.Child("name"), p.Name))
		}
		names.Insert(p.Name)
		if s.Spec.Type != corev1.ServiceTypeExternalName || p.Port != 0 {
			for _, msg := range validation.IsValidPortNum(int(p.Port)) {
				errs = append(errs, field.Invalid(path.Child("port"), p.Port, msg))
			}
		}
		if !serviceProtocols.Has(string(p.Protocol)) {
			errs = append(errs, field.NotSupported(path.Child("protocol"), p.Protocol, sets.List(serviceProtocols)))
		}
		errs = append(errs, validateTargetPort(p.TargetPort, path.Child("targetPort"))...)
	}
	errs = append(errs, metav1validation.ValidateLabels(s.Spec.Selector, spec.Child("selector"))...)
	return errs
}

func validateTargetPort(tp intstr.IntOrString, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if tp.Type == intstr.String {
		for _, msg := range validation.IsValidPortName(tp.StrVal) {
			errs = append(errs, field.Invalid(path, tp.StrVal, msg))
		}
		return errs
	}
	for _, msg := range validation.IsValidPortNum(tp.IntValue()) {
		errs = append(errs, field.Invalid(path, tp.IntValue(), msg))
	}
	return errs
}

func validatePod(p *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, metav1validation.ValidateLabels(p.Labels, field.NewPath("metadata", "labels"))...)
	status := field.NewPath("status")
	if p.Status.PodIP != "" {
		errs = append(errs, validation.IsValidIPForLegacyField(status.Child("podIP"), p.Status.PodIP, false, nil)...)
	}
	for i, ip := range p.Status.PodIPs {
		errs = append(errs, validation.IsValidIPForLegacyField(status.Child("podIPs").Index(i).Child("ip"), ip.IP, false, nil)...)
	}
	return errs
}
