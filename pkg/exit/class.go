package exit

// Class is the kind of failure an error carries, said by the package that
// made the error. exit maps a class to its code and its words; it never
// names the error types of the packages that fail, so that they (the
// writers, the long-running process) import exit and not the other way
// round.
type Class int

const (
	// ClassConflict: the objects kept changing under a write and the
	// retries ran out (Conflicts).
	ClassConflict Class = iota + 1
	// ClassNamespaceTerminating: nothing can be created in a namespace that
	// is being deleted (API, worded as such).
	ClassNamespaceTerminating
	// ClassConfig: a mistake in the configuration of the long-running
	// process, found before anything ran (Usage, through Process).
	ClassConfig
	// ClassAPI: a failure of the API server or of the rights it grants,
	// already worded for the user (API, through Process, as it is).
	ClassAPI
)

// Classed is an error that says its class. The class is found anywhere in
// an error's tree, as errors.As would find the error.
type Classed interface {
	error
	ExitClass() Class
}

// WithClass is err carrying class c, for a sentinel error: errors.Is still
// finds the value WithClass returns, and its message is err's.
func WithClass(c Class, err error) error { return &classed{class: c, err: err} }

type classed struct {
	class Class
	err   error
}

func (e *classed) Error() string    { return e.err.Error() }
func (e *classed) Unwrap() error    { return e.err }
func (e *classed) ExitClass() Class { return e.class }

// find is the first error in err's tree (depth first, as errors.As walks
// it) that carries class c; nil when there is none. Each class is looked for
// on its own, so a class found deeper in the tree still counts.
func find(err error, c Class) error {
	if err == nil {
		return nil
	}
	if k, ok := err.(Classed); ok && k.ExitClass() == c {
		return err
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return find(u.Unwrap(), c)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if f := find(e, c); f != nil {
				return f
			}
		}
	}
	return nil
}
