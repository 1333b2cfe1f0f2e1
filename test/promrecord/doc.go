// Package promrecord turns scrapes of a real /metrics into the input series
// of a promtool rules unit test and runs that test with the real promtool
// (hack/build-promtool.sh), so that an alert is tried on the samples a real
// process served: the loop's in test/e2e, kube-proxy's on the real nodes in
// test/e2enode.
//
// Scrapes are taken every Interval from Start; promtool's clock starts at
// Start too (start_timestamp), so timestamp-valued gauges such as
// kube-proxy's last sync compare with time() as a real Prometheus would.
package promrecord
