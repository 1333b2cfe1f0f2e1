package webhook

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// mixedOwners finds a numeric targetPort that the Pods of one owner declare
// and those of another do not: the selector also matches another workload,
// which receives a share of the connections and refuses them. Named target
// ports are left to PortNotFound, which names the Pods; Pods that declare no
// ports at all say nothing (declaring ports is optional), and neither do Pods
// without a controller.
func mixedOwners(svc *corev1.Service, pods []*corev1.Pod) []Finding {
	declared := map[string]map[string]bool{} // owner → "port/protocol"
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			continue
		}
		owner := ref.Kind + "/" + ref.Name
		ports := declared[owner]
		if ports == nil {
			ports = map[string]bool{}
			declared[owner] = ports
		}
		for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
			for _, c := range cs {
				for _, cp := range c.Ports {
					ports[portKey(cp.ContainerPort, cp.Protocol)] = true
				}
			}
		}
	}
	if len(declared) < 2 {
		return nil
	}
	owners := make([]string, 0, len(declared))
	for o := range declared {
		owners = append(owners, o)
	}
	sort.Strings(owners)
	var out []Finding
	for _, sp := range svc.Spec.Ports {
		if sp.TargetPort.Type == intstr.String {
			continue
		}
		target := sp.TargetPort.IntVal
		if target == 0 {
			target = sp.Port
		}
		key := portKey(target, sp.Protocol)
		var serve, not []string
		for _, o := range owners {
			switch {
			case declared[o][key]:
				serve = append(serve, o)
			case len(declared[o]) > 0:
				not = append(not, o)
			}
		}
		if len(serve) == 0 || len(not) == 0 {
			continue
		}
		out = append(out, Finding{Kind: MixedOwners,
			Message: fmt.Sprintf("service %s: selector matches Pods of %d owners with different ports: %s declare%s port %d, %s do%s not; connections sent to the latter are refused",
				svc.Name, len(serve)+len(not), nameList(serve), map[bool]string{true: "s", false: ""}[len(serve) == 1], target,
				nameList(not), map[bool]string{true: "es", false: ""}[len(not) == 1]),
			Hidden: fmt.Sprintf("service %s: selector matches Pods of %d owners that declare different ports; connections sent to some of them on port %d are refused %s",
				svc.Name, len(serve)+len(not), target, hiddenNote(svc.Namespace))})
	}
	return out
}

func portKey(port int32, proto corev1.Protocol) string {
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	return fmt.Sprintf("%d/%s", port, proto)
}
