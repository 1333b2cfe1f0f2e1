package verdict

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

// The exposition format's escapes are the parser's: a label value may
// hold a comma, a quote or what looks like another label.
func TestParseMetricsLabels(t *testing.T) {
	text := `kubeproxy_sync_proxy_rules_last_timestamp_seconds{note="a,ip_family=\"IPv6\"",ip_family="IPv4"} 1.7982324e+09` + "\n" +
		`kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv6",note="b\\"} 1.7982325e+09` // no newline: the last line still counts
	m, err := ParseMetrics([]byte(text), nil)
	if err != nil || len(m.LastSync) != 2 || m.LastSync["IPv4"].Unix() != 1798232400 || m.LastSync["IPv6"].Unix() != 1798232500 {
		t.Fatalf("got %+v, %v", m, err)
	}
}

// A node's answer that is not kube-proxy's metrics is an error worded on
// one short line, never a panic or a value.
func TestParseMetricsGarbage(t *testing.T) {
	for name, text := range map[string]string{
		"a histogram":       "# TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds histogram\nkubeproxy_sync_proxy_rules_last_timestamp_seconds_bucket{le=\"+Inf\"} 1\nkubeproxy_sync_proxy_rules_last_timestamp_seconds_count 1\nkubeproxy_sync_proxy_rules_last_timestamp_seconds_sum 1\n",
		"a summary":         "# TYPE kubeproxy_sync_proxy_rules_nftables_sync_failures_total summary\nkubeproxy_sync_proxy_rules_nftables_sync_failures_total{quantile=\"0.5\"} 1\n",
		"an unclosed label": `kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4} 1` + "\n",
		"two families":      "# TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds gauge\n# TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds counter\n",
		"a value":           `kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} ` + strings.Repeat("\x1b[2J", 1000) + "\n",
		"binary":            "\x00\x01\x02\xff\xfe{}\n\n\x00",
		"HTML":              "<html><body>502 Bad Gateway</body></html>",
		"empty":             "",
	} {
		_, err := ParseMetrics([]byte(text), []byte("nftables"))
		if err == nil || strings.Contains(err.Error(), "\x1b") || strings.Contains(err.Error(), "\n") || len(err.Error()) > 300 {
			t.Errorf("%s: err %q", name, err)
		}
	}
	if _, err := ParseMetrics([]byte("# TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds histogram\nkubeproxy_sync_proxy_rules_last_timestamp_seconds_count 1\n"), nil); err == nil || !strings.Contains(err.Error(), "is a histogram") {
		t.Errorf("a histogram: err %v", err)
	}
}

func FuzzParseMetrics(f *testing.F) {
	f.Add([]byte(`kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} 1.7e+09` + "\n"))
	f.Add([]byte("# TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds histogram\nkubeproxy_sync_proxy_rules_last_timestamp_seconds_bucket{le=\"1\"} 1\n"))
	f.Add([]byte("\x00\xff{{{}}} 1e999"))
	f.Fuzz(func(t *testing.T, text []byte) {
		in := string(text)
		m, err := ParseMetrics(text, nil)
		if string(text) != in {
			t.Fatal("the input was modified")
		}
		if err == nil && len(m.LastSync)+len(m.LastQueued) == 0 && m.SyncFailures == 0 && !strings.Contains(in, "kubeproxy_sync_proxy_rules_") {
			t.Fatalf("no kube-proxy sample, no error: %+v", m)
		}
	})
}

func TestQuoteHostileBody(t *testing.T) {
	_, err := ParseHealthCheck(200, []byte(strings.Repeat("é", 100)))
	if err == nil || len(err.Error()) > 160 || !strings.Contains(err.Error(), "more bytes)") {
		t.Fatalf("err %v", err)
	}
}
