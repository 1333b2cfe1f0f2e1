package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/version"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
)

// Build information, set by `make build` and `make dist` with
//
//	-ldflags "-X .../pkg/cmd.Version=v1.2.3 -X .../pkg/cmd.Commit=SHA -X .../pkg/cmd.Date=RFC3339"
//
// Date is the commit's time, not the build's, so that builds reproduce.
// A plain `go build` leaves Commit and Date empty; they are then taken from
// the VCS stamp the Go toolchain embeds, when there is one.
var (
	Version = "v0.0.0-dev"
	Commit  = ""
	Date    = ""
)

// clientInfo is the plugin's build, in the shape kubectl version prints.
func clientInfo() version.Info {
	commit, date, tree := Commit, Date, ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && commit == "":
				commit = s.Value
			case s.Key == "vcs.time" && date == "":
				date = s.Value
			case s.Key == "vcs.modified" && s.Value == "true":
				tree = "dirty"
			}
		}
	}
	if commit != "" && tree == "" {
		tree = "clean"
	}
	major, minor := "", ""
	if v, err := utilversion.ParseSemantic(Version); err == nil {
		major, minor = fmt.Sprint(v.Major()), fmt.Sprint(v.Minor())
	}
	return version.Info{Major: major, Minor: minor, GitVersion: Version, GitCommit: commit, GitTreeState: tree, BuildDate: date,
		GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH}
}

// versionReport is `kubectl slices version -o json|yaml`, as kubectl's.
type versionReport struct {
	ClientVersion version.Info  `json:"clientVersion"`
	ServerVersion *version.Info `json:"serverVersion,omitempty"`
}

func newVersionCommand(root *RootOptions) *cobra.Command {
	var clientOnly bool
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version and the API server's",
		Long: `Print the plugin's version, the commit it was built from and that commit's date, and
the version of the API server of the current context.

With --client, no cluster is contacted.`,
		Example: `  # The plugin's and the API server's versions
  kubectl slices version

  # The plugin's build only, as JSON
  kubectl slices version --client -o json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if output != "" && output != "json" && output != "yaml" {
				return exit.Usagef("-o must be json or yaml, got %q", output)
			}
			report := versionReport{ClientVersion: clientInfo()}
			var serverErr error
			if !clientOnly {
				report.ServerVersion, serverErr = serverVersion(c.Context(), root)
			}
			if err := printVersion(root, output, report); err != nil {
				return err
			}
			return serverErr
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "If true, shows client version only (no server required).")
	cmd.Flags().StringVarP(&output, "output", "o", "", "One of 'yaml' or 'json'.")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// serverVersion is discovery's ServerVersion with the command's context
// (client-go's runs with context.TODO(), which Ctrl-C cannot stop).
func serverVersion(ctx context.Context, root *RootOptions) (*version.Info, error) {
	client, err := root.Clientset()
	if err != nil {
		return nil, err
	}
	rc := client.Discovery().RESTClient()
	if rc == nil || reflect.ValueOf(rc).IsNil() {
		// A client without a REST transport (a fake clientset): its
		// discovery answers at once, with nothing to cancel.
		info, err := client.Discovery().ServerVersion()
		if err != nil {
			return nil, exit.Cluster(err)
		}
		return info, nil
	}
	body, err := rc.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, exit.Cluster(err)
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("unable to parse the server version: %w", err)
	}
	return &info, nil
}

func printVersion(root *RootOptions, output string, r versionReport) error {
	switch output {
	case "json", "yaml":
		return printers.Data(root.Out, output, r)
	default:
		ci := r.ClientVersion
		fmt.Fprintf(root.Out, "Client Version: %s\n", ci.GitVersion)
		if ci.GitCommit != "" {
			fmt.Fprintf(root.Out, "Git Commit: %s\n", ci.GitCommit)
		}
		if ci.BuildDate != "" {
			fmt.Fprintf(root.Out, "Commit Date: %s\n", ci.BuildDate)
		}
		if r.ServerVersion != nil {
			fmt.Fprintf(root.Out, "Server Version: %s\n", r.ServerVersion.GitVersion)
		}
	}
	return nil
}
