// Package printers renders plans, sync results, diffs and explanations.
// It never decides anything and never writes to the cluster; colour is
// decided by the caller per stream (see Style) so that output redirected to
// a file or pipe stays plain.
package printers
