package controlplane

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStartStop proves the harness: the API server answers, a Pod's status
// can be written without a kubelet, and Stop leaves no process behind, the
// controller manager included.
func TestStartStop(t *testing.T) {
	if os.Getenv("KUBECTL_SLICES_BIN_DIR") == "" {
		t.Skip("KUBECTL_SLICES_BIN_DIR not set (make test sets it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	if err := cp.StartControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	pids := []int{cp.etcd.cmd.Process.Pid, cp.apiserver.cmd.Process.Pid, cp.kcm.cmd.Process.Pid}
	if err := cp.Namespace(ctx, "shop"); err != nil {
		t.Fatal(err)
	}
	if err := cp.Node(ctx, NodeSpec{Name: "n1", Zone: "zone-a"}); err != nil {
		t.Fatal(err)
	}
	p, err := cp.Pod(ctx, "shop", PodSpec{Name: "p", Node: "n1", IPs: []string{"10.1.0.1"}, Ready: true, Terminating: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.PodIP != "10.1.0.1" || p.DeletionTimestamp == nil || p.Status.Phase != corev1.PodRunning {
		t.Fatalf("pod status not written: %+v deletion=%v", p.Status, p.DeletionTimestamp)
	}
	if _, err := cp.Admin.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	cp.Stop()
	for _, pid := range pids {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			t.Errorf("process %d still running after Stop", pid)
		}
	}
}
