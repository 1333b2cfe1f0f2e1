// Package standby decides, per Service, whether the watch loop stands by
// beside kube-controller-manager or serves in its place. It is a pure
// function of what the loop remembers of the Service, the desired slices,
// the live slices, when the loop observed the change behind this sync, the
// controller's progress elsewhere and the time now:
// no client, no clock, no goroutine; the controller package calls it from
// its sync and acts on the Decision.
//
// States: Standby (the controller's slices are current, or have differed
// for less than the takeover threshold, dated from the loop's observation
// of the change and restarted while the controller shows progress, as
// clock.go explains: nothing is written), Serving (they
// have differed for longer: ours are written and kept current) and
// HandingBack (the controller's slices are current again: ours are kept
// until the controller's have stayed current for the hold period and
// publish every endpoint ours do, then deleted).
package standby
