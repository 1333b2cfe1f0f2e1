package printers

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/version"
)

// ThisBuild is ClientVersion of the running binary: its ldflags' version,
// commit and date, and the VCS stamp of its build info.
func ThisBuild(gitVersion, commit, date string) version.Info {
	var settings []debug.BuildSetting
	if bi, ok := debug.ReadBuildInfo(); ok {
		settings = bi.Settings
	}
	return ClientVersion(gitVersion, commit, date, settings)
}

// ClientVersion is the plugin's build in the shape kubectl version prints:
// the version, commit and date set by ldflags; a commit or date left empty
// (a plain go build) is taken from the VCS stamp the Go toolchain embeds
// (settings, from debug.ReadBuildInfo), as is the tree's state.
func ClientVersion(gitVersion, commit, date string, settings []debug.BuildSetting) version.Info {
	tree := ""
	for _, s := range settings {
		switch {
		case s.Key == "vcs.revision" && commit == "":
			commit = s.Value
		case s.Key == "vcs.time" && date == "":
			date = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			tree = "dirty"
		}
	}
	if commit != "" && tree == "" {
		tree = "clean"
	}
	major, minor := "", ""
	if v, err := utilversion.ParseSemantic(gitVersion); err == nil {
		major, minor = fmt.Sprint(v.Major()), fmt.Sprint(v.Minor())
	}
	return version.Info{Major: major, Minor: minor, GitVersion: gitVersion, GitCommit: commit, GitTreeState: tree, BuildDate: date,
		GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH}
}

// VersionReport is `kubectl slices version -o json|yaml`, as kubectl's.
type VersionReport struct {
	ClientVersion version.Info  `json:"clientVersion"`
	ServerVersion *version.Info `json:"serverVersion,omitempty"`
}

// Version prints the report in an -o format, or as kubectl version does.
func Version(w io.Writer, format string, r VersionReport) error {
	if format != "" {
		return Data(w, format, r)
	}
	ci := r.ClientVersion
	fmt.Fprintf(w, "Client Version: %s\n", ci.GitVersion)
	if ci.GitCommit != "" {
		fmt.Fprintf(w, "Git Commit: %s\n", ci.GitCommit)
	}
	if ci.BuildDate != "" {
		fmt.Fprintf(w, "Commit Date: %s\n", ci.BuildDate)
	}
	if r.ServerVersion != nil {
		fmt.Fprintf(w, "Server Version: %s\n", r.ServerVersion.GitVersion)
	}
	return nil
}
