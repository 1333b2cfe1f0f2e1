package printers

import (
	"errors"
	"testing"
	"time"
)

// The webhook's lines, exactly: the e2e tests, the benchmark and users'
// log filters match on them.
func TestWebhookLines(t *testing.T) {
	stats := WebhookStats{Services: 12, EndpointSlices: 3, P50: 1234567 * time.Nanosecond, P99: 7654321 * time.Nanosecond, Handshakes: 4,
		Requests: 9, Reviews: 2, Limited: 5}
	uncounted, noAccess, unlimited := stats, stats, stats
	uncounted.Requests = -1
	noAccess.Reviews, noAccess.Limited = -1, -1
	unlimited.Limited = 0
	const stopped = "webhook: stopped; 12 Service and 3 EndpointSlice admissions, handling time p50 1.235ms p99 7.654ms, 4 TLS handshakes"
	for _, c := range []struct{ got, want string }{
		{WebhookServing("127.0.0.1:8443", "/validate/services", "/validate/endpointslices"),
			"webhook: serving https://127.0.0.1:8443/validate/services and /validate/endpointslices"},
		{WebhookCertLoaded("/tls/tls.crt"), "webhook: serving certificate loaded from /tls/tls.crt"},
		{WebhookCertKept(errors.New("no such file")), "webhook: cannot reload the serving certificate, keeping the previous one: no such file"},
		{WebhookNoClientCA(), "webhook: no --client-ca-file: callers are not authenticated, so Service warnings name no Pods and no access is reviewed"},
		{WebhookClientCA("/ca/ca.crt"), "webhook: callers must present a client certificate signed by a CA of /ca/ca.crt"},
		{WebhookClientCAReloaded("/ca/ca.crt"), "webhook: client CA file reloaded from /ca/ca.crt"},
		{WebhookClientCAKept(errors.New("bad PEM")), "webhook: cannot reload the client CA file, keeping the previous one: bad PEM"},
		{WebhookSelfUnknown(errors.New("forbidden")),
			"webhook: cannot learn this process's own user (forbidden): the loop's writes pass the guard only if --allow-user or --allow-group names it"},
		{WebhookSelfUnknown(nil),
			"webhook: cannot learn this process's own user (<nil>): the loop's writes pass the guard only if --allow-user or --allow-group names it"},
		{WebhookSelfAllowed([]string{"sa:loop"}, nil), "webhook: our slices may be written by sa:loop (this process)"},
		{WebhookSelfAllowed([]string{"alice", "bob", "sa:loop"}, []string{"ops", "sre"}),
			"webhook: our slices may be written by sa:loop (this process), users alice, bob, groups ops, sre"},
		{WebhookCachesFilled(), "webhook: caches filled; Service admissions are judged from now on"},
		{WebhookStopped(stats), stopped + "; API requests since the caches filled: 9 (2 of them access reviews); 5 access reviews skipped by the rate limit"},
		{WebhookStopped(unlimited), stopped + "; API requests since the caches filled: 9 (2 of them access reviews)"},
		{WebhookStopped(noAccess), stopped + "; API requests since the caches filled: 9"},
		{WebhookStopped(uncounted), stopped},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}
