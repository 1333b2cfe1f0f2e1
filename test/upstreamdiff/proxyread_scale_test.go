package upstreamdiff

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os/exec"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sysctltest "k8s.io/component-helpers/node/util/sysctl/testing"
	"k8s.io/kubernetes/pkg/proxy/iptables"
	"k8s.io/kubernetes/pkg/proxy/nftables"
	proxyutil "k8s.io/kubernetes/pkg/proxy/util"
	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
	iptablestest "k8s.io/kubernetes/pkg/util/iptables/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyread"
)

var (
	readScale         = flag.Int("proxy-read-scale", 0, "Services of TestProxyReadScale (0: skip)")
	readScaleTargeted = flag.Bool("proxy-read-scale-targeted", false, "TestProxyReadScale also reads nftables chain by chain (minutes)")
)

// scaleServices are n Services of one TCP port and three ready endpoints
// each, and their wants.
func scaleServices(n int) ([]*corev1.Service, []*discoveryv1.EndpointSlice, []proxyread.Want) {
	var svcs []*corev1.Service
	var slices []*discoveryv1.EndpointSlice
	var wants []proxyread.Want
	node := proxyexpect.Node{Name: "node-a"}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("svc%d", i)
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: corev1.ServiceSpec{
			ClusterIP: fmt.Sprintf("10.96.%d.%d", i/250, i%250+1), Type: corev1.ServiceTypeClusterIP,
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}}}}
		sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name + "-1",
			Labels: map[string]string{discoveryv1.LabelServiceName: name}}, AddressType: discoveryv1.AddressTypeIPv4,
			Ports: []discoveryv1.EndpointPort{{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(8080))}}}
		for j := 0; j < 3; j++ {
			sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.%d.%d.%d", 1+j, i/250, i%250+1)},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}, NodeName: ptr("node-b")})
		}
		svcs, slices = append(svcs, svc), append(slices, sl)
		for _, f := range proxyexpect.For(svc, []*discoveryv1.EndpointSlice{sl}, node).Families {
			for _, p := range f.Ports {
				wants = append(wants, proxyread.Want{Ref: proxyexpect.RefOf(svc, p), Family: string(f.Family), ClusterIP: f.ClusterIP, Port: p})
			}
		}
	}
	return svcs, slices, wants
}

func feedAll(p proxyHandler, svcs []*corev1.Service, slices []*discoveryv1.EndpointSlice) {
	p.OnTopologyChange(map[string]string{})
	for _, s := range svcs {
		p.OnServiceAdd(s)
	}
	for _, s := range slices {
		p.OnEndpointSliceAdd(s)
	}
	p.OnServiceSynced()
	p.OnEndpointSlicesSynced()
}

// TestProxyReadScale programs -proxy-read-scale Services into the real nft
// (kube-proxy's nftables proxier) and the real iptables (the iptables
// proxier's rules restored) of a network namespace of its own, and times
// one reading of all their ports in each mode.
func TestProxyReadScale(t *testing.T) {
	if *readScale == 0 {
		t.Skip("-proxy-read-scale is 0")
	}
	for _, bin := range []string{"nft", "iptables-restore"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("no %s here: %v", bin, err)
		}
	}
	svcs, slices, wants := scaleServices(*readScale)
	inNetns(t, func() (string, error) {
		var report bytes.Buffer
		p, err := nftables.NewProxier(context.Background(), corev1.IPv4Protocol, time.Hour, 0, false, 14,
			proxyutil.NewNoOpLocalDetector(), "node-a", net.ParseIP("192.0.2.200"), nil, nil, nil, false)
		if err != nil {
			return "", err
		}
		feedAll(p, svcs, slices)
		ipt := iptablestest.NewFake()
		ip, err := iptables.NewProxier(context.Background(), corev1.IPv4Protocol, ipt, sysctltest.NewFake(), time.Hour, 0, false, false, 14,
			proxyutil.NewNoOpLocalDetector(), "node-a", net.ParseIP("192.0.2.200"), nil, nil, nil, false)
		if err != nil {
			return "", err
		}
		feedAll(ip, svcs, slices)
		for _, table := range []utiliptables.Table{utiliptables.TableNAT, utiliptables.TableFilter} {
			var buf bytes.Buffer
			if err := ipt.SaveInto(table, &buf); err != nil {
				return "", err
			}
			if _, err := run(ownChains(buf.String()), "iptables-restore", "-w", "5"); err != nil {
				return "", err
			}
		}
		readers := []proxyread.Reader{proxyread.Nftables{}, proxyread.Iptables{}, proxyread.Iptables{Targeted: *readScale}}
		if *readScaleTargeted {
			readers = append(readers, proxyread.Nftables{Targeted: *readScale})
		}
		for _, reader := range readers {
			start := time.Now()
			r, err := reader.Read(context.Background(), localExec, wants)
			if err != nil {
				return "", err
			}
			took := time.Since(start)
			for _, ps := range r.Ports {
				if !ps.Dispatch || len(ps.Cluster.Endpoints) != 3 {
					return "", fmt.Errorf("%s: %+v", r.Mode, ps)
				}
			}
			fmt.Fprintf(&report, "%s %+v: %d ports in %s, %d execs, %d bytes; ", r.Mode, reader, len(r.Ports), took.Round(time.Millisecond), r.Execs, r.Bytes)
		}
		return report.String(), nil
	})
}
