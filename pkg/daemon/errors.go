package daemon

import "github.com/kubectl-slices/kubectl-slices/pkg/exit"

// ConfigError is a mistake in the configuration found before anything ran
// (an address taken, a certificate that cannot be read): the command layer
// reports it as a usage error.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// ExitClass makes it a usage error (exit.Process) without pkg/exit
// importing the process it describes.
func (e *ConfigError) ExitClass() exit.Class { return exit.ClassConfig }

// APIError is a failure of the API server or of the rights it grants,
// already worded for the user (a Lease that may not be taken, a lease lost):
// the command layer reports it as it is, as an API error.
type APIError struct{ Err error }

func (e *APIError) Error() string { return e.Err.Error() }
func (e *APIError) Unwrap() error { return e.Err }

// ExitClass makes it an API error reported as it is (exit.Process).
func (e *APIError) ExitClass() exit.Class { return exit.ClassAPI }
