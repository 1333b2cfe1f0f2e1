package daemon

import (
	"testing"
)

// sync's loop flags, each refusal as worded, in the order they are met.
func TestValidateSync(t *testing.T) {
	loop := LoopSettings{Watch: true, Workers: 5, SummaryInterval: 60e9}
	hook := WebhookSettings{Addr: ":8443"}
	// kube-controller-manager's defaults, as the flags give them.
	lead := LeaderSettings{LeaseDuration: 15e9, RenewDeadline: 10e9, RetryPeriod: 2e9, Name: "kubectl-slices"}
	elect := lead
	elect.Elect = true
	for _, c := range []struct {
		name    string
		w       LoopSettings
		elect   bool
		hook    WebhookSettings
		dryRun  bool
		output  string
		changed string
		want    string
	}{
		{name: "plain loop", w: loop},
		{name: "json lines", w: loop, output: "json"},
		{name: "one-shot", w: LoopSettings{}, dryRun: true, output: "yaml"},
		{name: "webhook without watch", w: LoopSettings{}, hook: hook,
			want: "--webhook-addr and the TLS flags serve the webhook from the watch loop: add --watch, or run 'kubectl slices webhook'"},
		{name: "dry run", w: loop, dryRun: true, want: "--watch writes; it cannot be combined with --dry-run"},
		{name: "yaml", w: loop, output: "yaml", want: "with --watch, -o may only be json (one object per line)"},
		{name: "no workers", w: LoopSettings{Watch: true}, want: "--concurrent-syncs must be at least 1"},
		{name: "standby without watch", w: LoopSettings{Standby: true}, want: "--standby stands by beside kube-controller-manager in the watch loop: add --watch"},
		{name: "leader without watch", w: LoopSettings{}, elect: true, changed: "leader-elect", want: "--leader-elect"},
	} {
		changed := func(f string) bool { return f == c.changed }
		l := lead
		if c.elect {
			l = elect
		}
		err := c.w.ValidateSync(changed, l, c.hook, "kubectl-slices", c.dryRun, c.output)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || len(err.Error()) < len(c.want) || err.Error()[:len(c.want)] != c.want):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	if err := loop.ValidateSync(nil, lead, WebhookSettings{}, "kubectl-slices", false, ""); err != nil {
		t.Errorf("no flag changed (nil): %v", err)
	}
}
