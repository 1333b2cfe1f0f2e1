package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
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
		return h, fmt.Errorf("/healthz answered HTTP %d with %s, not kube-proxy's health JSON", status, Clip(body))
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
		return HealthCheck{}, fmt.Errorf("health check answered %s, not kube-proxy's JSON", Clip(body))
	}
	return HealthCheck{LocalEndpoints: *raw.LocalEndpoints, ProxyHealthy: raw.Healthy}, nil
}

// ParseMetrics reads kube-proxy's Prometheus text for the few samples
// verify uses, and /proxyMode's answer. Lines it does not use are
// skipped; a used sample whose value is not a finite number, or text
// with none of them, is an error.
func ParseMetrics(text, mode []byte) (Metrics, error) {
	m := Metrics{LastSync: map[string]time.Time{}, LastQueued: map[string]time.Time{}}
	found := false
	for line := range bytes.Lines(text) {
		name, family, value, ok := sample(string(bytes.TrimSpace(line)))
		if !ok {
			continue
		}
		switch name {
		case metricLastSync, metricLastQueued, metricNftFail, metricIptFail:
		default:
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e12 {
			return Metrics{}, fmt.Errorf("metric %s has value %s, not a number", name, Clip([]byte(value)))
		}
		found = true
		switch name {
		case metricLastSync:
			m.LastSync[family] = seconds(v)
		case metricLastQueued:
			m.LastQueued[family] = seconds(v)
		default:
			m.SyncFailures += v
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
		return Metrics{}, fmt.Errorf("/proxyMode answered %s, not a proxy mode", Clip(mode))
	}
	return m, nil
}

// sample splits `name{ip_family="IPv4"} value [timestamp]`.
func sample(line string) (name, family, value string, ok bool) {
	if line == "" || line[0] == '#' {
		return "", "", "", false
	}
	name, rest, labelled := strings.Cut(line, "{")
	if labelled {
		var labels string
		labels, rest, ok = strings.Cut(rest, "}")
		if !ok {
			return "", "", "", false
		}
		for _, l := range strings.Split(labels, ",") {
			if k, v, _ := strings.Cut(strings.TrimSpace(l), "="); k == "ip_family" {
				family = strings.Trim(v, `"`)
			}
		}
	} else {
		name, rest, _ = strings.Cut(line, " ")
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", "", "", false
	}
	return strings.TrimSpace(name), family, fields[0], true
}

func seconds(v float64) time.Time {
	sec, frac := math.Modf(v)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}

// Clip quotes at most 80 bytes of what a node answered, so that a hostile
// answer cannot flood the terminal or carry control characters.
func Clip(b []byte) string {
	const limit = 80
	s := string(b)
	if len(s) > limit {
		s = s[:limit]
		for !utf8.ValidString(s) && len(s) > 0 {
			s = s[:len(s)-1]
		}
		return strconv.Quote(s) + "..."
	}
	return strconv.Quote(s)
}
