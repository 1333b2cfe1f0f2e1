package cluster

import (
	"flag"
	"fmt"
	"io"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
)

// Tune sets c's rate limits and user agent and counts its requests
// (CountRequests). The plugin's defaults are high (a 100,000-Pod Service
// means 1,000 slices); with lift, the limits are the defaults, and lifted
// once the API server shows it applies API Priority and Fairness
// (fairnessLimiter).
func Tune(c *rest.Config, qps float32, burst int, lift bool, userAgent string) *rest.Config {
	c.QPS, c.Burst = qps, burst
	if lift {
		l := &fairnessLimiter{bucket: flowcontrol.NewTokenBucketRateLimiter(qps, burst)}
		c.RateLimiter = l
		c.Wrap(l.observe)
	}
	c.UserAgent = userAgent
	c.Wrap(CountRequests)
	return c
}

// NewClient is a typed client from a copy of c asking for protobuf, which
// the API server encodes and we decode several times faster than JSON;
// wrap, if not nil, goes around its transport.
func NewClient(c *rest.Config, wrap transport.WrapperFunc) (kubernetes.Interface, error) {
	c = rest.CopyConfig(c)
	if wrap != nil {
		c.Wrap(wrap)
	}
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	return kubernetes.NewForConfig(c)
}

// SetupLogging keeps client-go's logs (retries, discovery errors) off the
// terminal unless v asks for them: errors that matter reach the user once,
// as one line, through the command's own error. With v > 0 they go to w.
func SetupLogging(v int, w io.Writer) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if v <= 0 {
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("alsologtostderr", "false")
		_ = fs.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
		return
	}
	_ = fs.Set("v", fmt.Sprint(v))
	klog.SetOutput(w)
}
