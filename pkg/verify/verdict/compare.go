package verdict

import (
	"fmt"
	"slices"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyread"
)

// portKey matches a read port to the expected one.
type portKey struct {
	ref    proxyexpect.PortRef
	family string
}

// compareRules holds each expected port against what the node programmed,
// kube-proxy's rules at 1.36 (nftables and iptables proxier alike): a port
// with internal endpoints (any endpoint, or a local one under
// internalTrafficPolicy Local) has its cluster IP dispatched to its chain,
// any other port a no-endpoints verdict; a policy chain exists, with
// exactly its policy's endpoints, when the port uses that policy and the
// policy has endpoints. Chains of a policy the port does not use are not
// judged: the proxy may remove them only on its next full sync. The
// dispatch goes to the Local chain under internalTrafficPolicy Local, to
// the Cluster chain otherwise; a port without internal endpoints rejects
// when it has no endpoint anywhere and drops otherwise. What the node's
// answer did not let the reader read is unchecked (each reason once per
// port), never missing.
func compareRules(exp []portExp, r proxyread.Reading) (expected, programmed int, missing, extra []Finding, unchecked []string) {
	read := map[portKey]proxyread.PortState{}
	for _, st := range r.Ports {
		read[portKey{st.Want.Ref, st.Want.Family}] = st
	}
	for _, e := range exp {
		st, ok := read[portKey{e.want.Ref, e.want.Family}]
		base := Finding{Service: e.svc, Port: e.port.Name, Family: e.want.Family, Since: e.since}
		hasInternal := e.port.HasEndpoints && (!e.internalLocal || len(e.port.Local) > 0)
		if !ok {
			// The reader returned nothing for the port: nothing of it is programmed.
			st = proxyread.PortState{Want: e.want}
		}
		target := fmt.Sprintf("%s:%d/%s", e.want.ClusterIP, e.port.Port, e.port.Protocol)
		if st.Unreadable != "" {
			unchecked = append(unchecked, e.svc+" "+target+": "+st.Unreadable)
		} else {
			m, x := compareDispatch(e, st, hasInternal, base, target)
			missing, extra = append(missing, m...), append(extra, x...)
		}
		for _, pol := range []struct {
			uses  bool
			want  []proxyexpect.Endpoint
			chain proxyread.Chain
		}{{e.port.UsesCluster, e.port.Cluster, st.Cluster}, {e.port.UsesLocal, e.port.Local, st.Local}} {
			if !pol.uses {
				continue
			}
			if pol.chain.Unreadable != "" {
				unchecked = append(unchecked, e.svc+" chain "+pol.chain.Name+": "+pol.chain.Unreadable)
				continue
			}
			m, x := compareChain(base, r.Mode, e.want.Ref, pol.want, pol.chain)
			expected += len(pol.want)
			programmed += len(pol.chain.Endpoints)
			missing, extra = append(missing, m...), append(extra, x...)
		}
	}
	return expected, programmed, missing, extra, unchecked
}

// compareDispatch holds a port's dispatch and no-endpoints verdict against
// what its endpoints call for.
func compareDispatch(e portExp, st proxyread.PortState, hasInternal bool, base Finding, target string) (missing, extra []Finding) {
	switch {
	case hasInternal && !st.Dispatch:
		missing = append(missing, with(base, "dispatch", "", "", target))
	case !hasInternal && st.Dispatch:
		extra = append(extra, with(base, "dispatch", "", "", target+": "+st.DispatchEvidence))
	case hasInternal && st.DispatchTarget != "":
		want := st.Cluster.Name
		if e.internalLocal {
			want = st.Local.Name
		}
		if want != "" && st.DispatchTarget != want {
			f := with(base, "dispatch", want, "", target+" goes to "+st.DispatchTarget)
			missing = append(missing, f)
		}
	}
	switch {
	case !hasInternal && !st.NoEndpoints:
		missing = append(missing, with(base, "no-endpoints", "", "", target))
	case hasInternal && st.NoEndpoints:
		extra = append(extra, with(base, "no-endpoints", "", "", target))
	case !hasInternal && st.NoEndpointsVerdict != "":
		want := "reject"
		if e.port.HasEndpoints {
			// Endpoints elsewhere, none here under internalTrafficPolicy Local.
			want = "drop"
		}
		if st.NoEndpointsVerdict != want {
			missing = append(missing, with(base, "no-endpoints", "", "", target+" is "+st.NoEndpointsVerdict+", not "+want))
		}
	}
	return missing, extra
}

