package cmd

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// servicesOnly lets the resource builder resolve Services without API
// discovery: arguments are normalised to services/NAME before they reach the
// builder, so a mapper that knows core/v1 Services is all it needs. That
// saves the discovery round trips (dozens on a cold cache) on every run.
type servicesOnly struct{ *genericclioptions.ConfigFlags }

func (s servicesOnly) ToRESTMapper() (meta.RESTMapper, error) {
	m := meta.NewDefaultRESTMapper(nil)
	m.AddSpecific(corev1.SchemeGroupVersion.WithKind("Service"),
		corev1.SchemeGroupVersion.WithResource("services"), corev1.SchemeGroupVersion.WithResource("service"), meta.RESTScopeNamespace)
	return m, nil
}
