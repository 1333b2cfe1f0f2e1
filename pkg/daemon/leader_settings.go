package daemon

import (
	"fmt"
	"net"
	"time"
)

// LeaderSettings are sync --watch's settings for running in a cluster, as
// the command line gives them: leader election among replicas and the
// health/metrics endpoint; errors name the flags.
type LeaderSettings struct {
	Elect         bool
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	Name          string
	Namespace     string
	HealthAddr    string
}

// LeaseFlags are valid only with --leader-elect; WatchOnlyFlags only with
// --watch.
var (
	LeaseFlags     = []string{"leader-elect-lease-duration", "leader-elect-renew-deadline", "leader-elect-retry-period", "leader-elect-resource-name", "leader-elect-resource-namespace"}
	WatchOnlyFlags = append([]string{"leader-elect", "health-addr", "batch-period", "summary-interval", "concurrent-syncs"}, LeaseFlags...)
)

// Validate checks the settings; watch says --watch was given, changed
// which flags were set on the command line. The lease's durations are the
// election's to judge (Lease.Validate).
func (l LeaderSettings) Validate(changed func(string) bool, watch bool) error {
	for _, name := range WatchOnlyFlags {
		if changed(name) && !watch {
			return fmt.Errorf("--%s is valid only with --watch", name)
		}
	}
	for _, name := range LeaseFlags {
		if changed(name) && !l.Elect {
			return fmt.Errorf("--%s is valid only with --leader-elect", name)
		}
	}
	if err := l.Lease("").Validate(); err != nil {
		return err
	}
	if l.HealthAddr != "" {
		if _, _, err := net.SplitHostPort(l.HealthAddr); err != nil {
			return fmt.Errorf("--health-addr must be HOST:PORT (e.g. :8080): %v", err)
		}
	}
	return nil
}

// Lease is the election's configuration; ns is the Lease's namespace when
// --leader-elect-resource-namespace is not given.
func (l LeaderSettings) Lease(ns string) *Lease {
	if l.Namespace != "" {
		ns = l.Namespace
	}
	return &Lease{Name: l.Name, Namespace: ns, LeaseDuration: l.LeaseDuration, RenewDeadline: l.RenewDeadline, RetryPeriod: l.RetryPeriod}
}
