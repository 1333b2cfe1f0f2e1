// Package testutil builds the API objects tests feed the code: Services,
// Pods, Nodes, EndpointSlices and v1 Endpoints, through fluent builders in
// the manner of krew's internal/testutil:
//
//	svc := testutil.NewService("shop", "web").Selector("app", "web").Port("http", 80, "8080").Build()
//	pod := testutil.NewPod("shop", "web-1").Label("app", "web").IP("10.1.0.1").Node("n1").Build()
//	s := testutil.NewSlice("shop", "web-abc").Service("web").ManagedBy(v).Ready("10.1.0.1").Build()
//
// Defaults are the few every test would otherwise repeat, and nothing more:
// a Service is a ClusterIP IPv4 Service with no selector and no ports; a Pod
// is Running and Ready; a Node is Ready; a slice is IPv4. Each Build returns
// a new object, so a builder can be built again after further changes
// without the first object changing under a test.
//
// Failures compare with go-cmp: cmp.Diff(want, got) names the field that
// differs instead of printing both objects whole.
package testutil
