package printers

import (
	"runtime/debug"
	"testing"
)

func TestClientVersion(t *testing.T) {
	stamp := []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}
	cases := []struct {
		name                  string
		version, commit, date string
		settings              []debug.BuildSetting
		major, minor          string
		wantCommit, wantDate  string
		tree                  string
	}{
		{"ldflags win over the stamp", "v1.2.3", "sha", "2025-01-01T00:00:00Z", stamp, "1", "2", "sha", "2025-01-01T00:00:00Z", "dirty"},
		{"the stamp fills what ldflags left empty", "v0.0.0-dev", "", "", stamp, "0", "0", "abc", "2026-01-02T03:04:05Z", "dirty"},
		{"a clean tree", "v1.0.0", "sha", "", []debug.BuildSetting{{Key: "vcs.modified", Value: "false"}}, "1", "0", "sha", "", "clean"},
		{"no commit, no tree state", "dev", "", "", nil, "", "", "", "", ""},
	}
	for _, c := range cases {
		got := ClientVersion(c.version, c.commit, c.date, c.settings)
		if got.GitVersion != c.version || got.Major != c.major || got.Minor != c.minor || got.GitCommit != c.wantCommit ||
			got.BuildDate != c.wantDate || got.GitTreeState != c.tree || got.GoVersion == "" || got.Platform == "" {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
}

// The running binary's build: what ldflags set is kept over the stamp.
func TestThisBuild(t *testing.T) {
	v := ThisBuild("v1.2.3", "0123abc", "2026-01-02T03:04:05Z")
	if v.GitVersion != "v1.2.3" || v.Major != "1" || v.Minor != "2" || v.GitCommit != "0123abc" || v.BuildDate != "2026-01-02T03:04:05Z" {
		t.Errorf("got %+v", v)
	}
}
