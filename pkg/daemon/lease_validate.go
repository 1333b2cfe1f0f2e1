package daemon

import (
	"fmt"
	"time"

	"k8s.io/client-go/tools/leaderelection"
)

// Validate checks the Lease's durations as client-go's elector will, so a
// mistake is named before any request instead of panicking the elector:
// the lease outlasts the renew deadline, which outlasts the jittered retry
// period. The messages name the command's flags, which carry these names.
func (l Lease) Validate() error {
	switch {
	case l.LeaseDuration <= 0 || l.RenewDeadline <= 0 || l.RetryPeriod <= 0:
		return &ConfigError{fmt.Errorf("--leader-elect-lease-duration, --leader-elect-renew-deadline and --leader-elect-retry-period must be positive")}
	case l.LeaseDuration <= l.RenewDeadline:
		return &ConfigError{fmt.Errorf("--leader-elect-lease-duration (%v) must be longer than --leader-elect-renew-deadline (%v)", l.LeaseDuration, l.RenewDeadline)}
	case l.RenewDeadline <= time.Duration(leaderelection.JitterFactor*float64(l.RetryPeriod)):
		return &ConfigError{fmt.Errorf("--leader-elect-renew-deadline (%v) must be longer than %v times --leader-elect-retry-period (%v)", l.RenewDeadline, leaderelection.JitterFactor, l.RetryPeriod)}
	case l.Name == "":
		return &ConfigError{fmt.Errorf("--leader-elect-resource-name must not be empty")}
	}
	return nil
}
