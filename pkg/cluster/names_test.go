package cluster

import (
	"context"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// Completion offers the names of one namespace's objects of one kind, sorted.
func TestNames(t *testing.T) {
	client := fake.NewClientset(
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "db"}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}},
	)
	for _, c := range []struct {
		resource string
		want     []string
	}{{"services", []string{"api", "web"}}, {"statefulset", []string{"db"}}, {"deployment", []string{}}} {
		got, err := Names(context.Background(), client, c.resource, "shop")
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v %v, want %v", c.resource, got, err, c.want)
		}
	}
}
