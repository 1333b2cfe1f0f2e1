package deploy

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-slices/kubectl-slices/pkg/monitoring"
)

// monitoringGroup is prometheus-operator's API; its types are not a
// dependency (unstructured objects, as cert-manager's).
const monitoringGroup = "monitoring.coreos.com/v1"

// ruleLabels are kube-prometheus' default rule selector's (older releases
// select rules by them; newer ones select every rule), beside ours.
var ruleLabels = map[string]string{"prometheus": "k8s", "role": "alert-rules"}

// Monitoring is a PodMonitor scraping the loop's Pods on their health port,
// with the job named by their app.kubernetes.io/name (the job the rules
// select), and a PrometheusRule with pkg/monitoring's groups: the same
// rules as monitoring/kubectl-slices.rules.yaml.
// With verify, a second PodMonitor scrapes the verifier's Pods as the job
// monitoring.VerifyJob.
func Monitoring(ns string, verify bool) ([]runtime.Object, error) {
	podLabels := map[string]any{}
	for k, v := range Labels() {
		podLabels[k] = v
	}
	ruleMeta := map[string]any{}
	for k, v := range Labels() {
		ruleMeta[k] = v
	}
	for k, v := range ruleLabels {
		ruleMeta[k] = v
	}
	groups, err := asJSON(monitoring.Groups())
	if err != nil {
		return nil, err
	}
	out := []runtime.Object{podMonitor(Name, ns, "app.kubernetes.io/name", podLabels)}
	if verify {
		verifier := map[string]any{}
		for k, v := range VerifierLabels() {
			verifier[k] = v
		}
		out = append(out, podMonitor(VerifierName, ns, "app.kubernetes.io/instance", verifier))
	}
	return append(out, &unstructured.Unstructured{Object: map[string]any{"apiVersion": monitoringGroup, "kind": "PrometheusRule",
		"metadata": map[string]any{"name": Name, "namespace": ns, "labels": ruleMeta},
		"spec":     map[string]any{"groups": groups}}}), nil
}

// podMonitor scrapes the Pods labelled podLabels on their metrics port,
// their job the value of the label jobLabel names.
func podMonitor(name, ns, jobLabel string, podLabels map[string]any) runtime.Object {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": monitoringGroup, "kind": "PodMonitor",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": podLabels},
		"spec": map[string]any{
			"jobLabel":            jobLabel,
			"selector":            map[string]any{"matchLabels": podLabels},
			"podMetricsEndpoints": []any{map[string]any{"port": "metrics", "path": "/metrics"}},
		}}}
}

// asJSON turns typed values into the plain maps and slices an unstructured
// object holds.
func asJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}
