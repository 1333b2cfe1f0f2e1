package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// BuildTags returns the build tags of kubectl-slices (hack/build-tags
// under the repository root: one per line, '#' comments) joined for
// `go build -tags`, so that the suites test the binary make build ships.
func BuildTags(repoRoot string) (string, error) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "hack", "build-tags"))
	if err != nil {
		return "", fmt.Errorf("read the build tags: %w", err)
	}
	var tags []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			tags = append(tags, line)
		}
	}
	return strings.Join(tags, ","), nil
}
