package monitoring

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Panel is one time series panel of the dashboard: its queries and the
// unit of their values (Grafana's unit ids).
type Panel struct {
	Title   string
	Unit    string
	Queries []Query
}

// Query is one PromQL expression and its legend. Expressions select the
// loop's series with sel (the job, and the namespace and pod variables).
type Query struct {
	Expr, Legend string
}

// sel is every query's selector: the rules' job, and the dashboard's
// variables.
const sel = `job="kubectl-slices",namespace="$namespace",pod=~"$pod"`

// Panels are the dashboard's panels, in reading order: what the safety net
// does, how the controller fares, the loop's work, then the process.
func Panels() []Panel {
	q := func(expr, legend string) Query {
		return Query{Expr: strings.ReplaceAll(expr, "SEL", sel), Legend: legend}
	}
	quantiles := func(metric, extra string) []Query {
		return []Query{
			q(`histogram_quantile(0.5, sum by (le) (rate(`+metric+`_bucket{SEL`+extra+`}[5m])))`, "p50"),
			q(`histogram_quantile(0.99, sum by (le) (rate(`+metric+`_bucket{SEL`+extra+`}[5m])))`, "p99"),
		}
	}
	return []Panel{
		{Title: "Services by standby state", Unit: "short", Queries: []Query{
			q(`max by (state) (kubectl_slices_standby_services{SEL})`, "{{state}}"),
			q(`max(kubectl_slices_services_controller_current{SEL})`, "kube-controller-manager current"),
		}},
		{Title: "Takeovers and hand-backs", Unit: "short", Queries: []Query{
			q(`sum(increase(kubectl_slices_takeovers_total{SEL}[5m]))`, "taken over"),
			q(`sum(increase(kubectl_slices_handbacks_total{SEL}[5m]))`, "handed back"),
		}},
		{Title: "kube-controller-manager's lag, as the loop measures it", Unit: "s", Queries: quantiles("kubectl_slices_controller_lag_seconds", "")},
		{Title: "EndpointSlice writes by operation", Unit: "wps", Queries: []Query{
			q(`sum by (operation) (rate(kubectl_slices_changes_total{SEL}[5m]))`, "{{operation}}"),
		}},
		{Title: "Syncs by result", Unit: "ops", Queries: []Query{
			q(`sum by (result) (rate(kubectl_slices_syncs_total{SEL}[5m]))`, "{{result}}"),
		}},
		{Title: "Sync latency (work queue)", Unit: "s", Queries: append(
			quantiles("workqueue_work_duration_seconds", `,name="endpoint_slice"`),
			q(`histogram_quantile(0.99, sum by (le) (rate(workqueue_queue_duration_seconds_bucket{SEL,name="endpoint_slice"}[5m])))`, "p99 waiting"))},
		{Title: "Work queue", Unit: "short", Queries: []Query{
			q(`sum(workqueue_depth{SEL,name="endpoint_slice"})`, "depth"),
			q(`sum(rate(workqueue_adds_total{SEL,name="endpoint_slice"}[5m]))`, "adds/s"),
			q(`sum(rate(workqueue_retries_total{SEL,name="endpoint_slice"}[5m]))`, "retries/s"),
		}},
		{Title: "Leadership per replica", Unit: "short", Queries: []Query{
			q(`max by (pod) (leader_election_master_status{SEL,name="kubectl-slices"})`, "{{pod}}"),
		}},
		{Title: "API requests by code", Unit: "reqps", Queries: []Query{
			q(`sum by (code) (rate(rest_client_requests_total{SEL}[5m]))`, "{{code}}"),
		}},
		{Title: "Resident memory", Unit: "bytes", Queries: []Query{
			q(`max by (pod) (process_resident_memory_bytes{SEL})`, "{{pod}}"),
		}},
		{Title: "CPU (cores)", Unit: "short", Queries: []Query{
			q(`sum by (pod) (rate(process_cpu_seconds_total{SEL}[5m]))`, "{{pod}}"),
		}},
		{Title: "Goroutines", Unit: "short", Queries: []Query{
			q(`max by (pod) (go_goroutines{SEL})`, "{{pod}}"),
		}},
	}
}

// Dashboard renders the panels as a Grafana dashboard (built-in panels
// only): a data source variable, and namespace and pod variables read
// from the loop's own series.
func Dashboard(panels []Panel) ([]byte, error) {
	ds := map[string]any{"type": "prometheus", "uid": "${datasource}"}
	variable := func(name, query string, all bool) map[string]any {
		v := map[string]any{"name": name, "label": name, "type": "query", "datasource": ds, "refresh": 2, "sort": 1,
			"query": map[string]any{"query": query, "refId": name}, "definition": query}
		if all {
			v["includeAll"], v["multi"], v["allValue"] = true, true, ".*"
		}
		return v
	}
	out := make([]any, 0, len(panels))
	for i, p := range panels {
		targets := make([]any, 0, len(p.Queries))
		for j, q := range p.Queries {
			targets = append(targets, map[string]any{"datasource": ds, "expr": q.Expr, "legendFormat": q.Legend, "refId": string(rune('A' + j))})
		}
		out = append(out, map[string]any{
			"id": i + 1, "type": "timeseries", "title": p.Title, "datasource": ds, "targets": targets,
			"gridPos":     map[string]any{"h": 8, "w": 12, "x": 12 * (i % 2), "y": 8 * (i / 2)},
			"fieldConfig": map[string]any{"defaults": map[string]any{"unit": p.Unit}, "overrides": []any{}},
		})
	}
	d := map[string]any{
		"title": "kubectl-slices", "uid": "kubectl-slices", "description": "The kubectl-slices safety net beside kube-controller-manager (generated from pkg/monitoring)",
		"tags": []string{"kubernetes", "endpointslices", "kubectl-slices"}, "schemaVersion": 39, "version": 1, "editable": true,
		"time": map[string]any{"from": "now-6h", "to": "now"}, "refresh": "30s",
		"templating": map[string]any{"list": []any{
			map[string]any{"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus"},
			variable("namespace", fmt.Sprintf(`label_values(kubectl_slices_caches_synced{job=%q}, namespace)`, Job), false),
			variable("pod", fmt.Sprintf(`label_values(kubectl_slices_caches_synced{job=%q,namespace="$namespace"}, pod)`, Job), true),
		}},
		"panels": out,
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// PanelsMarkdown lists the panels with their queries, for the docs.
func PanelsMarkdown(panels []Panel) []byte {
	var b strings.Builder
	b.WriteString("# The dashboard's panels\n\nGenerated by `make docs` from pkg/monitoring, as [kubectl-slices.dashboard.json](kubectl-slices.dashboard.json): do not edit.\n")
	b.WriteString("Every query selects `" + sel + "`, written `SEL` below.\n\n| panel | unit | queries (legend: expression) |\n|---|---|---|\n")
	for _, p := range panels {
		qs := make([]string, 0, len(p.Queries))
		for _, q := range p.Queries {
			expr := strings.ReplaceAll(q.Expr, sel, "SEL")
			qs = append(qs, "`"+q.Legend+"`: `"+strings.ReplaceAll(expr, "|", `\|`)+"`")
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s |\n", p.Title, p.Unit, strings.Join(qs, "<br>"))
	}
	return []byte(b.String())
}
