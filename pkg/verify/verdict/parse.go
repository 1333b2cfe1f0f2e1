package verdict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The metrics verify reads (pkg/proxy/metrics), each labelled ip_family.
const (
	metricLastSync   = "kubeproxy_sync_proxy_rules_last_timestamp_seconds"
	metricLastQueued = "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds"
	metricNftFail    = "kubeproxy_sync_proxy_rules_nftables_sync_failures_total"
	metricIptFail    = "kubeproxy_sync_proxy_rules_iptables_restore_failures_total"
)

// ParseHealthz reads a /healthz answer: 200 and 503 carry kube-proxy's
// JSON (503: unhealthy); anything else, or a body that is not that JSON,
// is an error.
func ParseHealthz(status int, body []byte) (Healthz, error) {
	var h Healthz
	if status != 200 && status != 503 {
		return h, fmt.Errorf("/healthz answered HTTP %d", status)
	}
	var raw struct {
		Healthy      *bool     `json:"healthy"`
		LastUpdated  time.Time `json:"lastUpdated"`
		CurrentTime  time.Time `json:"currentTime"`
		NodeEligible *bool     `json:"nodeEligible"`
	}
	if err := json.Unmarshal(body, &raw); err != nil || raw.Healthy == nil {
		return h, fmt.Errorf("/healthz answered HTTP %d with %s, not kube-proxy's health JSON", status, english.QuoteClip(string(body), quoteLen))
	}
	// The status code is the verdict kube-proxy serves; the body agrees
	// unless the node is not eligible, which also answers 503.
	h = Healthz{Healthy: status == 200 && *raw.Healthy, LastUpdated: raw.LastUpdated, CurrentTime: raw.CurrentTime, NodeEligible: raw.NodeEligible}
	return h, nil
}

// ParseHealthCheck reads a health check node port's answer (200 or 503,
// kube-proxy's JSON with localEndpoints).
func ParseHealthCheck(status int, body []byte) (HealthCheck, error) {
	var raw struct {
		LocalEndpoints *int `json:"localEndpoints"`
		Healthy        bool `json:"serviceProxyHealthy"`
	}
	if status != 200 && status != 503 {
		return HealthCheck{}, fmt.Errorf("health check answered HTTP %d", status)
	}
	if err := json.Unmarshal(body, &raw); err != nil || raw.LocalEndpoints == nil || *raw.LocalEndpoints < 0 {
		return HealthCheck{}, fmt.Errorf("health check answered %s, not kube-proxy's JSON", english.QuoteClip(string(body), quoteLen))
	}
	return HealthCheck{LocalEndpoints: *raw.LocalEndpoints, ProxyHealthy: raw.Healthy}, nil
}

// ParseMetrics reads kube-proxy's Prometheus text for the few samples
// verify uses, and /proxyMode's answer. Families it does not use are
// skipped; text that is not the exposition format, a used family that is
// neither a gauge nor a counter, a used sample whose value is not a
// finite number, or text with none of them, is an error.
func ParseMetrics(text, mode []byte) (Metrics, error) {
	families, err := parseText(text)
	if err != nil {
		return Metrics{}, err
	}
	m := Metrics{LastSync: map[string]time.Time{}, LastQueued: map[string]time.Time{}}
	found := false
	for _, name := range []string{metricLastSync, metricLastQueued, metricNftFail, metricIptFail} {
		mf, ok := families[name]
		if !ok {
			continue
		}
		for _, s := range mf.GetMetric() {
			v, err := value(name, mf.GetType(), s)
			if err != nil {
				return Metrics{}, err
			}
			found = true
			switch name {
			case metricLastSync:
				m.LastSync[label(s, "ip_family")] = seconds(v)
			case metricLastQueued:
				m.LastQueued[label(s, "ip_family")] = seconds(v)
			default:
				m.SyncFailures += v
			}
		}
	}
	if !found {
		return Metrics{}, errors.New("the metrics hold no kubeproxy_sync_proxy_rules sample: not kube-proxy's metrics")
	}
	switch md := strings.TrimSpace(string(mode)); md {
	case "iptables", "nftables", "ipvs", "kernelspace":
		m.Mode = md
	case "":
	default:
		return Metrics{}, fmt.Errorf("/proxyMode answered %s, not a proxy mode", english.QuoteClip(string(mode), quoteLen))
	}
	return m, nil
}

// parseText parses the text exposition format (0.0.4, which kube-proxy
// serves to a client that asks for no other). Names are held to UTF-8
// validity (model.UTF8Validation): the parser must be given a scheme, and
// only the few names verify looks up matter.
func parseText(text []byte) (families map[string]*dto.MetricFamily, err error) {
	// The parser is fed a node's answer: whatever it does with garbage,
	// the answer is an error, never a panic.
	defer func() {
		if r := recover(); r != nil {
			families, err = nil, fmt.Errorf("the metrics do not parse (%s): not kube-proxy's metrics", english.Clip(fmt.Sprint(r), quoteLen))
		}
	}()
	in := io.Reader(bytes.NewReader(text))
	if len(text) > 0 && text[len(text)-1] != '\n' {
		// The format ends every line with a newline; a last line without
		// one is still a line (the parser would call it cut).
		in = io.MultiReader(in, strings.NewReader("\n"))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err = p.TextToMetricFamilies(in)
	if err != nil {
		return nil, fmt.Errorf("the metrics do not parse (%s): not kube-proxy's metrics", english.Clip(err.Error(), quoteLen))
	}
	return families, nil
}

// value is a sample's value when its family holds plain numbers (a
// gauge, a counter or untyped) and it is finite, not negative and at most
// 1e12 (a time in seconds, some 30,000 years ahead, or a count).
func value(name string, typ dto.MetricType, s *dto.Metric) (float64, error) {
	var v float64
	switch typ {
	case dto.MetricType_GAUGE:
		v = s.GetGauge().GetValue()
	case dto.MetricType_COUNTER:
		v = s.GetCounter().GetValue()
	case dto.MetricType_UNTYPED:
		v = s.GetUntyped().GetValue()
	default:
		return 0, fmt.Errorf("metric %s is a %s, not a gauge or counter", name, strings.ToLower(typ.String()))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e12 {
		return 0, fmt.Errorf("metric %s has value %s, not a number", name, english.QuoteClip(strconv.FormatFloat(v, 'g', -1, 64), quoteLen))
	}
	return v, nil
}

// label is the value of the sample's label name, "" without one.
func label(s *dto.Metric, name string) string {
	for _, l := range s.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func seconds(v float64) time.Time {
	sec, frac := math.Modf(v)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}

// quoteLen is how much of what a node answered an error quotes.
const quoteLen = 80
