package cluster

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
)

// requestCountEnv, when set, makes the plugin count its API requests and
// print the count on stderr when a command ends: benchmarks and users who
// want to know what a run costs the API server read it there.
const requestCountEnv = "KUBECTL_SLICES_COUNT_REQUESTS"

var requests = struct {
	sync.Mutex
	byVerb map[string]int
}{byVerb: map[string]int{}}

type countingTransport struct{ next http.RoundTripper }

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	verb := r.Method
	if r.URL.Query().Get("watch") == "true" {
		verb = "WATCH"
	}
	requests.Lock()
	requests.byVerb[verb]++
	requests.Unlock()
	return c.next.RoundTrip(r)
}

// CountRequests wraps the client's transport when counting is asked for.
func CountRequests(rt http.RoundTripper) http.RoundTripper {
	if os.Getenv(requestCountEnv) == "" {
		return rt
	}
	return countingTransport{next: rt}
}

// ReportRequests prints "api requests: N (GET a, POST b, ...)" if counting.
func ReportRequests(w io.Writer) {
	if os.Getenv(requestCountEnv) == "" {
		return
	}
	requests.Lock()
	defer requests.Unlock()
	total := 0
	var parts []string
	for verb, n := range requests.byVerb {
		total += n
		parts = append(parts, fmt.Sprintf("%s %d", verb, n))
	}
	sort.Strings(parts)
	fmt.Fprintf(w, "api requests: %d (%s)\n", total, strings.Join(parts, ", "))
}

// RequestsMade is the number of API requests counted so far, or -1 when
// counting is off.
func RequestsMade() int {
	if os.Getenv(requestCountEnv) == "" {
		return -1
	}
	requests.Lock()
	defer requests.Unlock()
	total := 0
	for _, n := range requests.byVerb {
		total += n
	}
	return total
}
