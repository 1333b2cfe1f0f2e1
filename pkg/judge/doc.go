// Package judge holds the judgements more than one command makes about a
// Service and its slices, in one place, as pure functions of their inputs:
//
//   - ControllerOf: which controller publishes a Service (the mirroring
//     controller for one without selector, else the EndpointSlice
//     controller); ManagedByOf: the managed-by value each kind of slice
//     carries in a run; PlanService: the one planner choice (mirrored from
//     Endpoints, or planned from Pods) every command makes.
//   - JudgeHandback: do the controller's slices exist and publish what
//     ours publish and what the planner wants (sync's hold, release, the
//     standby's hand-back).
//   - ControllerBehind: how long the controller has not published what the
//     planner wants, and why (explain's diagnosis).
//   - HoldWhereCurrent: the one-shot sync's hold policy.
//
// It imports no client and reads no clock (hack/purity holds it to that):
// callers pass in what was read and the time of judgement. explain, the
// webhook, printers, standby, controller, lifecycle and syncer import it;
// it imports none of them.
package judge
