package reconcile

// ManagedByFor is the managed-by value the slices of one kind carry when
// kubectl-slices runs under value: mirrored slices (a Service without
// selector) or planned ones. A controller's own value means "the controllers
// are off for good, write as they would", so each kind then carries its own
// controller's value, and a mirroring or EndpointSlice controller that comes
// back recognises its slices instead of writing its own beside them. Any
// other value (ours, or a custom one) is carried by both kinds.
func ManagedByFor(value string, mirrored bool) string {
	if value != ControllerManagedBy && value != MirroringManagedBy {
		return value
	}
	if mirrored {
		return MirroringManagedBy
	}
	return ControllerManagedBy
}

// OurValues lists every managed-by value a run under value writes, in a
// fixed order: both controllers' values for one of them, else value alone.
func OurValues(value string) []string {
	if value != ControllerManagedBy && value != MirroringManagedBy {
		return []string{value}
	}
	return []string{ControllerManagedBy, MirroringManagedBy}
}

// IsOurs reports whether a slice labelled got was written under value.
func IsOurs(got, value string) bool {
	for _, v := range OurValues(value) {
		if got == v {
			return true
		}
	}
	return false
}
