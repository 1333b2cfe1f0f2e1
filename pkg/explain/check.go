package explain

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/mirror"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// CheckSchema is the schema of `kubectl slices check -o json`.
const CheckSchema = "kubectl-slices.check/v1"

// FindingKind names a kind of finding; the values are an output contract
// (check -o json, the summary's KIND column) and stay as they are. Each
// constant is its value behind a Finding prefix, since the drift kinds
// (DriftKind) have a Stale of their own.
type FindingKind string

const (
	// FindingNoSlices: a Service with a selector has no slices of any manager;
	// kube-controller-manager writes at least a placeholder, so it is
	// likely down.
	FindingNoSlices FindingKind = "NoSlices"
	// FindingStale: what the slices publish drifts from the Pods.
	FindingStale FindingKind = "Stale"
	// FindingHandBack: ours and the controller's slices both publish the Service.
	FindingHandBack FindingKind = "HandBack"
	// FindingOrphaned: a slice of ours whose Service is gone or no longer has
	// endpoints (see OrphanReason).
	FindingOrphaned FindingKind = "Orphaned"
	// FindingOverLimit: a slice holds more endpoints than the maximum per slice.
	FindingOverLimit FindingKind = "OverLimit"
)

// Finding is one problem and the command that repairs it.
type Finding struct {
	Namespace string      `json:"namespace"`
	Service   string      `json:"service"`
	Kind      FindingKind `json:"kind"`
	// ManagedBy are the managers whose slices the finding is about.
	ManagedBy []string `json:"managedBy"`
	// Slices names the slices concerned, when the finding is about some.
	Slices  []string `json:"slices"`
	Message string   `json:"message"`
	Command string   `json:"command"`
}

// CheckReport is the result of auditing many Services.
type CheckReport struct {
	Schema   string `json:"schema"`
	Services int    `json:"services"`
	Slices   int    `json:"slices"`
	// Endpoints counts the v1 Endpoints objects of ours (sync
	// --with-endpoints) that were checked.
	Endpoints int       `json:"endpoints"`
	Findings  []Finding `json:"findings"`
	// Skipped says what was not checked for lack of optional rights (to
	// read Endpoints), one line each; absent when everything was.
	Skipped []string `json:"skipped,omitempty"`
	// Healthy: no findings.
	Healthy bool `json:"healthy"`
}

