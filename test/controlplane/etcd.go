package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// StopEtcd kills etcd with SIGKILL, as a crash would; its data stays (with
// --unsafe-no-fsync what it wrote is in the page cache, which a process's
// death does not lose). kube-apiserver keeps running and fails its
// requests.
func (cp *ControlPlane) StopEtcd() {
	cp.etcd.stop(-1)
}

// StartEtcd starts etcd again with the same flags: the same ports and data
// directory; it waits until etcd reports healthy.
func (cp *ControlPlane) StartEtcd(ctx context.Context) error {
	if !cp.etcd.exited() {
		return errors.New("etcd is running")
	}
	p, err := startProcess(cp.Dir, "etcd-restarted", filepath.Join(cp.BinDir, "etcd"), cp.etcdArgs...)
	if err != nil {
		return err
	}
	cp.etcd = p
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if p.exited() {
			return fmt.Errorf("etcd exited during start-up:\n%s", tail(p.log.Name(), 2000))
		}
		if answersOK(ctx, client, cp.etcdURL+"/health", "") {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("etcd not healthy after 30s:\n%s", tail(p.log.Name(), 2000))
}

// Compact compacts etcd's history up to its current revision, so that a
// watch resuming from an older resourceVersion, where the API server
// passes it to etcd, is answered 410 Gone. kube-apiserver compacts on its
// own only every --etcd-compaction-interval (5 min by default).
//
// kube-apiserver's watch cache (on by default) answers a watch from any
// resourceVersion it still holds, compacted in etcd or not, and holds
// minutes of a quiet cluster's changes: a test that needs the 410 runs
// kube-apiserver with --watch-cache=false (Options.APIServerArgs), so that
// watches go to etcd.
func (cp *ControlPlane) Compact(ctx context.Context) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{cp.etcdURL}, DialTimeout: 5 * time.Second, Context: ctx})
	if err != nil {
		return err
	}
	defer cli.Close()
	// Any read's header carries the store's current revision.
	resp, err := cli.Get(ctx, "compact", clientv3.WithCountOnly())
	if err != nil {
		return fmt.Errorf("etcd revision: %w", err)
	}
	if _, err := cli.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		return fmt.Errorf("compact etcd at revision %d: %w", resp.Header.Revision, err)
	}
	return nil
}

// WatchStartError is the error a watch just opened starts with: the call's
// own, or the status of its first event when that is an error (410 Gone
// after Compact); nil when it starts cleanly, or says nothing for 5 s.
// Call it as WatchStartError(client.Watch(ctx, opts)).
func WatchStartError(w watch.Interface, err error) error {
	if err != nil {
		return err
	}
	defer w.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			return errors.New("watch closed")
		}
		if st, isStatus := ev.Object.(*metav1.Status); isStatus {
			return &apierrors.StatusError{ErrStatus: *st}
		}
		return nil
	case <-time.After(5 * time.Second):
		return nil
	}
}
