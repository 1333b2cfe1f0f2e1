package standby

import (
	"fmt"
	"time"

	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
)

// State is where a Service stands.
type State string

const (
	// Standby: the controller publishes the Service; nothing is written.
	Standby State = "standby"
	// Serving: the controller failed the Service; ours are kept current.
	Serving State = "serving"
	// HandingBack: the controller is current again; ours wait out the hold.
	HandingBack State = "handing-back"
)

// States lists every state, in the order metrics and summaries show them.
var States = []State{Standby, Serving, HandingBack}

// Config is the loop's standby configuration.
type Config struct {
	// TakeoverAfter is how long the controller's slices may differ from the
	// desired ones, counted from when the loop observed the change that
	// caused the difference (and again from any progress the controller
	// shows, clock.go), before ours are written.
	TakeoverAfter time.Duration
	// HandbackHold is how long the controller's slices must stay current
	// before ours are deleted, so that a recovering controller that fails
	// again does not make the Service flap. A difference younger than
	// TakeoverAfter (one the controller has not had the time to reflect)
	// does not interrupt it.
	HandbackHold time.Duration
	// ManagedBy is our managed-by value.
	ManagedBy string
}

// Memory is what the loop keeps of a Service from one sync to the next.
type Memory struct {
	State State
	// Behind is when the loop observed the change the controller has not
	// reflected yet (the difference opened); zero while its slices are
	// current.
	Behind time.Time
	// Since is when the takeover clock of the open difference last
	// started: Behind, or later when the controller showed it was at work
	// (see Decide).
	Since time.Time
	// Theirs fingerprints the controller's slices as last seen while
	// behind: a change is the controller writing this Service.
	Theirs string
	// Wrote: the controller wrote this Service's slices since the open
	// difference opened.
	Wrote bool
	// CurrentSince is, while HandingBack, since when the controller's
	// slices have been current, or behind by less than TakeoverAfter.
	CurrentSince time.Time
	// Fresh: the loop has not looked at the Service yet (Initial).
	Fresh bool
}

// Input is one sync's view of a Service.
type Input struct {
	// Controller is the managed-by value of the controller that should
	// publish the Service (the EndpointSlice or the mirroring controller).
	Controller string
	// Desired are the slices the planner wants (the plan's final slices).
	Desired []*discovery.EndpointSlice
	// Live are the Service's slices as the cache holds them.
	Live []*discovery.EndpointSlice
	// ServiceUID is the Service's; the controller's slices owned by
	// another Service of the same name (deleted, about to be collected)
	// do not publish this one.
	ServiceUID types.UID
	// Observed is when the loop's informers delivered the earliest change
	// this sync reflects (the loop's clock, never an object's timestamp,
	// which a relabel or a selector switch leaves old); zero when none (a
	// slice event), and then a difference is dated now.
	Observed time.Time
	// Created is the Service's creation (set by the API server): on the
	// loop's first look at a Service the controller has published no
	// slice for, the difference is dated from it.
	Created time.Time
	// Progress is the latest time the controller closed a difference
	// (of any Service) that the loop had observed no later than this
	// Service's open one (Closures.Latest of Memory.Behind).
	Progress time.Time
	Now      time.Time
}

// Action is what the loop does with the plan.
type Action int

const (
	// Hold writes nothing.
	Hold Action = iota
	// Write writes the plan, as the loop does outside standby mode.
	Write
	// HandBack deletes our slices (Decision.Judgement.Ours) and writes
	// nothing else.
	HandBack
)

// Event is a transition worth telling.
type Event string

const (
	NoEvent Event = ""
	// TakenOver: Standby to Serving.
	TakenOver Event = "TakenOver"
	// HandedBack: our slices are deleted, the Service is back in Standby.
	HandedBack Event = "HandedBack"
)

// Decision is what to do for one sync, and what to remember.
type Decision struct {
	Memory Memory
	Action Action
	// RequeueAfter, when positive, is when the Service must be looked at
	// again though nothing changes: when the threshold or the hold period
	// will have passed.
	RequeueAfter time.Duration
	Event        Event
	// Closed: the controller's own write made its slices current again
	// after they differed for Lag (from the change that caused the
	// difference to now).
	Closed bool
	Lag    time.Duration
	// Opened is, when Closed, when the closed difference opened.
	Opened time.Time
	// Reason says why, in one line, for holds and events.
	Reason string
	// Judgement compares the live slices of each manager.
	Judgement judge.Handback
}

// Initial is what a loop that has not seen the Service assumes: serving if
// slices of ours exist (a previous run or replica wrote them), else
// standby.
func Initial(cfg Config, live []*discovery.EndpointSlice) Memory {
	for _, s := range live {
		if s.DeletionTimestamp == nil && s.Labels[discovery.LabelManagedBy] == cfg.ManagedBy {
			return Memory{State: Serving, Fresh: true}
		}
	}
	return Memory{State: Standby, Fresh: true}
}

