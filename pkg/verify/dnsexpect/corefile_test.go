package dnsexpect

import (
	"strings"
	"testing"
	"time"
)

// kubeadm's Corefile (cmd/kubeadm/app/phases/addons/dns/manifests.go at 1.36).
const kubeadmCorefile = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
`

func TestCorefileTiming(t *testing.T) {
	older := strings.Replace(kubeadmCorefile, "cache 30 {\n       disable success cluster.local\n       disable denial cluster.local\n    }", "cache 30", 1)
	for _, c := range []struct {
		name, corefile, domain string
		plugin, cache          time.Duration
	}{
		{"kubeadm: the cluster domain is not cached", kubeadmCorefile, "", 30 * time.Second, 0},
		{"cache 30 alone caches it", older, "cluster.local", 30 * time.Second, 30 * time.Second},
		{"denial still cached", strings.Replace(kubeadmCorefile, "disable success cluster.local", "", 1), "", 30 * time.Second, 30 * time.Second},
		{"disabled for another zone", strings.ReplaceAll(kubeadmCorefile, "disable success cluster.local", "disable success example.org"), "", 30 * time.Second, 30 * time.Second},
		{"cache without TTL: its maxima", strings.Replace(older, "cache 30", "cache", 1), "", 30 * time.Second, 3600 * time.Second},
		{"success TTL", strings.Replace(older, "cache 30", "cache 30 {\n success 1000 60\n disable denial\n }", 1), "", 30 * time.Second, 60 * time.Second},
		{"cache for other zones only", strings.Replace(older, "cache 30", "cache 30 example.org", 1), "", 30 * time.Second, 0},
		{"no ttl: the plugin's 5s", strings.Replace(older, "ttl 30", "", 1), "", 5 * time.Second, 30 * time.Second},
		{"no cache", strings.Replace(older, "cache 30", "", 1), "", 30 * time.Second, 0},
		{"the most specific server block", older + "cluster.local:53 {\n kubernetes {\n ttl 7\n }\n}\n", "", 7 * time.Second, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := CorefileTiming(c.corefile, c.domain)
			if err != nil {
				t.Fatal(err)
			}
			if got.PluginTTL != c.plugin || got.CacheTTL != c.cache || got.Slack != 5*time.Second {
				t.Errorf("got plugin %s cache %s slack %s, want %s %s 5s", got.PluginTTL, got.CacheTTL, got.Slack, c.plugin, c.cache)
			}
		})
	}
}

func TestCorefileTimingErrors(t *testing.T) {
	for _, c := range []struct{ name, corefile, want string }{
		{"no kubernetes", ".:53 {\n forward . 8.8.8.8\n}\n", "no kubernetes plugin"},
		{"kubernetes for another zone", ".:53 {\n kubernetes corp.example\n}\n", "no kubernetes plugin"},
		{"no block for the domain", "example.org:53 {\n kubernetes\n}\n", "no server block"},
		{"unclosed", ".:53 {\n kubernetes {\n ttl 30\n", "not closed"},
		{"bad ttl", ".:53 {\n kubernetes {\n ttl soon\n }\n}\n", "ttl \"soon\""},
		{"stray line", "kubernetes\n", "opens no server block"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := CorefileTiming(c.corefile, ""); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}
