package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
	"github.com/kubectl-slices/kubectl-slices/test/faultproxy"
)

// soak is one run: the cluster, the replicas and what drives and watches
// them.
type soak struct {
	o         options
	out       string
	pluginDir string
	log       *os.File

	cp       *controlplane.ControlPlane
	ids      identities
	proxies  []*faultproxy.Proxy
	tokens   []*tokenFile
	replicas []*replica
	churn    *churn
	sampler  *sampler
	injector *injector

	mu        sync.Mutex
	resources []resourceSample
	// start is when churn and faults began, end when they are to stop.
	start, end time.Time
}

// logf prints a line with the time since the start to stdout and the log.
func (s *soak) logf(format string, a ...any) {
	line := fmt.Sprintf("%s %s", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, a...))
	fmt.Println(line)
	if s.log != nil {
		fmt.Fprintln(s.log, line)
	}
}

// audit reads the audit log so far.
func (s *soak) audit() ([]auditEvent, error) {
	return s.cp.Audit()
}

// run is the whole soak; the exit code is 0 when every check held, 1 when
// one failed, 2 when the soak itself could not run, 130 when interrupted.
func (s *soak) run(ctx context.Context) (code int) {
	hard, cancel := context.WithTimeout(ctx, s.o.Duration+20*time.Minute)
	defer cancel()
	defer s.cleanup()
	if err := s.setUp(hard); err != nil {
		s.logf("set-up failed: %v", err)
		if ctx.Err() != nil {
			return 130
		}
		return 2
	}
	in := s.drive(hard)
	interrupted := ctx.Err() != nil
	r := analyze(in)
	if err := r.writeCSVs(s.out); err != nil {
		s.logf("writing the CSV files: %v", err)
	}
	if err := r.plotPNG(filepath.Join(s.out, "soak.png")); err != nil {
		s.logf("drawing the plot: %v", err)
	}
	sum := r.summary()
	fmt.Print("\n" + sum)
	_ = os.WriteFile(filepath.Join(s.out, "summary.txt"), []byte(sum), 0o644)
	if f := in.Final; f != nil && !f.OK {
		_ = os.WriteFile(filepath.Join(s.out, "final-check.txt"), []byte(f.CheckOut+"\n--- diff -A\n"+f.DiffOut), 0o644)
	}
	fmt.Printf("\noutputs in %s: summary.txt, soak.png, resources.csv, activity.csv, faults.csv, takeovers.csv, our-writes.csv, drops.csv, lease-terms.csv; replica-*.log, control-plane/\n", s.out)
	switch {
	case interrupted:
		return 130
	case len(r.Failures()) > 0:
		return 1
	}
	return 0
}

// setUp builds the plugin, starts the cluster and the replicas and fills
// the churn's world, waiting until the controller publishes it.
func (s *soak) setUp(ctx context.Context) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := repoRoot(wd)
	if err != nil {
		return err
	}
	s.pluginDir = filepath.Join(s.out, "bin")
	s.logf("building kubectl-slices into %s", s.pluginDir)
	if err := buildPlugin(ctx, root, s.pluginDir); err != nil {
		return err
	}
	s.logf("starting etcd, kube-apiserver (audit log) and kube-controller-manager (%v)", kcmControllers)
	if err := s.startCluster(ctx); err != nil {
		return err
	}
	client, err := s.client()
	if err != nil {
		return err
	}
	s.sampler = newSampler(client, s.o.SampleEvery)
	s.churn = &churn{client: client, model: newModel(s.o.Model, s.o.Seed, time.Now()), rate: s.o.Rate}
	s.logf("filling %d namespaces with Services and Pods", s.o.Model.Namespaces)
	if err := s.churn.fill(ctx, 3*time.Minute); err != nil {
		return err
	}
	ns, svcs, pods := s.churn.model.counts()
	s.logf("%d namespaces, %d Services, %d Pods; waiting for kube-controller-manager to publish them", ns, svcs, pods)
	if !s.sampler.waitCurrent(ctx, 2*time.Minute) {
		return errors.New("kube-controller-manager did not publish every Service within 2m")
	}
	if err := s.newReplicas(ctx); err != nil {
		return err
	}
	for _, r := range s.replicas {
		if err := r.begin(); err != nil {
			return err
		}
	}
	s.logf("replicas %s and %s started through kubectl; waiting for /readyz and a leader", s.replicas[0].Name, s.replicas[1].Name)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ready := 0
		for _, r := range s.replicas {
			if r.get(ctx, "/readyz") == 200 {
				ready++
			}
		}
		if ready == len(s.replicas) && s.leaseHolder(ctx) != "" {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("the replicas were not ready with a leader within 2m (see replica-*.log)")
		}
		if !sleep(ctx, 500*time.Millisecond) {
			return ctx.Err()
		}
	}
	return nil
}

