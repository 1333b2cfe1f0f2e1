package proxyprobe

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/dnsexpect"
	"github.com/kubectl-slices/kubectl-slices/pkg/dnsread"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify"
)

// The DNS replicas as kubeadm deploys CoreDNS: Pods labelled
// k8s-app=kube-dns in kube-system, their Corefile in the ConfigMap coredns.
const (
	DNSLabel     = "k8s-app=kube-dns"
	DNSConfigMap = "coredns"
	dnsPort      = 53
)

// DNS asks every DNS replica, at most Concurrency at once and each within
// NodeTimeout, the questions the Services' slices call for, over one
// port-forward to its TCP 53 each, and holds each Service's answers against
// them with that Service's own timing. It never fails: a replica that
// could not be asked is UNKNOWN with the reason; none found is no row.
func DNS(ctx context.Context, o Options, domain string, svcs []verify.Service) []verify.DNSRow {
	pods, err := o.Client.CoreV1().Pods(ProxyNamespace).List(ctx, metav1.ListOptions{LabelSelector: DNSLabel})
	switch {
	case apierrors.IsForbidden(err):
		return []verify.DNSRow{unknownDNS(ProxyNamespace+"/("+DNSLabel+")", "forbidden: needs list pods in "+ProxyNamespace)}
	case err != nil:
		return []verify.DNSRow{unknownDNS(ProxyNamespace+"/("+DNSLabel+")", "cannot list the DNS Pods: "+oneLine(err.Error()))}
	}
	timing := corefileTiming(ctx, o, domain)
	qs := make([][]dnsexpect.Question, len(svcs))
	var all []dnsexpect.Question
	for i, s := range svcs {
		qs[i] = dnsexpect.Expect(s.Service, s.Slices, dnsexpect.Options{Domain: domain})
		all = append(all, qs[i]...)
	}
	denied := preflight(ctx, o.Client, ProxyNamespace).forward
	rows := make([]verify.DNSRow, len(pods.Items))
	g := errgroup.Group{}
	g.SetLimit(max(o.Concurrency, 1))
	for i := range pods.Items {
		p := &pods.Items[i]
		g.Go(func() error {
			rows[i] = askReplica(ctx, o, p, denied, all, func(answers []dnsexpect.Answer, now time.Time) dnsexpect.Result {
				rs := make([]dnsexpect.Result, len(svcs))
				for j, s := range svcs {
					t := timing
					t.Changed, t.Now = dnsexpect.LastChange(s.Service, s.Slices), now
					rs[j] = dnsexpect.Compare(qs[j], answers, t)
				}
				return dnsexpect.Combine(rs)
			})
			return nil
		})
	}
	_ = g.Wait()
	slices.SortFunc(rows, func(a, b verify.DNSRow) int { return strings.Compare(a.Replica, b.Replica) })
	return rows
}

// askReplica asks one replica every question over one port-forward and
// judges the answers with judge.
func askReplica(ctx context.Context, o Options, p *corev1.Pod, denied string, qs []dnsexpect.Question,
	judge func([]dnsexpect.Answer, time.Time) dnsexpect.Result) verify.DNSRow {
	name := p.Namespace + "/" + p.Name
	switch {
	case denied != "":
		row := unknownDNS(name, "forbidden: needs "+denied)
		row.Address = p.Status.PodIP
		return row
	case p.Status.Phase != corev1.PodRunning:
		return unknownDNS(name, fmt.Sprintf("the DNS Pod is %s, not Running", p.Status.Phase))
	}
	rctx, cancel := context.WithTimeout(ctx, o.NodeTimeout)
	defer cancel()
	dial, stop, err := o.Transport.ForwardDial(rctx, p.Namespace, p.Name, dnsPort)
	if err != nil {
		if rctx.Err() != nil {
			err = fmt.Errorf("no answer within the node timeout (%s)", o.NodeTimeout)
		}
		return unknownDNS(name, "port-forward to TCP 53: "+oneLine(err.Error()))
	}
	defer stop()
	answers := dnsread.Ask(rctx, dial, qs, dnsread.Limits{MaxQuestions: max(len(qs), 4096)})
	return verify.DNSRow{Replica: name, Address: p.Status.PodIP, Result: judge(answers, time.Now())}
}

// corefileTiming reads how long a replica may serve an older answer from
// the Corefile kubeadm's ConfigMap holds; without it (absent, unreadable,
// forbidden), a kubeadm Corefile's figures with the cache assumed on.
func corefileTiming(ctx context.Context, o Options, domain string) dnsexpect.Timing {
	cm, err := o.Client.CoreV1().ConfigMaps(ProxyNamespace).Get(ctx, DNSConfigMap, metav1.GetOptions{})
	if err == nil {
		if t, err := dnsexpect.CorefileTiming(cm.Data["Corefile"], domain); err == nil {
			return t
		}
	}
	return dnsexpect.DefaultTiming(time.Time{}, time.Time{})
}

func unknownDNS(replica, reason string) verify.DNSRow {
	return verify.DNSRow{Replica: replica, Result: dnsexpect.Result{Status: dnsexpect.Unknown, Reason: reason, Answers: []dnsexpect.Answer{}}}
}
