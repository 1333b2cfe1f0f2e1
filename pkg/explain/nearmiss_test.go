package explain

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The nearest few, in (distance, name) order, whatever the input order.
func TestNearMissesBoundedOrder(t *testing.T) {
	var pods []*corev1.Pod
	for i := 9; i >= 0; i-- {
		pods = append(pods, podWith(fmt.Sprintf("far-%d", i), map[string]string{"app": "wxyz"}))
		pods = append(pods, podWith(fmt.Sprintf("case-%d", i), map[string]string{"app": "WEB"}))
	}
	pods = append(pods, podWith("near", map[string]string{"app": "wbe"}))
	var got []string
	for _, m := range NearMisses(map[string]string{"app": "web"}, pods) {
		got = append(got, m.Pod)
	}
	if want := "case-0 case-1 case-2 case-3 case-4"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
	got = got[:0]
	for _, m := range NearMisses(map[string]string{"app": "web"}, pods[: len(pods)-1 : len(pods)-1][12:]) {
		got = append(got, m.Pod)
	}
	if want := "case-0 case-1 case-2 case-3 far-0"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}
