// Command envelopeplot draws the envelope benchmark's ladder
// (BenchmarkEnvelope's envelope.csv) as one PNG per measure: time and
// memory against Pods, ours beside kube-controller-manager's, on log-log
// axes with a dashed line of slope 1 through each curve's first point, so
// a curve that bends above its line grows faster than the cluster.
//
//	go run ./cmd/envelopeplot -in /tmp/envelope/envelope.csv -out ../docs/images
package main
