// Command dnsprobe checks one DNS replica for one Service, as `kubectl
// slices verify` does per CoreDNS replica, against an address reached
// directly (a local CoreDNS, a port-forward already open). It reads the
// Service and its EndpointSlices, derives the questions (pkg/verify/dnsexpect),
// asks them over TCP (pkg/verify/dnsread) and prints the verdict with its
// evidence as JSON. The e2e test of the DNS check runs it; it exits 0
// whatever the verdict, 1 when the objects cannot be read.
//
//	go run ./hack/dnsprobe -kubeconfig K -n NS -service NAME -addr 127.0.0.1:1053
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsexpect"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsread"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig")
	ns := flag.String("n", "default", "namespace")
	name := flag.String("service", "", "Service name")
	addr := flag.String("addr", "", "the replica's DNS address, host:port (TCP)")
	domain := flag.String("domain", dnsexpect.DefaultDomain, "cluster domain")
	pluginTTL := flag.Duration("plugin-ttl", 30*time.Second, "the kubernetes plugin's ttl")
	cacheTTL := flag.Duration("cache-ttl", 0, "the cache plugin's max TTL for the cluster domain, 0 when not cached")
	slack := flag.Duration("slack", 5*time.Second, "informer delay allowed")
	corefile := flag.String("corefile", "", "a Corefile to read the plugin ttl and the cache's from, instead of the flags")
	timeout := flag.Duration("timeout", 20*time.Second, "bound of the whole check")
	flag.Parse()
	t := dnsexpect.Timing{PluginTTL: *pluginTTL, CacheTTL: *cacheTTL, Slack: *slack}
	if *corefile != "" {
		b, err := os.ReadFile(*corefile)
		if err == nil {
			t, err = dnsexpect.CorefileTiming(string(b), *domain)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "dnsprobe:", err)
			os.Exit(1)
		}
	}
	if err := run(*kubeconfig, *ns, *name, *addr, dnsexpect.Options{Domain: *domain}, t, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "dnsprobe:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, ns, name, addr string, opt dnsexpect.Options, t dnsexpect.Timing, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	svc, err := c.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	list, err := c.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		return err
	}
	slices := make([]*discoveryv1.EndpointSlice, len(list.Items))
	for i := range list.Items {
		slices[i] = &list.Items[i]
	}
	qs := dnsexpect.Expect(svc, slices, opt)
	t.Changed = dnsexpect.LastChange(svc, slices)
	dial := func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
	res := dnsread.Check(ctx, dial, qs, t, dnsread.Limits{})
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
