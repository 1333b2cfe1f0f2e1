package printers

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/version"
)

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
