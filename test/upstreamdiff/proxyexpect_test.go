package upstreamdiff

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/proxy"
	proxyapis "k8s.io/kubernetes/pkg/proxy/apis"
	utilnet "k8s.io/utils/net"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
)

var proxyCases = flag.Int("proxy-cases", 10000, "random cases of TestProxyExpectMatchesUpstream")

// TestProxyExpectMatchesUpstream feeds random Services, EndpointSlices and
// nodes to pkg/verify/proxyexpect and to kube-proxy's own code path (the informer
// label filters of cmd/kube-proxy, ServiceChangeTracker, the
// EndpointsChangeTracker's slice cache, CategorizeEndpoints, the health
// check's LocalReadyEndpoints) and requires the same endpoints, with their
// conditions and hints, for every family and service port. Inputs whose
// upstream result depends on Go's map order are drawn again.
func TestProxyExpectMatchesUpstream(t *testing.T) {
	quietKlog(t)
	start, redrawn := time.Now(), 0
	seen := coverage{}
	for i := 0; i < *proxyCases; i++ {
		s := *seed + int64(i)
		in := randomProxyInput(s)
		if !determinate(in) {
			redrawn++
			continue
		}
		want := upstreamProxy(in)
		before := deepCopyInput(in)
		got := oursProxy(in)
		seen.add(proxyexpect.For(in.svc, in.slices, in.node))
		if !equalObjects(before, in) {
			t.Fatalf("seed %d: proxyexpect.For modified its input", s)
		}
		if got != want {
			t.Fatalf("seed %d: expected sets differ\n%s\n--- ours\n%s--- upstream\n%s", s, describe(in), got, want)
		}
	}
	t.Logf("%d cases (%d with map-order-dependent upstream results skipped) in %s; ports: %s",
		*proxyCases-redrawn, redrawn, time.Since(start).Round(time.Millisecond), seen)
	// The generator must reach every rule, or a match proves little.
	for what, n := range seen {
		if n == 0 {
			t.Errorf("no case reached %q", what)
		}
	}
}

// coverage counts the service ports that reached each rule.
type coverage map[string]int

func (c coverage) add(exp proxyexpect.Expected) {
	if len(c) == 0 {
		for _, k := range []string{"cluster", "local", "same-zone", "same-node", "cluster-terminating",
			"local-terminating", "has-but-none-here", "health-check"} {
			c[k] = 0
		}
	}
	for _, f := range exp.Families {
		if f.HealthCheckNodePort != 0 && f.LocalReady > 0 {
			c["health-check"]++
		}
		for _, p := range f.Ports {
			c.port(p)
		}
	}
}

func (c coverage) port(p proxyexpect.Port) {
	if len(p.Cluster) > 0 {
		c["cluster"]++
		if !p.Cluster[0].Ready {
			c["cluster-terminating"]++
		}
	}
	if len(p.Local) > 0 {
		c["local"]++
		if !p.Local[0].Ready {
			c["local-terminating"]++
		}
	}
	switch p.Topology {
	case proxyexpect.TopologyPreferSameZone:
		c["same-zone"]++
	case proxyexpect.TopologyPreferSameNode:
		c["same-node"]++
	}
	if p.HasEndpoints && len(p.Reachable) == 0 {
		c["has-but-none-here"]++
	}
}

