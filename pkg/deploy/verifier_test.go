package deploy

import (
	"regexp"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
)

// verifierRoles are the verifier's roles' rules and reasons, by
// "Kind/namespace".
func verifierRoles(objs []runtime.Object) (map[string][]rbacv1.PolicyRule, map[string]map[string]string) {
	rules, why := map[string][]rbacv1.PolicyRule{}, map[string]map[string]string{}
	for _, o := range objs {
		switch r := o.(type) {
		case *rbacv1.ClusterRole:
			rules["ClusterRole/"], why["ClusterRole/"] = r.Rules, r.Annotations
		case *rbacv1.Role:
			rules["Role/"+r.Namespace], why["Role/"+r.Namespace] = r.Rules, r.Annotations
		}
	}
	return rules, why
}

// Each tier grants its right in kube-system and no other; nothing but
// Events is ever written; every verb has its reason, under a key the API
// server accepts; the Pods are not the writer's Deployment's.
func TestVerifierTiers(t *testing.T) {
	tierRight := map[string]string{TierHealthz: "pods/proxy", TierMetrics: "pods/portforward", TierRules: "pods/exec"}
	for _, tiers := range [][]string{{TierHealthz}, {TierMetrics}, {TierHealthz, TierMetrics, TierRules}} {
		objs := VerifierObjects("ops", "registry.example/ks:v1", 8080, tiers)
		rules, why := verifierRoles(objs)
		for tier, right := range tierRight {
			granted := false
			for role, rs := range rules {
				for _, r := range rs {
					if slices.Contains(r.Resources, right) {
						granted = true
						if role != "Role/kube-system" {
							t.Errorf("%v: %s granted by %s", tiers, right, role)
						}
					}
				}
			}
			if granted != slices.Contains(tiers, tier) {
				t.Errorf("tiers %v: %s granted %v", tiers, right, granted)
			}
		}
		for role, rs := range rules {
			for _, r := range rs {
				key := WhyKey(r.APIGroups[0], r.Resources[0])
				for _, v := range r.Verbs {
					write := v == "create" || v == "patch" || v == "update" || v == "delete"
					if write && key != "events" && key != "pods_exec" && key != "pods_portforward" {
						t.Errorf("%s: %s %s: the verifier writes nothing but Events", role, v, key)
					}
					if !regexp.MustCompile(`(^|; )` + v + `: \S`).MatchString(why[role][WhyAnnotationPrefix+key]) {
						t.Errorf("%s: %s on %s has no reason", role, v, key)
					}
				}
				if key == "configmaps" && !slices.Equal(r.ResourceNames, []string{"coredns"}) {
					t.Errorf("%s: configmaps not pinned to coredns: %v", role, r.ResourceNames)
				}
			}
		}
		for _, o := range objs {
			m, _ := apimeta.Accessor(o)
			for k := range m.GetAnnotations() {
				if errs := validation.IsQualifiedName(k); len(errs) > 0 {
					t.Errorf("annotation %q: %v", k, errs)
				}
			}
		}
		d := objs[len(objs)-1].(*appsv1.Deployment)
		sel := labels.SelectorFromSet(Labels())
		if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("the writer's Deployment selects the verifier's Pods: %v", d.Spec.Template.Labels)
		}
		if d.Spec.Template.Spec.ServiceAccountName != VerifierName || *d.Spec.Replicas != 1 {
			t.Errorf("verifier Pods: %+v", d.Spec.Template.Spec)
		}
	}
	if _, err := ParseTiers("healthz,exec"); err == nil {
		t.Error("an unknown tier accepted")
	}
	if got, err := ParseTiers("rules, healthz,rules"); err != nil || !slices.Equal(got, []string{TierRules, TierHealthz}) {
		t.Errorf("ParseTiers: %v %v", got, err)
	}
}
