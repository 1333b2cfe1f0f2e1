package probe

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsexpect"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsread"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

// The DNS replicas as kubeadm deploys CoreDNS: Pods labelled
// k8s-app=kube-dns in kube-system, their Corefile in the ConfigMap coredns.
const (
	DNSLabel     = "k8s-app=kube-dns"
	DNSConfigMap = "coredns"
	dnsPort      = 53
)

// readDNS asks every DNS replica, at most Concurrency at once and each
// within NodeTimeout, the questions the Services' slices call for
// (verdict.DNSQuestions), over one port-forward to its TCP 53 each, and
// reads how long a replica may serve an older answer from the Corefile;
// verdict.Judge judges the answers. It never fails: a replica that could not
// be asked is a reading with the reason; none found is no reading.
func readDNS(ctx context.Context, o Options, r rights, domain string, svcs []verdict.Service) ([]verdict.DNSReading, dnsexpect.Timing) {
	pods, err := o.Client.CoreV1().Pods(ProxyNamespace).List(ctx, metav1.ListOptions{LabelSelector: DNSLabel})
	switch {
	case apierrors.IsForbidden(err):
		return []verdict.DNSReading{{Replica: ProxyNamespace + "/(" + DNSLabel + ")", Unreadable: "forbidden: needs list pods in " + ProxyNamespace}}, dnsexpect.Timing{}
	case err != nil:
		return []verdict.DNSReading{{Replica: ProxyNamespace + "/(" + DNSLabel + ")", Unreadable: "cannot list the DNS Pods: " + english.Clip(err.Error(), english.ClipLen)}}, dnsexpect.Timing{}
	}
	timing := corefileTiming(ctx, o, domain)
	var all []dnsexpect.Question
	for _, qs := range verdict.DNSQuestions(svcs, domain) {
		all = append(all, qs...)
	}
	out := make([]verdict.DNSReading, len(pods.Items))
	g := errgroup.Group{}
	g.SetLimit(max(o.Concurrency, 1))
	for i := range pods.Items {
		p := &pods.Items[i]
		g.Go(func() error {
			out[i] = askReplica(ctx, o, p, r.forward, all)
			return nil
		})
	}
	_ = g.Wait()
	return out, timing
}

// askReplica asks one replica every question over one port-forward.
func askReplica(ctx context.Context, o Options, p *corev1.Pod, denied string, qs []dnsexpect.Question) verdict.DNSReading {
	r := askReplicaOnce(ctx, o, p, denied, qs)
	r.UID = string(p.UID) // an Event on the Pod (verify --watch) names it
	return r
}

func askReplicaOnce(ctx context.Context, o Options, p *corev1.Pod, denied string, qs []dnsexpect.Question) verdict.DNSReading {
	name := p.Namespace + "/" + p.Name
	switch {
	case denied != "":
		return verdict.DNSReading{Replica: name, Address: p.Status.PodIP, Unreadable: "forbidden: needs " + denied}
	case p.Status.Phase != corev1.PodRunning:
		return verdict.DNSReading{Replica: name, Unreadable: fmt.Sprintf("the DNS Pod is %s, not Running", p.Status.Phase)}
	}
	rctx, cancel := context.WithTimeout(ctx, o.NodeTimeout)
	defer cancel()
	dial, stop, err := o.Transport.ForwardDial(rctx, p.Namespace, p.Name, dnsPort)
	if err != nil {
		if rctx.Err() != nil {
			err = fmt.Errorf("no answer within the node timeout (%s)", o.NodeTimeout)
		}
		return verdict.DNSReading{Replica: name, Unreadable: "port-forward to TCP 53: " + english.Clip(err.Error(), english.ClipLen)}
	}
	defer stop()
	answers := dnsread.Ask(rctx, dial, qs, dnsread.Limits{MaxQuestions: max(len(qs), 4096)})
	return verdict.DNSReading{Replica: name, Address: p.Status.PodIP, Answers: answers, At: time.Now()}
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
