// Package monitoring tests the loop's Prometheus rules (monitoring/, from
// pkg/monitoring) with the real promtool, built from Prometheus' Go module
// by hack/build-promtool.sh and named by KUBECTL_SLICES_PROMTOOL.
package monitoring