// Decide moves a Service's state on one sync.
func Decide(cfg Config, prev Memory, in Input) Decision {
	hb := judge.JudgeHandbackTo(owned(in.Live, in.ServiceUID, cfg.ManagedBy), cfg.ManagedBy, in.Controller, in.Desired)
	current := len(hb.Controller) > 0 && hb.Current
	m := prev
	m.Fresh = false
	d := Decision{Judgement: hb}
	theirs := fingerprint(hb.Controller)
	switch {
	case current && !m.Behind.IsZero():
		// Only the controller's writing closes a difference: one the
		// desired state walked back to (a Pod flipped back before the
		// controller reflected the flip) is no sign of life, and counting
		// it as a closure would restart the clocks of a dead controller's
		// other differences (Closures.Latest) for ever under churn.
		if m.Wrote || theirs != m.Theirs {
			d.Closed, d.Lag, d.Opened = true, nonNegative(in.Now.Sub(m.Behind)), m.Behind
		}
		m.Behind, m.Since, m.Theirs, m.Wrote = time.Time{}, time.Time{}, "", false
	case current:
	case m.Behind.IsZero():
		m.Behind = opened(prev.Fresh, len(hb.Controller) > 0, in)
		m.Since, m.Theirs = m.Behind, theirs
	default:
		m.Since = restarted(m, theirs, in)
		m.Wrote = m.Wrote || theirs != m.Theirs
		m.Theirs = theirs
	}
	behind := nonNegative(in.Now.Sub(m.Since))
	if m.State == Standby && len(hb.Ours) > 0 {
		// Slices of ours in standby (a hand-back whose delete failed, a
		// one-shot sync): they are handed back the same careful way.
		m.State = Serving
	}
	switch m.State {
	case Serving:
		d.Action = Write
		if current {
			m.State, m.CurrentSince = HandingBack, in.Now
			d.RequeueAfter = cfg.HandbackHold
			d.Reason = "kube-controller-manager's slices are current again: handing back after " + cfg.HandbackHold.String()
		}
	case HandingBack:
		d.Action = Write
		held := in.Now.Sub(m.CurrentSince)
		switch {
		case !current && behind < cfg.TakeoverAfter:
			// A new change the controller has not reflected yet, as
			// under churn it always has one: it is given the time a
			// Service in standby would be, and the hold runs on. Were
			// the hold restarted, churn would keep ours for ever.
			d.RequeueAfter = cfg.TakeoverAfter - behind
		case !current:
			m.State, m.CurrentSince = Serving, time.Time{}
			d.Reason = "kube-controller-manager's slices differ again: still serving"
		case held < cfg.HandbackHold:
			d.RequeueAfter = cfg.HandbackHold - held
		case len(hb.Ours) == 0:
			m = Memory{State: Standby}
			d.Action, d.Event = Hold, HandedBack
			d.Reason = "no slices of ours left; kube-controller-manager's are current"
		case hb.Same:
			m = Memory{State: Standby}
			d.Action, d.Event = HandBack, HandedBack
			d.Reason = fmt.Sprintf("kube-controller-manager's slices have been current for %s and publish every endpoint ours do", round(held))
		default:
			// Ours are not current (a write failed or is pending): write
			// them, and look again once that write is seen.
			d.RequeueAfter = time.Second
		}
	default:
		m.State = Standby
		switch {
		case current:
			d.Action = Hold
			d.Reason = "kube-controller-manager's slices are current"
		case behind >= cfg.TakeoverAfter:
			m.State = Serving
			d.Action, d.Event = Write, TakenOver
			d.Reason = takeoverReason(hb, in.Controller, nonNegative(in.Now.Sub(m.Behind)), behind)
		default:
			d.Action = Hold
			d.RequeueAfter = cfg.TakeoverAfter - behind
			d.Reason = fmt.Sprintf("kube-controller-manager's slices differ, with no progress for %s; taking over at %s", round(behind), cfg.TakeoverAfter)
		}
	}
	d.Memory = m
	return d
}

// owned drops the slices, other than ours, that a Service other than uid
// owns: a Service deleted and re-created under the same name keeps the old
// one's slices until the garbage collector deletes them.
func owned(live []*discovery.EndpointSlice, uid types.UID, ours string) []*discovery.EndpointSlice {
	if uid == "" {
		return live
	}
	out := make([]*discovery.EndpointSlice, 0, len(live))
	for _, s := range live {
		if s.Labels[discovery.LabelManagedBy] != ours && ownedByOther(s, uid) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// ownedByOther: s has a Service owner reference and none carries uid (as
// explain's ownerMismatch). One reference to the Service makes the slice
// its, whatever others it has, as upstream's ownedBy
// (pkg/controller/endpointslice reconciler) and pkg/reconcile read it.
func ownedByOther(s *discovery.EndpointSlice, uid types.UID) bool {
	other := false
	for _, o := range s.OwnerReferences {
		if o.Kind != "Service" {
			continue
		}
		if o.UID == uid {
			return false
		}
		other = true
	}
	return other
}

func takeoverReason(hb judge.Handback, controller string, behind, idle time.Duration) string {
	who := "kube-controller-manager"
	if len(hb.Controller) == 0 {
		return fmt.Sprintf("%s has published no slices (%s) for %s", who, controller, round(behind))
	}
	return fmt.Sprintf("%s's slices have not published the desired endpoints for %s, with no progress for %s", who, round(behind), round(idle))
}

func nonNegative(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	return d
}

// round keeps durations readable in lines and events.
func round(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