func (c coverage) String() string {
	var out []string
	for k, n := range c {
		out = append(out, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// quietKlog silences klog for the test: upstream logs every invalid port
// and address the generators make.
func quietKlog(t *testing.T) {
	quiet := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(quiet)
	_ = quiet.Set("logtostderr", "false")
	_ = quiet.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	t.Cleanup(func() {
		_ = quiet.Set("logtostderr", "true")
		_ = quiet.Set("stderrthreshold", "ERROR")
	})
}

type proxyInput struct {
	svc    *corev1.Service
	slices []*discoveryv1.EndpointSlice
	node   proxyexpect.Node
}

func deepCopyInput(in proxyInput) proxyInput {
	out := proxyInput{svc: in.svc.DeepCopy(), node: in.node}
	for _, s := range in.slices {
		out.slices = append(out.slices, s.DeepCopy())
	}
	return out
}

var families = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}

// upstreamProxy runs kube-proxy's code for each family and renders the
// result.
func upstreamProxy(in proxyInput) string {
	noProxyName, _ := labels.NewRequirement(proxyapis.LabelServiceProxyName, selection.DoesNotExist, nil)
	noHeadless, _ := labels.NewRequirement(corev1.IsHeadlessService, selection.DoesNotExist, nil)
	svcSelector, sliceSelector := labels.NewSelector().Add(*noProxyName), labels.NewSelector().Add(*noHeadless)
	topology := map[string]string{}
	if in.node.Zone != "" {
		topology[corev1.LabelTopologyZone] = in.node.Zone
	}
	nn := types.NamespacedName{Namespace: in.svc.Namespace, Name: in.svc.Name}
	var b strings.Builder
	for _, fam := range families {
		sct := proxy.NewServiceChangeTracker(fam, nil, nil)
		// The Service informer's selectors (cmd/kube-proxy/app/server.go).
		if svcSelector.Matches(labels.Set(in.svc.Labels)) && in.svc.Spec.ClusterIP != corev1.ClusterIPNone {
			sct.Update(nil, in.svc.DeepCopy())
		}
		sm := proxy.ServicePortMap{}
		sm.Update(sct)
		ect := proxy.NewEndpointsChangeTracker(fam, in.node.Name, nil, nil)
		for _, s := range in.slices {
			if sliceSelector.Matches(labels.Set(s.Labels)) {
				ect.EndpointSliceUpdate(s.DeepCopy(), false)
			}
		}
		em := proxy.EndpointsMap{}
		em.Update(ect)
		var lines []string
		for spn, sp := range sm {
			cluster, local, all, has := proxy.CategorizeEndpoints(em[spn], sp, in.node.Name, topology)
			lines = append(lines, portLine(fam, sp.ClusterIP().String(), spn.Port, spn.Protocol, sp.Port(), sp.NodePort(),
				sp.ExternallyAccessible(), sp.UsesClusterEndpoints(), sp.UsesLocalEndpoints(), has,
				upstreamEps(cluster), upstreamEps(local), upstreamEps(all)))
		}
		sort.Strings(lines)
		for _, l := range lines {
			b.WriteString(l)
		}
		if hc := sm.HealthCheckNodePorts()[nn]; hc != 0 {
			fmt.Fprintf(&b, "%s health check %d: %d local ready\n", fam, hc, em.LocalReadyEndpoints()[nn])
		}
	}
	return b.String()
}

func upstreamEps(eps []proxy.Endpoint) []string {
	var out []string
	for _, ep := range eps {
		out = append(out, epText(ep.String(), ep.IsLocal(), ep.IsReady(), ep.IsServing(), ep.IsTerminating(),
			sets.List(ep.ZoneHints()), sets.List(ep.NodeHints())))
	}
	return out
}

// oursProxy renders proxyexpect.For's result as upstreamProxy does.
func oursProxy(in proxyInput) string {
	exp := proxyexpect.For(in.svc, in.slices, in.node)
	var b strings.Builder
	for _, f := range exp.Families {
		var lines []string
		for _, p := range f.Ports {
			lines = append(lines, portLine(f.Family, utilnet.ParseIPSloppy(f.ClusterIP).String(), p.Name, p.Protocol,
				int(p.Port), int(p.NodePort), p.ExternallyAccessible, p.UsesCluster, p.UsesLocal, p.HasEndpoints,
				ourEps(p.Cluster), ourEps(p.Local), ourEps(p.Reachable)))
		}
		sort.Strings(lines)
		for _, l := range lines {
			b.WriteString(l)
		}
		if f.HealthCheckNodePort != 0 {
			fmt.Fprintf(&b, "%s health check %d: %d local ready\n", f.Family, f.HealthCheckNodePort, f.LocalReady)
		}
	}
	return b.String()
}

func ourEps(eps []proxyexpect.Endpoint) []string {
	var out []string
	for _, ep := range eps {
		out = append(out, epText(ep.String(), ep.Local, ep.Ready, ep.Serving, ep.Terminating, ep.ZoneHints, ep.NodeHints))
	}
	return out
}

func portLine(fam corev1.IPFamily, ip, name string, proto corev1.Protocol, port, nodePort int,
	external, usesCluster, usesLocal, has bool, cluster, local, all []string) string {
	// Reachable's order is upstream's map order when it merges Cluster
	// and Local: compare it as a set.
	sort.Strings(all)
	return fmt.Sprintf("%s %s %q/%s %d node %d external=%t cluster=%t local=%t has=%t\n  cluster %v\n  local %v\n  reachable %v\n",
		fam, ip, name, proto, port, nodePort, external, usesCluster, usesLocal, has, cluster, local, all)
}

func epText(key string, local, ready, serving, terminating bool, zones, nodes []string) string {
	flags := ""
	for i, f := range []bool{local, ready, serving, terminating} {
		if f {
			flags += string("LRST"[i])
		}
	}
	return fmt.Sprintf("%s{%s z%v n%v}", key, flags, zones, nodes)
}