// compareChain holds a policy chain's endpoints against the expected
// ones. An endpoint chain it jumps to that holds no DNAT rule is drift,
// not a chain that could not be read: it was read whole, and traffic sent
// there is not delivered. It is worded as the expected endpoint whose
// chain kube-proxy names so (the endpoint the node then lacks), else as a
// jump of its own that sends traffic nowhere; the name labels the finding
// only, what the chain reaches is read from its DNAT rules.
func compareChain(base Finding, mode proxyread.Mode, ref proxyexpect.PortRef, want []proxyexpect.Endpoint, chain proxyread.Chain) (missing, extra []Finding) {
	m, x := diffEndpoints(want, chain)
	meant := map[string]string{} // endpoint chain -> its expected endpoint
	for _, ep := range want {
		name := proxyexpect.NftablesEndpointChain(ref, ep)
		if mode == proxyread.ModeIptables {
			name = proxyexpect.IptablesEndpointChain(ref, ep)
		}
		meant[name] = ep.String()
	}
	why := map[string]string{} // missing endpoint -> its chain's lack of DNAT
	for _, c := range chain.NoDNAT {
		if ep := meant[c]; ep != "" && slices.Contains(m, ep) {
			why[ep] = noDNAT(c)
			continue
		}
		extra = append(extra, with(base, "endpoint", chain.Name, meant[c], noDNAT(c)))
	}
	for _, ep := range m {
		missing = append(missing, with(base, "endpoint", chain.Name, ep, why[ep]))
	}
	for _, ep := range x {
		extra = append(extra, with(base, "endpoint", chain.Name, ep, ""))
	}
	return missing, extra
}

func noDNAT(chain string) string {
	return "endpoint chain " + chain + " has no DNAT rule: traffic sent there is not delivered"
}

// diffEndpoints returns the expected endpoints the chain lacks and those it
// has that are not expected, each sorted.
func diffEndpoints(want []proxyexpect.Endpoint, chain proxyread.Chain) (missing, extra []string) {
	wantSet := map[string]bool{}
	for _, ep := range want {
		wantSet[ep.String()] = true
	}
	have := map[string]bool{}
	for _, ep := range chain.Endpoints {
		have[ep] = true
		if !wantSet[ep] {
			extra = append(extra, ep)
		}
	}
	for ep := range wantSet {
		if !have[ep] {
			missing = append(missing, ep)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	return slices.Compact(missing), slices.Compact(extra)
}

func with(f Finding, what, chain, endpoint, detail string) Finding {
	f.What, f.Chain, f.Endpoint, f.Detail = what, chain, endpoint, detail
	return f
}

// compareHealthChecks holds each health check node port's count against
// the node's local ready endpoints. A health check that did not answer is
// not a finding: the rules tier judges the node.
func compareHealthChecks(exp []hcExp, got map[string]Result[HealthCheck]) (missing, extra []Finding) {
	for _, e := range exp {
		r := got[e.svc]
		if r.Value == nil || r.Value.LocalEndpoints == e.localReady {
			continue
		}
		f := Finding{Service: e.svc, What: "health-check", Since: e.since,
			Detail: fmt.Sprintf("kube-proxy counts %d local endpoints, the slices hold %d", r.Value.LocalEndpoints, e.localReady)}
		if r.Value.LocalEndpoints < e.localReady {
			missing = append(missing, f)
		} else {
			extra = append(extra, f)
		}
	}
	return missing, extra
}
