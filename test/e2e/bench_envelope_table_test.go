package e2e

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// envelopeRow is one step of the ladder: its size and every measure, in
// the units the CSV's header names (s, ms, MiB). The CSV is what
// test/cmd/envelopeplot draws; its header is the contract between them.
type envelopeRow struct {
	Pods, Services, Namespaces, Nodes int
	Seed                              time.Duration

	ColdSync, Resync, Check            time.Duration
	ColdSyncRequests, ResyncRequests   int
	ColdSyncMaxRSS                     int // KiB, the process's peak
	ExplainPod, ExplainIP, ExplainNoIP time.Duration
	PodList                            time.Duration // one list of every Pod alone: a floor

	KCMCold    time.Duration
	KCMColdRSS int // KiB, when its slices first publish every ready Pod

	WatchFilled, WatchWritten time.Duration
	WatchSettled              time.Duration // its CPU quiet after the first pass
	OursRSS                   int           // KiB, when every slice is written
	Flips                     int
	Floor, Ours, KCM          [2]time.Duration // p50, p99; Floor is the status write alone
	OursOver, KCMOver         time.Duration    // p99 of each flip's time past its own status write
	OursCPU, KCMCPU           time.Duration    // per flip
	OursRSSAfter, KCMRSSAfter int              // KiB, after the flips
	WebhookP50, WebhookP99    time.Duration
	APIServerPeak, EtcdPeak   int // KiB, VmHWM over the step
	MemAvailable              int // KiB, at the step's end
}

