package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

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
