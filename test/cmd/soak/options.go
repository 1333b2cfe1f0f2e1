package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"
)

// options are the soak's flags; make soak passes SOAK_DURATION, SOAK_RATE,
// SOAK_FAULT_EVERY and SOAK_OUT as -duration, -rate, -fault-every and -out.
type options struct {
	Duration   time.Duration
	Rate       float64
	FaultEvery time.Duration
	// Faults restricts the rotation to these kinds (all when empty).
	Faults []faultKind
	Out    string
	// Outage is how long kube-controller-manager stays killed or frozen,
	// and kube-apiserver or etcd down, before it is started again.
	Outage time.Duration
	// Settle is excluded from "writes while healthy" after each fault and
	// after its recovery.
	Settle time.Duration
	// The loop's standby and election flags.
	TakeoverAfter, HandbackHold               time.Duration
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Margin is what the takeover check allows past --takeover-after.
	Margin time.Duration
	// FinalWithin bounds the wait for check -A and diff -A to come clean.
	FinalWithin time.Duration
	Seed        int64
	// SampleEvery is the API sampler's period, ResourceEvery the
	// replicas' resource sampler's.
	SampleEvery, ResourceEvery time.Duration
	Model                      modelConfig
}

func defaultOptions() options {
	return options{
		Duration: 20 * time.Minute, Rate: 3, FaultEvery: 3 * time.Minute,
		Outage: 30 * time.Second, Settle: 60 * time.Second,
		TakeoverAfter: 5 * time.Second, HandbackHold: 30 * time.Second,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		Margin: 2 * time.Second, FinalWithin: 30 * time.Second, Seed: 1, Faults: rotation,
		SampleEvery: 250 * time.Millisecond, ResourceEvery: 10 * time.Second, Model: defaultModel,
	}
}

// parseOptions reads the flags of args (without the program name).
func parseOptions(args []string) (options, error) {
	o := defaultOptions()
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.DurationVar(&o.Duration, "duration", o.Duration, "how long churn and faults run (SOAK_DURATION)")
	fs.Float64Var(&o.Rate, "rate", o.Rate, "churn events per second (SOAK_RATE)")
	fs.DurationVar(&o.FaultEvery, "fault-every", o.FaultEvery, "one fault this often, rotating through the kinds (SOAK_FAULT_EVERY)")
	faults := fs.String("faults", "", "comma-separated fault kinds to rotate through (default all: "+joinKinds(rotation)+")")
	fs.StringVar(&o.Out, "out", "", "directory for the outputs (SOAK_OUT; default a new directory under the temporary directory)")
	fs.DurationVar(&o.Outage, "outage", o.Outage, "how long kube-controller-manager stays killed or frozen, kube-apiserver or etcd down")
	fs.DurationVar(&o.Settle, "settle", o.Settle, "excluded from writes-while-healthy after each fault and after its recovery")
	fs.DurationVar(&o.TakeoverAfter, "takeover-after", o.TakeoverAfter, "the loop's --takeover-after")
	fs.DurationVar(&o.HandbackHold, "handback-hold", o.HandbackHold, "the loop's --handback-hold")
	fs.DurationVar(&o.LeaseDuration, "lease-duration", o.LeaseDuration, "the loop's --leader-elect-lease-duration")
	fs.DurationVar(&o.RenewDeadline, "renew-deadline", o.RenewDeadline, "the loop's --leader-elect-renew-deadline")
	fs.DurationVar(&o.RetryPeriod, "retry-period", o.RetryPeriod, "the loop's --leader-elect-retry-period")
	fs.DurationVar(&o.Margin, "margin", o.Margin, "what a takeover may take past --takeover-after")
	fs.DurationVar(&o.FinalWithin, "final-within", o.FinalWithin, "how long check -A and diff -A get to come clean after the last fault")
	fs.Int64Var(&o.Seed, "seed", o.Seed, "seed of the churn")
	fs.IntVar(&o.Model.Namespaces, "namespaces", o.Model.Namespaces, "namespaces of the churn")
	fs.IntVar(&o.Model.MinServices, "min-services", o.Model.MinServices, "Services per namespace, at least")
	fs.IntVar(&o.Model.MaxServices, "max-services", o.Model.MaxServices, "Services per namespace, at most")
	fs.DurationVar(&o.Model.NamespaceEvery, "namespace-every", o.Model.NamespaceEvery, "a namespace is deleted and created again this often (0: never)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if *faults != "" {
		var err error
		if o.Faults, err = parseKinds(*faults); err != nil {
			return o, err
		}
	}
	return o, o.validate()
}

func (o options) validate() error {
	var errs []error
	if o.Duration < 2*time.Minute {
		errs = append(errs, fmt.Errorf("-duration %s: at least 2m (a quarter is warm-up)", o.Duration))
	}
	if o.Rate <= 0 || o.Rate > 50 {
		errs = append(errs, fmt.Errorf("-rate %v: more than 0, at most 50 events a second", o.Rate))
	}
	if o.FaultEvery <= 0 {
		errs = append(errs, fmt.Errorf("-fault-every %s: must be positive", o.FaultEvery))
	}
	if o.Outage <= o.TakeoverAfter+o.Margin {
		errs = append(errs, fmt.Errorf("-outage %s: must exceed --takeover-after and the margin (%s), or no takeover is due", o.Outage, o.TakeoverAfter+o.Margin))
	}
	if o.RenewDeadline >= o.LeaseDuration || o.RenewDeadline <= o.RetryPeriod*12/10 {
		errs = append(errs, fmt.Errorf("lease times %s/%s/%s: want retry period x 1.2 < renew deadline < lease duration", o.LeaseDuration, o.RenewDeadline, o.RetryPeriod))
	}
	m := o.Model
	if m.Namespaces < 1 || m.MinServices < 1 || m.MaxServices < m.MinServices || m.MinPods < 0 || m.MaxPods < m.MinPods {
		errs = append(errs, fmt.Errorf("model sizes %+v are inconsistent", m))
	}
	return errors.Join(errs...)
}

func joinKinds(ks []faultKind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ",")
}

func parseKinds(list string) ([]faultKind, error) {
	var out []faultKind
	for _, f := range strings.Split(list, ",") {
		k := faultKind(strings.TrimSpace(f))
		found := false
		for _, r := range rotation {
			found = found || r == k
		}
		if !found {
			return nil, fmt.Errorf("-faults: unknown kind %q (kinds: %s)", k, joinKinds(rotation))
		}
		out = append(out, k)
	}
	return out, nil
}
