package probe

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyread"
)

// configPath is the kube-proxy container's --config file, "" without one.
func configPath(p *corev1.Pod) string {
	argv := argvOf(p)
	for i, a := range argv {
		switch {
		case strings.HasPrefix(a, "--config="):
			return strings.TrimPrefix(a, "--config=")
		case a == "--config" && i+1 < len(argv):
			return argv[i+1]
		}
	}
	return ""
}

// readFileScript prints the file named by its first argument with the
// shell's builtins only: kube-proxy's images hold a shell, nft and
// iptables, not always cat.
const readFileScript = `while IFS= read -r l || [ -n "$l" ]; do printf '%s\n' "$l"; done < "$1"`

// configMode reads kube-proxy's mode from its KubeProxyConfiguration file
// (the mode field; empty is kube-proxy's Linux default, iptables), for
// when its metrics do not answer (a hung kube-proxy) and its command line
// does not say.
func configMode(ctx context.Context, exec proxyread.Exec, path string, limit int64) (string, error) {
	out, err := exec(ctx, []string{"sh", "-c", readFileScript, "sh", path}, nil, limit)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	var cfg struct {
		Kind string `json:"kind"`
		Mode string `json:"mode"`
	}
	if err := yaml.Unmarshal(out, &cfg); err != nil || cfg.Kind != "KubeProxyConfiguration" {
		return "", fmt.Errorf("%s is not a KubeProxyConfiguration", path)
	}
	if cfg.Mode == "" {
		return string(proxyread.ModeIptables), nil
	}
	return cfg.Mode, nil
}
