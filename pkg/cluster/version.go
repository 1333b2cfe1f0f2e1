package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
)

// ServerVersion is discovery's ServerVersion with ctx (client-go's runs
// with context.TODO(), which Ctrl-C cannot stop).
func ServerVersion(ctx context.Context, client kubernetes.Interface) (*version.Info, error) {
	rc := client.Discovery().RESTClient()
	if rc == nil || reflect.ValueOf(rc).IsNil() {
		// A client without a REST transport (a fake clientset): its
		// discovery answers at once, with nothing to cancel.
		return client.Discovery().ServerVersion()
	}
	body, err := rc.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("unable to parse the server version: %w", err)
	}
	return &info, nil
}

// ServerMinor is the API server's minor release (32 for v1.32.13), read for
// explain's notes on where an older kube-controller-manager differs; 0 when
// it cannot be read or its gitVersion is not a v1 release (explain then
// notes nothing rather than guess).
func ServerMinor(ctx context.Context, client kubernetes.Interface) int {
	info, err := ServerVersion(ctx, client)
	if err != nil {
		return 0
	}
	return ReleaseMinor(info.GitVersion)
}

// ReleaseMinor is the minor of a v1 gitVersion ("v1.32.13",
// "v1.30.2-gke.1", "v1.31.4+k3s1"), 0 for anything else.
func ReleaseMinor(gitVersion string) int {
	v, err := utilversion.ParseSemantic(gitVersion)
	if err != nil || v.Major() != 1 {
		return 0
	}
	return int(v.Minor())
}