// CheckService audits one Service from its plan and the live slices it was
// made from, as explain judges them. Orphans are found separately
// (Orphans), since their Service may not exist. A Service without selector
// planned by pkg/mirror (judge.PlanService) is judged against its
// Endpoints object (checkMirrored); o.ManagedBy is the value its kind of
// slice carries.
func CheckService(in reconcile.Input, plan *reconcile.Plan, o Options) []Finding {
	if mirror.Applies(in.Service) {
		return checkMirrored(checkInput{in: in, plan: plan}, o)
	}
	// Judged apart, and left out of the rest: the slices a selector made
	// obsolete are not the Pods' drift.
	in, leftover := checkLeftovers(in, o)
	if !plan.Service.Planned() {
		return leftover
	}
	out := leftover
	svc := in.Service
	base := Finding{Namespace: svc.Namespace, Service: svc.Name, ManagedBy: []string{}, Slices: []string{}}
	at := fmt.Sprintf("svc/%s -n %s", svc.Name, svc.Namespace)
	live := judge.Live(in.Slices)
	if len(live) == 0 {
		f := base
		ready, _ := countReady(plan)
		f.Kind, f.Command = FindingNoSlices, "kubectl slices sync "+at
		f.Message = fmt.Sprintf("no EndpointSlices at all although the selector matches %s (%d ready): kube-controller-manager's EndpointSlice controller is likely down",
			english.Plural(len(plan.Pods), "Pod", "Pods"), ready)
		return append(out, f)
	}
	r := Build(in, plan, o)
	hb := judge.JudgeHandback(live, o.ManagedBy, plan.Final())
	switch {
	case len(hb.Ours) > 0 && hb.Current && !hb.Same:
		f := base
		f.Kind, f.ManagedBy, f.Slices = FindingHandBack, []string{o.ManagedBy, reconcile.ControllerManagedBy}, names(hb.Ours)
		f.Message = fmt.Sprintf("kube-controller-manager's slices are current and ours are stale (%s): hand ours back", english.Plural(len(hb.Differences), "difference", "differences"))
		f.Command = "kubectl slices release --force " + at
		return append(out, f)
	case len(hb.Ours) > 0 && len(hb.Controller) > 0:
		f := base
		f.Kind, f.ManagedBy, f.Slices = FindingHandBack, []string{o.ManagedBy, reconcile.ControllerManagedBy}, names(hb.Ours)
		if hb.Same {
			f.Message = "kube-controller-manager is back and publishes the same endpoints as our slices: hand ours back"
			f.Command = "kubectl slices release " + at
		} else {
			f.Message = fmt.Sprintf("kube-controller-manager is back, but its slices differ from ours in %s: hand ours back once it catches up",
				english.Plural(len(hb.Differences), "endpoint", "endpoints"))
			f.Command = "kubectl slices release --wait " + at
		}
		out = append(out, f)
	}
	if !r.InSync {
		f := base
		f.Kind = FindingStale
		for _, d := range r.Drift {
			f.ManagedBy = append(f.ManagedBy, d.ManagedBy...)
		}
		f.ManagedBy = uniq(f.ManagedBy)
		f.Message = "the slices are stale against the Pods (" + countDrift(r.Drift) + "): " + r.Diagnosis.Summary
		f.Command = r.Diagnosis.Command
		if f.Command == "" {
			f.Command = "kubectl slices explain " + at
		}
		out = append(out, f)
	}
	for _, m := range r.Managers {
		if len(m.OverLimit) == 0 {
			continue
		}
		f := base
		f.Kind, f.ManagedBy, f.Slices = FindingOverLimit, []string{m.ManagedBy}, m.OverLimit
		// Neither upstream's reconciler nor ours splits a live slice that
		// is too full (it only stops adding to it), so no sync repairs
		// this: the writer's --max-endpoints-per-slice differs from the
		// one checked against.
		f.Message = fmt.Sprintf("%s holds more than %d endpoints in a slice (%s): its writer ran with a larger --max-endpoints-per-slice, and no sync splits a live slice",
			m.ManagedBy, o.MaxEndpointsPerSlice, strings.Join(m.OverLimit, ", "))
		f.Command = "kubectl slices explain " + at
		out = append(out, f)
	}
	return out
}

// OrphanFindings turns orphans into findings, one per Service.
func OrphanFindings(orphans []Orphan, managedBy string) []Finding {
	byService := map[string]*Finding{}
	var keys []string
	for _, o := range orphans {
		key := o.Slice.Namespace + "/" + o.Service
		f := byService[key]
		if f == nil {
			f = &Finding{Namespace: o.Slice.Namespace, Service: o.Service, Kind: FindingOrphaned, ManagedBy: []string{managedBy},
				Message: "our slices outlive their Service: " + o.Message, Command: "kubectl slices prune -n " + o.Slice.Namespace}
			byService[key] = f
			keys = append(keys, key)
		}
		f.Slices = append(f.Slices, o.Slice.Name)
	}
	sort.Strings(keys)
	out := make([]Finding, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byService[k])
	}
	return out
}

// SortFindings orders findings by namespace, Service and kind.
func SortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Service != b.Service {
			return a.Service < b.Service
		}
		return a.Kind < b.Kind
	})
}

func countReady(plan *reconcile.Plan) (ready, notReady int) {
	for _, s := range plan.Final() {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				ready++
			} else {
				notReady++
			}
		}
	}
	return ready, notReady
}

func names[T interface{ GetName() string }](objs []T) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	sort.Strings(out)
	return out
}
