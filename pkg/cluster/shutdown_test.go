package cluster

import (
	"testing"
	"time"

	"k8s.io/client-go/informers"
)

// blockedFactory's Shutdown never returns, as client-go's does while a
// watch-list retry sleeps out its backoff.
type blockedFactory struct {
	informers.SharedInformerFactory
	called, release chan struct{}
}

func (f blockedFactory) Shutdown() {
	close(f.called)
	<-f.release
}

// Stopping does not wait on informers that do not stop.
func TestShutdownInformersIsBounded(t *testing.T) {
	f := blockedFactory{called: make(chan struct{}), release: make(chan struct{})}
	defer close(f.release)
	done := make(chan struct{})
	go func() {
		ShutdownInformers(f, 10*time.Millisecond)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ShutdownInformers waited on a Shutdown that never returns")
	}
	select {
	case <-f.called:
	default:
		t.Fatal("Shutdown was not called")
	}
}
