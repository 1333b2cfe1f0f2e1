package daemon

import (
	"github.com/go-logr/logr"

	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
)

// electionErrors is the logger client-go's elector finds in its context.
// The elector says only in its logs that a lease could not be read,
// renewed or released; klog is silenced unless -v is given, so without
// this a release that failed on SIGTERM (the standbys then wait out the
// lease) would leave no trace. Errors become one notice line each; its
// info lines repeat what the election's own lines say, and are dropped.
func electionErrors(notice func(string)) logr.Logger {
	return logr.New(errorSink{notice: notice})
}

type errorSink struct {
	notice func(string)
	values []any
}

func (errorSink) Init(logr.RuntimeInfo)    {}
func (errorSink) Enabled(int) bool         { return false }
func (errorSink) Info(int, string, ...any) {}

// Error prints the error with the values given to WithValues first, as
// printers.ElectionError formats it.
func (s errorSink) Error(err error, msg string, kv ...any) {
	s.notice(printers.ElectionError(msg, append(append([]any{}, s.values...), kv...), err))
}

func (s errorSink) WithValues(kv ...any) logr.LogSink {
	s.values = append(append([]any{}, s.values...), kv...)
	return s
}

func (s errorSink) WithName(string) logr.LogSink { return s }
