package printers

import (
	"fmt"
	"strings"
	"time"
)

// The webhook's lines, each printed on a line of its own. They begin with
// "webhook: " so that, beside the loop's, they are told apart.

// WebhookServing says where the webhook serves: addr and the paths of its
// Service and EndpointSlice reviews.
func WebhookServing(addr, servicesPath, slicesPath string) string {
	return fmt.Sprintf("webhook: serving https://%s%s and %s", addr, servicesPath, slicesPath)
}

// WebhookCertLoaded says the serving certificate was (re)loaded from file.
func WebhookCertLoaded(file string) string {
	return "webhook: serving certificate loaded from " + file
}

// WebhookCertKept says a changed serving certificate could not be loaded.
func WebhookCertKept(err error) string {
	return fmt.Sprintf("webhook: cannot reload the serving certificate, keeping the previous one: %v", err)
}

// WebhookNoClientCA says what serving without --client-ca-file means.
func WebhookNoClientCA() string {
	return "webhook: no --client-ca-file: callers are not authenticated, so Service warnings name no Pods and no access is reviewed"
}

// WebhookClientCA says what --client-ca-file file means.
func WebhookClientCA(file string) string {
	return "webhook: callers must present a client certificate signed by a CA of " + file
}

// WebhookClientCAReloaded says the client CA file was reloaded.
func WebhookClientCAReloaded(file string) string {
	return "webhook: client CA file reloaded from " + file
}

// WebhookClientCAKept says a changed client CA file could not be loaded.
func WebhookClientCAKept(err error) string {
	return fmt.Sprintf("webhook: cannot reload the client CA file, keeping the previous one: %v", err)
}

// WebhookSelfUnknown says the process's own user could not be learnt
// (err, which may be nil when the answer named no user).
func WebhookSelfUnknown(err error) string {
	return fmt.Sprintf("webhook: cannot learn this process's own user (%v): the loop's writes pass the guard only if --allow-user or --allow-group names it", err)
}

// WebhookSelfAllowed names the users and groups that may write our
// slices; the last of users is this process's own.
func WebhookSelfAllowed(users, groups []string) string {
	line := "webhook: our slices may be written by " + users[len(users)-1] + " (this process)"
	if len(users) > 1 {
		line += ", users " + strings.Join(users[:len(users)-1], ", ")
	}
	if len(groups) > 0 {
		line += ", groups " + strings.Join(groups, ", ")
	}
	return line
}

// WebhookCachesFilled says the Service reviews are judged from now on.
func WebhookCachesFilled() string {
	return "webhook: caches filled; Service admissions are judged from now on"
}

// WebhookStats is what the webhook did until it stopped.
type WebhookStats struct {
	Services, EndpointSlices int // admissions reviewed
	P50, P99                 time.Duration
	Handshakes               int64
	// Requests counts the API requests since the caches filled; -1 when
	// they were not counted (or never filled).
	Requests int
	// Reviews counts the access reviews among them, Limited the reviews
	// skipped by the rate limit; -1 when the webhook reviews no access.
	Reviews, Limited int64
}

// WebhookStopped is the webhook's last line: what it did.
func WebhookStopped(s WebhookStats) string {
	line := fmt.Sprintf("webhook: stopped; %d Service and %d EndpointSlice admissions, handling time p50 %v p99 %v, %d TLS handshakes",
		s.Services, s.EndpointSlices, s.P50.Round(time.Microsecond), s.P99.Round(time.Microsecond), s.Handshakes)
	if s.Requests < 0 {
		return line
	}
	line += fmt.Sprintf("; API requests since the caches filled: %d", s.Requests)
	if s.Reviews >= 0 {
		line += fmt.Sprintf(" (%d of them access reviews)", s.Reviews)
	}
	if s.Reviews >= 0 && s.Limited > 0 {
		line += fmt.Sprintf("; %d access reviews skipped by the rate limit", s.Limited)
	}
	return line
}
