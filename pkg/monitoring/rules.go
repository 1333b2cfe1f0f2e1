package monitoring

import (
	"bytes"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// Job is the job label the rules select the loop's targets by: deploy's
// PodMonitor takes it from the Pods' app.kubernetes.io/name; a plain scrape
// configuration names its job so.
const Job = "kubectl-slices"

// ProxyJob is the job label of kube-proxy's targets, as kubernetes-mixin's
// kubeProxySelector and kube-prometheus name it; a scrape configuration
// with another name edits KubeProxyUnresponsive's selector.
const ProxyJob = "kube-proxy"

// VerifyJob is the job label of the verifier's targets (verify --watch):
// deploy --verify's PodMonitor takes it from its Pods'
// app.kubernetes.io/instance.
const VerifyJob = "kubectl-slices-verify"

// Runbook is the page each alert's runbook_url points into, at the alert's
// own section.
const Runbook = "https://github.com/kubectl-slices/kubectl-slices/blob/main/docs/runbook.md"

// Thresholds the alerts compare with, and the tests that fire them read.
const (
	// LagP99 is the controller lag p99 that warns: half of the default
	// --takeover-after (5 s), so a controller that is only slow is seen
	// before a takeover. A loop run with another --takeover-after keeps it.
	LagP99 = 2.5
	// ProxyHealthTimeout is kube-proxy's default health timeout: twice its
	// default 30 s sync period (a proxy run with another period has
	// another timeout).
	ProxyHealthTimeout = 60
)

// Rule is one recording rule or alert, in Prometheus' rule file form.
type Rule struct {
	Record      string            `json:"record,omitempty"`
	Alert       string            `json:"alert,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Group is a rule group.
type Group struct {
	Name  string `json:"name"`
	Rules []Rule `json:"rules"`
}

// Recording rules the alerts (and a dashboard) share.
const (
	ServingRecord = "namespace:kubectl_slices_services_serving:max"
	LagRecord     = "namespace:kubectl_slices_controller_lag_seconds:p99_10m"
)

// Groups are the loop's rules: recording rules first, then the alerts on
// the loop and on the data plane.
func Groups() []Group {
	job := fmt.Sprintf(`job=%q`, Job)
	return []Group{
		{Name: "kubectl-slices.rules", Rules: []Rule{
			{Record: ServingRecord,
				Expr: `max by (namespace) (kubectl_slices_standby_services{` + job + `,state="serving"})`},
			{Record: LagRecord,
				Expr: `histogram_quantile(0.99, sum by (namespace, le) (rate(kubectl_slices_controller_lag_seconds_bucket{` + job + `}[10m])))`},
		}},
		{Name: "kubectl-slices", Rules: []Rule{
			alert("KubectlSlicesServingServices", "warning", "5m",
				ServingRecord+` > 0`,
				"kube-controller-manager fails Services that kubectl-slices serves.",
				"The kubectl-slices loop in {{ $labels.namespace }} publishes {{ $value }} Services whose endpoints kube-controller-manager has not published for more than --takeover-after."),
			alert("KubectlSlicesControllerLagHigh", "warning", "15m",
				fmt.Sprintf("%s > %g", LagRecord, LagP99),
				"kube-controller-manager is slow to publish endpoints.",
				fmt.Sprintf("kube-controller-manager took {{ $value | humanizeDuration }} (p99) to publish a change, as the kubectl-slices loop in {{ $labels.namespace }} measures it: over %gs for 15 minutes. At --takeover-after the loop takes Services over.", LagP99)),
			// Unless a replica is not scraped: the leader may be the one
			// Prometheus cannot reach (KubectlSlicesDown speaks for that).
			alert("KubectlSlicesNoLeader", "critical", "5m",
				`sum by (namespace) (leader_election_master_status{`+job+`,name="kubectl-slices"}) < 1 unless on (namespace) count by (namespace) (up{`+job+`} == 0)`,
				"No kubectl-slices replica leads.",
				"Replicas of kubectl-slices run in {{ $labels.namespace }}, and none has held the Lease for 5 minutes: nothing stands by for kube-controller-manager."),
			alert("KubectlSlicesSyncsFailing", "warning", "10m",
				`sum by (namespace, pod) (rate(kubectl_slices_syncs_total{`+job+`,result="error"}[5m])) > 0`,
				"kubectl-slices fails to sync Services.",
				"{{ $labels.namespace }}/{{ $labels.pod }} has failed Service syncs (reads or writes refused) for 10 minutes."),
			alert("KubectlSlicesCachesNotSynced", "critical", "10m",
				`max by (namespace, pod) (kubectl_slices_caches_synced{`+job+`}) == 0`,
				"kubectl-slices cannot fill its caches.",
				"{{ $labels.namespace }}/{{ $labels.pod }} has not listed the cluster's Services, Pods, Nodes and EndpointSlices in 10 minutes: it is blind and serves nothing."),
			// Every target gone, or every one of a namespace's replicas
			// down while another namespace's run.
			alert("KubectlSlicesDown", "critical", "15m",
				`(count by (namespace) (up{`+job+`}) unless count by (namespace) (up{`+job+`} == 1)) or absent(up{`+job+`})`,
				"No kubectl-slices target is up.",
				"Prometheus has scraped no kubectl-slices target{{ with $labels.namespace }} in {{ . }}{{ end }} for 15 minutes: the safety net is gone, or not scraped."),
		}},
		{Name: "kubectl-slices-dataplane", Rules: dataPlaneAlerts()},
		{Name: "kube-proxy-staleness", Rules: []Rule{
			// A change queued after the last sync, which is older than the
			// timeout; or, never synced since it started longer ago (the
			// last sync's series exists only after the first), a change
			// queued: kube-proxy's own healthz fails on both.
			alert("KubeProxyApplyStale", "warning", "1m",
				fmt.Sprintf(`((kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds > kubeproxy_sync_proxy_rules_last_timestamp_seconds) and (time() - kubeproxy_sync_proxy_rules_last_timestamp_seconds > %[1]d))`+
					` or ((kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds unless kubeproxy_sync_proxy_rules_last_timestamp_seconds) and on (job, instance) (time() - process_start_time_seconds > %[1]d))`, ProxyHealthTimeout),
				"A node's kube-proxy has stopped applying Service changes.",
				fmt.Sprintf("kube-proxy at {{ $labels.instance }} has a change queued and has applied none for more than %ds (its health timeout): Services on that node route by stale rules.", ProxyHealthTimeout)),
			// A kube-proxy that fails its scrapes: frozen, restarting, or
			// its node cut off. Its series go stale, so the alert above
			// cannot judge it. Per target: the mixin's KubeProxyDown waits
			// for every kube-proxy to be down, and TargetDown for more
			// than a tenth of the job, which on a large cluster is many
			// nodes. By job and not by the families it served, which a
			// range over them would forget some time after the freeze.
			alert("KubeProxyUnresponsive", "warning", "1m",
				fmt.Sprintf(`up{job=%q} == 0`, ProxyJob),
				"A node's kube-proxy does not answer its scrapes.",
				"kube-proxy at {{ $labels.instance }} has answered no scrape for a minute: whether it still applies Service changes on that node is unknown."),
		}},
	}
}

// dataPlaneAlerts are the verifier's (verify --watch): its status gauge
// holds what the last round found, and DRIFT already excludes a change a
// node may still have queued (PENDING), so a DRIFT held for a minute is a
// node or a replica serving what the slices no longer say.
func dataPlaneAlerts() []Rule {
	job := fmt.Sprintf(`job=%q`, VerifyJob)
	status := func(kind, s string) string {
		return fmt.Sprintf(`max by (namespace, target) (kubectl_slices_dataplane_status{%s,kind=%q,status=%q}) == 1`, job, kind, s)
	}
	return []Rule{
		alert("KubectlSlicesDataPlaneDrift", "warning", "1m", status("node", "DRIFT"),
			"A node's service proxy routes by what the EndpointSlices no longer say.",
			"The kubectl-slices verifier in {{ $labels.namespace }} has found node {{ $labels.target }} programming other endpoints than the EndpointSlices hold, past kube-proxy's sync period, for a minute (an Event DataPlaneDrift on the Node names the Service and the endpoint)."),
		alert("KubectlSlicesDNSReplicaDrift", "warning", "1m", status("dns", "DRIFT"),
			"A DNS replica answers what the EndpointSlices no longer say.",
			"The kubectl-slices verifier in {{ $labels.namespace }} has found DNS replica {{ $labels.target }} serving other records than the EndpointSlices give, past its cache's window, for a minute."),
		// A tier the verifier was not granted (deploy --verify-tiers) is
		// UNKNOWN on every node by choice (forbidden), and a node whose
		// proxy is not kube-proxy (Cilium's replacement, a virtual node)
		// for good (no-proxy): neither is alerted.
		alert("KubectlSlicesDataPlaneUnknown", "warning", "30m",
			fmt.Sprintf(`max by (namespace, target, class) (kubectl_slices_dataplane_unknown_info{%s,kind="node",class!~"forbidden|no-proxy"}) == 1`, job),
			"The verifier cannot tell whether a node routes by the EndpointSlices.",
			"The kubectl-slices verifier in {{ $labels.namespace }} has not verified node {{ $labels.target }} for 30 minutes ({{ $labels.class }}): whether its service proxy follows the slices is unknown."),
		// Its targets scraped and down: the alerts above would never fire.
		// Not absent(): the verifier is optional, and where none is
		// deployed nothing is missing.
		alert("KubectlSlicesVerifierDown", "warning", "15m",
			fmt.Sprintf(`max by (namespace) (up{%s}) == 0`, job),
			"The kubectl-slices verifier is down.",
			"Prometheus has scraped no kubectl-slices verifier in {{ $labels.namespace }} for 15 minutes: the data-plane alerts cannot fire."),
	}
}

// alert builds an alert whose runbook is its section of the runbook page.
func alert(name, severity, forDur, expr, summary, description string) Rule {
	return Rule{Alert: name, Expr: expr, For: forDur,
		Labels: map[string]string{"severity": severity},
		Annotations: map[string]string{
			"summary":     summary,
			"description": description,
			"runbook_url": Runbook + "#" + strings.ToLower(name),
		}}
}

// RulesFile renders the groups as a Prometheus rule file.
func RulesFile(groups []Group) ([]byte, error) {
	b, err := yaml.Marshal(map[string][]Group{"groups": groups})
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteString("# Generated by `make docs` from pkg/monitoring: do not edit.\n")
	out.Write(b)
	return out.Bytes(), nil
}
