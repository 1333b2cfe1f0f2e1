package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// The elector panics on durations it cannot honour; Validate names them
// first, and accepts kube-controller-manager's defaults.
func TestLeaseValidate(t *testing.T) {
	ok := Lease{Name: "kubectl-slices", LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
	if err := ok.Validate(); err != nil {
		t.Fatalf("kube-controller-manager's defaults refused: %v", err)
	}
	cases := []struct {
		edit func(*Lease)
		want string
	}{
		{func(l *Lease) { l.RetryPeriod = 0 }, "must be positive"},
		{func(l *Lease) { l.LeaseDuration = 10 * time.Second }, "must be longer than --leader-elect-renew-deadline"},
		{func(l *Lease) { l.RetryPeriod = 9 * time.Second }, "must be longer than 1.2 times"},
		{func(l *Lease) { l.Name = "" }, "must not be empty"},
	}
	for _, c := range cases {
		l := ok
		c.edit(&l)
		err := l.Validate()
		var ce *ConfigError
		if err == nil || !strings.Contains(err.Error(), c.want) || !asConfig(err, &ce) {
			t.Errorf("%+v: got %v, want a ConfigError saying %q", l, err, c.want)
		}
		if p := exit.Process("", "", err); exit.Code(p) != exit.Usage || err == nil || p.Error() != err.Error() {
			t.Errorf("%+v: the command reports %v (exit %d), want it as it is, a usage error", l, p, exit.Code(p))
		}
	}
}

func asConfig(err error, ce **ConfigError) bool {
	c, ok := err.(*ConfigError)
	*ce = c
	return ok
}