// drive runs churn, faults and the samplers for the duration, then the
// final check, and stops the replicas; it returns what the checks read.
func (s *soak) drive(ctx context.Context) inputs {
	s.start = time.Now()
	s.end = s.start.Add(s.o.Duration)
	s.injector = &injector{s: s}
	// No namespace may still be on its way out at the last look.
	s.churn.model.cfg.NamespaceUntil = s.end.Add(-2 * time.Minute)
	s.logf("soak: %s of churn at %.1f/s, a fault every %s (%s); outputs in %s", s.o.Duration, s.o.Rate, s.o.FaultEvery, joinKinds(s.o.Faults), s.out)
	runCtx, stopRun := context.WithDeadline(ctx, s.end)
	defer stopRun()
	var wg sync.WaitGroup
	bg := func(f func(context.Context), c context.Context) {
		wg.Add(1)
		go func() { defer wg.Done(); f(c) }()
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	bg(s.sampler.run, watchCtx)
	bg(s.sampleResources, watchCtx)
	for _, t := range s.tokens {
		bg(t.refresh, watchCtx)
	}
	var churnWG sync.WaitGroup
	churnWG.Add(2)
	go func() { defer churnWG.Done(); s.churn.run(runCtx) }()
	go func() { defer churnWG.Done(); s.injector.run(runCtx, s.start, s.end) }()
	bg(s.progress, runCtx)

	churnWG.Wait() // the duration is over (or interrupted); a fault in progress has recovered
	end := time.Now()
	var final *finalResult
	if ctx.Err() == nil {
		s.logf("churn and faults stopped; kubectl slices check -A and diff -A must come clean within %s", s.o.FinalWithin)
		f := s.final(ctx, s.o.FinalWithin)
		final = &f
		s.logf("check -A exit %d, diff -A exit %d after %s", f.CheckCode, f.DiffCode, f.Took.Round(100*time.Millisecond))
	}
	stop := time.Now()
	for _, r := range s.replicas {
		r.stop()
	}
	stopWatch()
	wg.Wait()
	evs, err := s.audit()
	if err != nil {
		s.logf("reading the audit log: %v", err)
	}
	s.mu.Lock()
	res := append([]resourceSample(nil), s.resources...)
	s.mu.Unlock()
	in := inputs{Opts: s.o, IDs: s.ids, Start: s.start, End: end, Stop: stop, Churn: s.churn.Records(), Faults: s.injector.Faults(),
		Audit: evs, Resources: res, Exits: map[string][]replicaExit{}, Final: final}
	s.sampler.view(func(t *tracker, errs int) { in.Tracker, in.SamplerErrors = t, errs })
	for _, r := range s.replicas {
		in.Exits[r.Name] = r.Exits()
	}
	return in
}

// sampleResources samples every replica every ResourceEvery.
func (s *soak) sampleResources(ctx context.Context) {
	for {
		for _, r := range s.replicas {
			smp := r.sample(ctx)
			s.mu.Lock()
			s.resources = append(s.resources, smp)
			s.mu.Unlock()
		}
		if !sleep(ctx, s.o.ResourceEvery) {
			return
		}
	}
}

// progress prints one line a minute, from the same checks as the summary.
func (s *soak) progress(ctx context.Context) {
	for sleep(ctx, time.Minute) {
		evs, _ := s.audit()
		s.mu.Lock()
		res := append([]resourceSample(nil), s.resources...)
		s.mu.Unlock()
		in := inputs{Opts: s.o, IDs: s.ids, Start: s.start, End: time.Now(), Stop: time.Now(), Churn: s.churn.Records(),
			Faults: s.injector.Faults(), Audit: evs, Resources: res, Exits: map[string][]replicaExit{}}
		for _, r := range s.replicas {
			in.Exits[r.Name] = r.Exits()
		}
		s.sampler.view(func(t *tracker, errs int) { in.Tracker, in.SamplerErrors = t.copy(), errs })
		s.logf("%s", analyze(in).progressLine(time.Now()))
	}
}

// cleanup stops everything the soak started, whatever happened.
func (s *soak) cleanup() {
	for _, r := range s.replicas {
		if r.done != nil {
			r.stop()
		}
	}
	for _, p := range s.proxies {
		p.Close()
	}
	s.cp.Stop() // a frozen controller manager is continued first

}
