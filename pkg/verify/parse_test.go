package verify

import (
	"strings"
	"testing"
	"time"
)

func TestParseHealthz(t *testing.T) {
	ok := `{"lastUpdated":"2026-11-27T05:00:00Z","currentTime":"2026-11-27T05:00:01Z","nodeEligible":true,"healthy":true,"status":{"IPv4":{"lastUpdated":"2026-11-27T05:00:00Z","healthy":true}}}`
	h, err := ParseHealthz(200, []byte(ok))
	if err != nil || !h.Healthy || !h.CurrentTime.Equal(t0.Add(time.Second)) {
		t.Fatalf("got %+v, %v", h, err)
	}
	if h, err := ParseHealthz(503, []byte(strings.Replace(ok, `"healthy":true,"status"`, `"healthy":false,"status"`, 1))); err != nil || h.Healthy {
		t.Fatalf("503: got %+v, %v", h, err)
	}
	// A node that is not eligible answers 503 with healthy true in the body.
	if h, err := ParseHealthz(503, []byte(ok)); err != nil || h.Healthy {
		t.Fatalf("503 with a healthy body: got %+v, %v", h, err)
	}
	for _, bad := range []struct {
		status int
		body   string
	}{{200, "ok"}, {200, `{"lastUpdated":"x"}`}, {200, `{}`}, {500, ok}, {200, strings.Repeat("\x1b[2J", 100)}} {
		_, err := ParseHealthz(bad.status, []byte(bad.body))
		if err == nil || strings.Contains(err.Error(), "\x1b") || len(err.Error()) > 400 {
			t.Errorf("%d %.20q: err %v", bad.status, bad.body, err)
		}
	}
}

func TestParseHealthCheck(t *testing.T) {
	hc, err := ParseHealthCheck(503, []byte(`{"service":{"namespace":"default","name":"web"},"localEndpoints":0,"serviceProxyHealthy":true}`))
	if err != nil || hc.LocalEndpoints != 0 || !hc.ProxyHealthy {
		t.Fatalf("got %+v, %v", hc, err)
	}
	for _, bad := range []string{`{}`, `{"localEndpoints":-1}`, `garbage`} {
		if _, err := ParseHealthCheck(200, []byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseMetrics(t *testing.T) {
	text := `# HELP kubeproxy_sync_proxy_rules_last_timestamp_seconds [ALPHA] The last time proxy rules were successfully synced
# TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds gauge
kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} 1.7982324e+09
kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"} 1.7982325e+09
kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family="IPv4"} 2
rest_client_requests_total{code="200"} 5
`
	m, err := ParseMetrics([]byte(text), []byte("nftables"))
	if err != nil || m.Mode != "nftables" || m.SyncFailures != 2 || m.LastSync["IPv4"].Unix() != 1798232400 || m.LastQueued["IPv4"].Unix() != 1798232500 {
		t.Fatalf("got %+v, %v", m, err)
	}
	for name, c := range map[string][2]string{
		"no kube-proxy sample": {"rest_client_requests_total 5\n", "nftables"},
		"garbage":              {"\x00\xff{{{}}} 1e999\n", ""},
		"NaN":                  {`kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} NaN`, ""},
		"huge":                 {`kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} 1e300`, ""},
		"bad mode":             {text, "<html>"},
	} {
		if _, err := ParseMetrics([]byte(c[0]), []byte(c[1])); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestClip(t *testing.T) {
	if got := Clip([]byte(strings.Repeat("é", 100))); len(got) > 100 || !strings.HasSuffix(got, "...") {
		t.Fatalf("got %q", got)
	}
}
