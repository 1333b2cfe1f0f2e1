package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// binWidth is the width of activity.csv's rows and of the plot's bars.
const binWidth = 10 * time.Second

// bin is one binWidth of activity.
type bin struct {
	At                                 time.Time
	Churn, Ours, Controller, Takeovers int
	Services, Served, Behind, ReadyEps int // the last sample's
	Drops                              int
}

// bins aggregates activity from start to stop.
func (r results) bins() []bin {
	in := r.in
	n := int(in.Stop.Sub(in.Start)/binWidth) + 1
	if n < 1 {
		return nil
	}
	out := make([]bin, n)
	for i := range out {
		out[i].At = in.Start.Add(time.Duration(i) * binWidth)
	}
	idx := func(t time.Time) int {
		if t.Before(in.Start) {
			return -1
		}
		i := int(t.Sub(in.Start) / binWidth)
		if i >= n {
			return -1
		}
		return i
	}
	for _, c := range in.Churn {
		if i := idx(c.Sent); i >= 0 && c.Err == "" {
			out[i].Churn++
		}
	}
	for _, w := range r.OurWrites {
		if i := idx(w.Received); i >= 0 {
			out[i].Ours++
		}
	}
	for _, w := range r.ControllerWrites {
		if i := idx(w.Received); i >= 0 {
			out[i].Controller++
		}
	}
	for _, t := range r.Takeovers {
		if i := idx(t.FirstWrite); i >= 0 {
			out[i].Takeovers++
		}
	}
	for _, d := range r.Drops {
		if i := idx(d.Missed); i >= 0 {
			out[i].Drops++
		}
	}
	if in.Tracker != nil {
		for _, c := range in.Tracker.Counts {
			if i := idx(c.At); i >= 0 {
				out[i].Services, out[i].Served, out[i].Behind, out[i].ReadyEps = c.Services, c.Served, c.Behind, c.Ready
			}
		}
	}
	return out
}

// writeCSVs writes the time series and the events behind the summary.
func (r results) writeCSVs(dir string) error {
	in := r.in
	secs := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return strconv.FormatFloat(t.Sub(in.Start).Seconds(), 'f', 3, 64)
	}
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	files := map[string][][]string{}
	rows := [][]string{{"time", "elapsed_s", "replica", "pid", "rss_bytes", "rss_anon_bytes", "rss_file_bytes", "goroutines", "fds", "leader", "heap_live_bytes"}}
	for _, s := range r.withLeaders(in.Resources) {
		rows = append(rows, []string{stamp(s.At), secs(s.At), s.Replica, strconv.Itoa(s.PID), strconv.FormatInt(s.RSS, 10),
			strconv.FormatInt(s.RSSAnon, 10), strconv.FormatInt(s.RSSFile, 10),
			strconv.Itoa(s.Goroutines), strconv.Itoa(s.FDs), strconv.FormatBool(s.Leader), strconv.FormatInt(s.HeapLive, 10)})
	}
	files["resources.csv"] = rows
	rows = [][]string{{"time", "elapsed_s", "churn_events", "our_writes", "controller_writes", "takeovers", "services", "services_served_by_ours", "services_controller_behind", "ready_endpoints", "drops"}}
	for _, b := range r.bins() {
		rows = append(rows, []string{stamp(b.At), secs(b.At), strconv.Itoa(b.Churn), strconv.Itoa(b.Ours), strconv.Itoa(b.Controller),
			strconv.Itoa(b.Takeovers), strconv.Itoa(b.Services), strconv.Itoa(b.Served), strconv.Itoa(b.Behind), strconv.Itoa(b.ReadyEps), strconv.Itoa(b.Drops)})
	}
	files["activity.csv"] = rows
	rows = [][]string{{"kind", "target", "start", "start_s", "recovered", "recovered_s", "detail", "error"}}
	for _, f := range in.Faults {
		rows = append(rows, []string{string(f.Kind), f.Target, stamp(f.Start), secs(f.Start), stamp(f.Recovered), secs(f.Recovered), f.Detail, f.Err})
	}
	files["faults.csv"] = rows
	rows = [][]string{{"service", "fault", "missed_at", "missed_s", "first_write", "first_write_s", "delay_s", "due", "late"}}
	bound := in.Opts.TakeoverAfter + in.Opts.Margin
	for _, t := range r.Takeovers {
		delay := ""
		if !t.FirstWrite.IsZero() {
			delay = strconv.FormatFloat(t.Delay().Seconds(), 'f', 3, 64)
		}
		rows = append(rows, []string{t.Service, t.Fault, stamp(t.MissedAt), secs(t.MissedAt), stamp(t.FirstWrite), secs(t.FirstWrite), delay,
			strconv.FormatBool(t.Required), strconv.FormatBool(t.Late(bound))})
	}
	files["takeovers.csv"] = rows
	rows = [][]string{{"received", "received_s", "user", "verb", "namespace", "name", "code", "judged_healthy"}}
	healthy := map[auditEvent]bool{}
	for _, w := range r.HealthyWrites {
		healthy[w] = true
	}
	for _, w := range r.OurWrites {
		rows = append(rows, []string{stamp(w.Received), secs(w.Received), w.User, w.Verb, w.Namespace, w.Name, strconv.Itoa(w.Code), strconv.FormatBool(healthy[w])})
	}
	files["our-writes.csv"] = rows
	rows = [][]string{{"service", "address", "pod", "had", "had_s", "missed", "missed_s"}}
	for _, d := range r.Drops {
		rows = append(rows, []string{d.Service, d.Addr, d.Pod, stamp(d.Had), secs(d.Had), stamp(d.Missed), secs(d.Missed)})
	}
	files["drops.csv"] = rows
	rows = [][]string{{"user", "start", "start_s", "end_s", "renewals"}}
	for _, t := range r.Terms {
		rows = append(rows, []string{t.User, stamp(t.Start), secs(t.Start), secs(t.End), strconv.Itoa(t.Renewals)})
	}
	files["lease-terms.csv"] = rows
	for name, rows := range files {
		if err := writeCSV(filepath.Join(dir, name), rows); err != nil {
			return err
		}
	}
	return nil
}

func (r results) userOf(replica string) string {
	for _, u := range r.in.IDs.Ours {
		if short(u) == "soak-"+replica {
			return u
		}
	}
	return ""
}

func writeCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
