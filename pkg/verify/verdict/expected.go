package verdict

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyread"
)

// portExp is one service port of one family as one node should program it.
type portExp struct {
	svc           string // "namespace/name"
	want          proxyread.Want
	port          proxyexpect.Port
	internalLocal bool
	since         *time.Time
}

// hcExp is one Service's health check node port and the count it should
// report on a node.
type hcExp struct {
	svc        string
	localReady int
	since      *time.Time
}

// expectFor derives, for one node, every port it should program and every
// health check count it should report, Services in the given order.
func expectFor(svcs []Service, since []*time.Time, node proxyexpect.Node) ([]portExp, []hcExp) {
	var ports []portExp
	var hcs []hcExp
	for i, s := range svcs {
		exp := proxyexpect.For(s.Service, s.Slices, node)
		key := s.Service.Namespace + "/" + s.Service.Name
		internalLocal := s.Service.Spec.InternalTrafficPolicy != nil && *s.Service.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal
		hcDone := false
		for _, fam := range exp.Families {
			if fam.HealthCheckNodePort != 0 && !hcDone {
				// One health check server answers for the Service, IPv4 first.
				hcs = append(hcs, hcExp{svc: key, localReady: fam.LocalReady, since: since[i]})
				hcDone = true
			}
			for _, p := range fam.Ports {
				ports = append(ports, portExp{svc: key, port: p, internalLocal: internalLocal, since: since[i],
					want: proxyread.Want{Ref: proxyexpect.RefOf(s.Service, p), Family: string(fam.Family), ClusterIP: fam.ClusterIP, Port: p}})
			}
		}
	}
	return ports, hcs
}

// Wants lists the service ports a node's rules are read for: every port of
// every family of the Services, in order, with the endpoints that node
// should program (their endpoint chains are read by name).
func Wants(svcs []Service, node *corev1.Node) []proxyread.Want {
	ports, _ := expectFor(svcs, make([]*time.Time, len(svcs)), proxyexpect.NodeOf(node))
	out := make([]proxyread.Want, 0, len(ports))
	for _, p := range ports {
		out = append(out, p.want)
	}
	return out
}

// lastChange is when a Service's slices last changed as far as the API
// shows: the newest last-change-trigger-time annotation, managed field
// time or creation time of its slices; nil without slices.
func lastChange(s Service) *time.Time {
	var newest time.Time
	for _, sl := range s.Slices {
		cand := []time.Time{sl.CreationTimestamp.Time}
		if v, ok := sl.Annotations[corev1.EndpointsLastChangeTriggerTime]; ok {
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				cand = append(cand, t)
			}
		}
		for _, mf := range sl.ManagedFields {
			if mf.Time != nil {
				cand = append(cand, mf.Time.Time)
			}
		}
		if t := slices.MaxFunc(cand, func(a, b time.Time) int { return a.Compare(b) }); t.After(newest) {
			newest = t
		}
	}
	if newest.IsZero() {
		return nil
	}
	return &newest
}