// envelopeColumns are the CSV's columns with each row's value.
var envelopeColumns = []struct {
	name  string
	value func(r envelopeRow) float64
}{
	{"pods", func(r envelopeRow) float64 { return float64(r.Pods) }},
	{"services", func(r envelopeRow) float64 { return float64(r.Services) }},
	{"namespaces", func(r envelopeRow) float64 { return float64(r.Namespaces) }},
	{"nodes", func(r envelopeRow) float64 { return float64(r.Nodes) }},
	{"seed_s", func(r envelopeRow) float64 { return r.Seed.Seconds() }},
	{"cold_sync_s", func(r envelopeRow) float64 { return r.ColdSync.Seconds() }},
	{"cold_sync_requests", func(r envelopeRow) float64 { return float64(r.ColdSyncRequests) }},
	{"cold_sync_max_rss_mib", func(r envelopeRow) float64 { return mib(r.ColdSyncMaxRSS) }},
	{"resync_s", func(r envelopeRow) float64 { return r.Resync.Seconds() }},
	{"resync_requests", func(r envelopeRow) float64 { return float64(r.ResyncRequests) }},
	{"check_s", func(r envelopeRow) float64 { return r.Check.Seconds() }},
	{"explain_pod_s", func(r envelopeRow) float64 { return r.ExplainPod.Seconds() }},
	{"explain_ip_held_s", func(r envelopeRow) float64 { return r.ExplainIP.Seconds() }},
	{"explain_ip_unheld_s", func(r envelopeRow) float64 { return r.ExplainNoIP.Seconds() }},
	{"pod_list_s", func(r envelopeRow) float64 { return r.PodList.Seconds() }},
	{"kcm_cold_s", func(r envelopeRow) float64 { return r.KCMCold.Seconds() }},
	{"kcm_cold_rss_mib", func(r envelopeRow) float64 { return mib(r.KCMColdRSS) }},
	{"watch_filled_s", func(r envelopeRow) float64 { return r.WatchFilled.Seconds() }},
	{"watch_written_s", func(r envelopeRow) float64 { return r.WatchWritten.Seconds() }},
	{"watch_settled_s", func(r envelopeRow) float64 { return r.WatchSettled.Seconds() }},
	{"ours_rss_mib", func(r envelopeRow) float64 { return mib(r.OursRSS) }},
	{"flips", func(r envelopeRow) float64 { return float64(r.Flips) }},
	{"floor_p50_ms", func(r envelopeRow) float64 { return ms(r.Floor[0]) }},
	{"floor_p99_ms", func(r envelopeRow) float64 { return ms(r.Floor[1]) }},
	{"ours_flip_p50_ms", func(r envelopeRow) float64 { return ms(r.Ours[0]) }},
	{"ours_flip_p99_ms", func(r envelopeRow) float64 { return ms(r.Ours[1]) }},
	{"kcm_flip_p50_ms", func(r envelopeRow) float64 { return ms(r.KCM[0]) }},
	{"kcm_flip_p99_ms", func(r envelopeRow) float64 { return ms(r.KCM[1]) }},
	{"ours_over_write_p99_ms", func(r envelopeRow) float64 { return ms(r.OursOver) }},
	{"kcm_over_write_p99_ms", func(r envelopeRow) float64 { return ms(r.KCMOver) }},
	{"ours_cpu_ms_per_flip", func(r envelopeRow) float64 { return ms(r.OursCPU) }},
	{"kcm_cpu_ms_per_flip", func(r envelopeRow) float64 { return ms(r.KCMCPU) }},
	{"ours_rss_after_mib", func(r envelopeRow) float64 { return mib(r.OursRSSAfter) }},
	{"kcm_rss_after_mib", func(r envelopeRow) float64 { return mib(r.KCMRSSAfter) }},
	{"webhook_p50_ms", func(r envelopeRow) float64 { return ms(r.WebhookP50) }},
	{"webhook_p99_ms", func(r envelopeRow) float64 { return ms(r.WebhookP99) }},
	{"apiserver_peak_mib", func(r envelopeRow) float64 { return mib(r.APIServerPeak) }},
	{"etcd_peak_mib", func(r envelopeRow) float64 { return mib(r.EtcdPeak) }},
	{"mem_available_mib", func(r envelopeRow) float64 { return mib(r.MemAvailable) }},
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mib(kib int) float64        { return float64(kib) / 1024 }

// writeEnvelopeCSV writes the rows, a header first.
func writeEnvelopeCSV(w io.Writer, rows []envelopeRow) error {
	c := csv.NewWriter(w)
	header := make([]string, len(envelopeColumns))
	for i, col := range envelopeColumns {
		header[i] = col.name
	}
	if err := c.Write(header); err != nil {
		return err
	}
	for _, r := range rows {
		rec := make([]string, len(envelopeColumns))
		for i, col := range envelopeColumns {
			rec[i] = strconv.FormatFloat(col.value(r), 'f', -1, 64)
		}
		if err := c.Write(rec); err != nil {
			return err
		}
	}
	c.Flush()
	return c.Error()
}

// saveEnvelopeCSV rewrites path with the rows so far: a ladder cut short
// keeps the steps it finished.
func saveEnvelopeCSV(path string, rows []envelopeRow) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeEnvelopeCSV(f, rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// envelopeTable is the ladder as a table a reader takes in at a glance:
// one line per measure, one column per size, ours beside the controller's
// where both have one.
func envelopeTable(rows []envelopeRow) string {
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 3, ' ', 0)
	line := func(name string, cell func(r envelopeRow) string) {
		fmt.Fprintf(tw, "%s\t", name)
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t", cell(r))
		}
		fmt.Fprintln(tw)
	}
	sec := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	msec := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", ms(d)) }
	mb := func(kib int) string { return fmt.Sprintf("%.0f MiB", mib(kib)) }
	ratio := func(a, b float64) string { return fmt.Sprintf("%.3f×", a/b) }
	line("Pods", func(r envelopeRow) string { return strconv.Itoa(r.Pods) })
	line("Services / namespaces / Nodes", func(r envelopeRow) string {
		return fmt.Sprintf("%d / %d / %d", r.Services, r.Namespaces, r.Nodes)
	})
	line("cold sync --all -A", func(r envelopeRow) string { return sec(r.ColdSync) })
	line("  its peak RSS", func(r envelopeRow) string { return mb(r.ColdSyncMaxRSS) })
	line("controller's cold convergence", func(r envelopeRow) string { return sec(r.KCMCold) })
	line("  ours / controller's", func(r envelopeRow) string { return ratio(r.ColdSync.Seconds(), r.KCMCold.Seconds()) })
	line("no-op resync", func(r envelopeRow) string { return sec(r.Resync) })
	line("check -A", func(r envelopeRow) string { return sec(r.Check) })
	line("explain pod/", func(r envelopeRow) string { return sec(r.ExplainPod) })
	line("explain --ip -A, held", func(r envelopeRow) string { return sec(r.ExplainIP) })
	line("explain --ip -A, unheld", func(r envelopeRow) string { return sec(r.ExplainNoIP) })
	line("every Pod listed alone (floor)", func(r envelopeRow) string { return sec(r.PodList) })
	line("--watch: caches filled", func(r envelopeRow) string { return sec(r.WatchFilled) })
	line("--watch: every slice written", func(r envelopeRow) string { return sec(r.WatchWritten) })
	line("--watch: CPU quiet after its first pass", func(r envelopeRow) string { return sec(r.WatchSettled) })
	line("RSS after flips, ours", func(r envelopeRow) string { return mb(r.OursRSSAfter) })
	line("RSS after flips, controller's", func(r envelopeRow) string { return mb(r.KCMRSSAfter) })
	line("  ours / controller's", func(r envelopeRow) string { return ratio(float64(r.OursRSSAfter), float64(r.KCMRSSAfter)) })
	line("status write alone p50 / p99", func(r envelopeRow) string { return msec(r.Floor[0]) + " / " + msec(r.Floor[1]) })
	line("flip p50 / p99, ours", func(r envelopeRow) string { return msec(r.Ours[0]) + " / " + msec(r.Ours[1]) })
	line("flip p50 / p99, controller's", func(r envelopeRow) string { return msec(r.KCM[0]) + " / " + msec(r.KCM[1]) })
	line("p99 past each flip's own write, ours / controller's", func(r envelopeRow) string { return msec(r.OursOver) + " / " + msec(r.KCMOver) })
	line("  ours / controller's", func(r envelopeRow) string { return ratio(r.OursOver.Seconds(), r.KCMOver.Seconds()) })
	line("CPU per flip, ours / controller's", func(r envelopeRow) string { return msec(r.OursCPU) + " / " + msec(r.KCMCPU) })
	line("webhook p50 / p99", func(r envelopeRow) string { return msec(r.WebhookP50) + " / " + msec(r.WebhookP99) })
	line("kube-apiserver / etcd peak RSS", func(r envelopeRow) string { return mb(r.APIServerPeak) + " / " + mb(r.EtcdPeak) })
	line("memory available at the end", func(r envelopeRow) string { return mb(r.MemAvailable) })
	tw.Flush()
	return sb.String()
}
