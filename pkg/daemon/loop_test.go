package daemon

import (
	"context"
	"errors"
	"io"
	"reflect"
	"runtime/debug"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-slices/kubectl-slices/pkg/controller"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
	"github.com/kubectl-slices/kubectl-slices/pkg/webhook"
)

func TestScope(t *testing.T) {
	cases := []struct {
		name      string
		all       bool
		names     []string
		selector  string
		namespace string
		keys      map[string]bool
		selects   string // a label set the selector must match; "-" for none
	}{
		{"--all", false, nil, "", "shop", nil, "anything=at-all"},
		{"--all -A", true, nil, "", "", nil, "anything=at-all"},
		{"-l -A", true, nil, "tier=web", "", nil, "tier=web"},
		{"names", false, []string{"web", "api"}, "", "shop", map[string]bool{"shop/web": true, "shop/api": true}, "anything=at-all"},
		{"names stay in -n under -A", true, []string{"web"}, "", "shop", map[string]bool{"shop/web": true}, "anything=at-all"},
	}
	for _, c := range cases {
		var loop controller.Options
		sel := syncer.Selection{Namespace: "shop", Names: c.names, Selector: c.selector, AllNamespaces: c.all}
		if c.selector != "" {
			sel.Labels = labels.SelectorFromSet(labels.Set{"tier": "web"})
		}
		Scope(&loop, sel)
		if loop.Namespace != c.namespace || !reflect.DeepEqual(loop.Names, c.keys) {
			t.Errorf("%s: namespace %q names %v, want %q %v", c.name, loop.Namespace, loop.Names, c.namespace, c.keys)
		}
		if c.selector != "" && loop.Selector.String() != c.selector || loop.Selector == nil {
			t.Errorf("%s: selector %v", c.name, loop.Selector)
		}
	}
}

func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	tuneGC() // GOGC set (even empty): left as it is
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set, yet the GC percent became %d", got)
	}
}

// A signal stops the loop without failure; a configuration mistake is a
// failure even then.
func TestRunLoopSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := RunLoop(ctx, Config{Client: fake.NewClientset(), Loop: &controller.Options{}}); err != nil {
		t.Errorf("stopped by a signal: %v", err)
	}
	err := RunLoop(ctx, Config{Client: fake.NewClientset(), Log: io.Discard,
		Webhook: &Webhook{Addr: "not an address", CertFile: "/none", KeyFile: "/none", Handler: &webhook.Handler{}}})
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Errorf("a webhook that cannot serve, stopped by a signal: %v, want a ConfigError", err)
	}
}
