package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// platforms are the release targets; krew selects one by os and arch.
var platforms = []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64", "windows/amd64", "windows/arm64"}

const pkgCmd = "github.com/kubectl-slices/kubectl-slices/pkg/cmd"

type options struct {
	out, version, commit, manifest, template, license string
	date                                              time.Time
	platforms                                         []string
	// tags are the build tags of every build (hack/build-tags).
	tags string
}

func main() {
	var o options
	var plats, date string
	flag.StringVar(&o.out, "out", "dist", "Output directory")
	flag.StringVar(&plats, "platforms", strings.Join(platforms, ","), "Comma-separated GOOS/GOARCH list")
	flag.StringVar(&o.version, "version", "", "Semver with a leading v (default: the tag at HEAD, else a Go-style pseudo-version)")
	flag.StringVar(&o.commit, "commit", "", "Commit (default: HEAD)")
	flag.StringVar(&date, "date", "", "Commit date, RFC 3339 (default: HEAD's committer date)")
	flag.StringVar(&o.template, "template", "krew/.krew.yaml", "krew-release-bot template")
	flag.StringVar(&o.manifest, "manifest", "plugin.yaml", "Where to write the rendered manifest (empty: do not)")
	flag.StringVar(&o.license, "license", "LICENSE", "License file put in every archive")
	tagsFile := flag.String("tags-file", "hack/build-tags", "Build tags, one per line ('#' comments)")
	flag.Parse()
	o.platforms = strings.Split(plats, ",")
	tags, err := os.ReadFile(*tagsFile)
	if err == nil {
		o.tags = buildTags(string(tags))
		err = o.fill(date)
	}
	if err == nil {
		err = o.run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

// fill defaults the version, commit and date from git.
func (o *options) fill(date string) error {
	var err error
	if o.commit == "" {
		if o.commit, err = git("rev-parse", "HEAD"); err != nil {
			return err
		}
	}
	if date == "" {
		ct, err := git("show", "-s", "--format=%ct", o.commit)
		if err != nil {
			return err
		}
		sec, err := strconv.ParseInt(ct, 10, 64)
		if err != nil {
			return fmt.Errorf("commit time %q: %v", ct, err)
		}
		o.date = time.Unix(sec, 0).UTC()
	} else if o.date, err = time.Parse(time.RFC3339, date); err != nil {
		return err
	}
	o.date = o.date.UTC()
	if o.version == "" {
		o.version = pseudoVersion(o.commit, o.date)
	}
	if !strings.HasPrefix(o.version, "v") {
		return fmt.Errorf("version %q must start with v", o.version)
	}
	return nil
}

// pseudoVersion is the tag at the commit, else a Go-style pseudo-version
// (vX.Y.(Z+1)-0.DATE-HASH after the last tag vX.Y.Z, v0.0.0-DATE-HASH with
// none): valid semver that sorts after the last release.
func pseudoVersion(commit string, date time.Time) string {
	if tag, err := git("describe", "--tags", "--exact-match", "--match", "v*", commit); err == nil {
		return tag
	}
	stamp := date.Format("20060102150405") + "-" + commit[:12]
	last, err := git("describe", "--tags", "--abbrev=0", "--match", "v[0-9]*.[0-9]*.[0-9]*", commit)
	if err != nil {
		return "v0.0.0-" + stamp
	}
	parts := strings.SplitN(strings.TrimPrefix(strings.SplitN(last, "-", 2)[0], "v"), ".", 3)
	patch, _ := strconv.Atoi(parts[2])
	return fmt.Sprintf("v%s.%s.%d-0.%s", parts[0], parts[1], patch+1, stamp)
}

func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

func (o *options) run() error {
	license, err := os.ReadFile(o.license)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	sums := map[string]string{}
	for _, p := range o.platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok {
			return fmt.Errorf("platform %q: want GOOS/GOARCH", p)
		}
		bin, err := o.build(goos, goarch)
		if err != nil {
			return err
		}
		name, err := o.archive(goos, goarch, bin, license)
		if err != nil {
			return err
		}
		if sums[filepath.Base(name)], err = sha256File(name); err != nil {
			return err
		}
		fmt.Printf("%s  %s\n", sums[filepath.Base(name)], name)
	}
	if err := writeChecksums(filepath.Join(o.out, "checksums.txt"), sums); err != nil {
		return err
	}
	if o.manifest == "" {
		return nil
	}
	tmpl, err := os.ReadFile(o.template)
	if err != nil {
		return err
	}
	manifest, err := render(string(tmpl), o.version, func(uri string) (string, error) {
		sum, ok := sums[filepath.Base(uri)]
		if !ok {
			return "", fmt.Errorf("%s: no such archive was built (-platforms)", uri)
		}
		return sum, nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s for %s\n", o.manifest, o.version)
	return os.WriteFile(o.manifest, []byte(manifest), 0o644)
}

// build cross-compiles the plugin for one platform.
func (o *options) build(goos, goarch string) (string, error) {
	bin := filepath.Join(o.out, "build", goos+"_"+goarch, binName(goos))
	ldflags := fmt.Sprintf("-s -w -X %s.Version=%s -X %s.Commit=%s -X %s.Date=%s",
		pkgCmd, o.version, pkgCmd, o.commit, pkgCmd, o.date.Format(time.RFC3339))
	// -buildvcs=false: the commit is in ldflags already, and the VCS stamp
	// would change with untracked files (dist/ itself).
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-tags", o.tags, "-ldflags", ldflags, "-o", bin, "./cmd/kubectl-slices")
	cmd.Env = buildEnv(os.Environ(), goos, goarch)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build %s/%s: %v", goos, goarch, err)
	}
	return bin, nil
}

// buildEnv is the environment of a release build: the caller's (PATH, the
// module cache, proxy settings), with everything that changes the binary's
// bytes fixed, so that a GOAMD64=v3 or GOFIPS140 in a shell or in `go env -w`
// does not make one person's archives differ from another's. Later entries
// win, in the environment and over `go env -w`.
func buildEnv(environ []string, goos, goarch string) []string {
	return append(environ, "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=-mod=readonly",
		"GOAMD64=v1", "GOARM64=v8.0", "GOFIPS140=off")
}

// buildTags joins the tags of a build-tags file for go build -tags.
func buildTags(file string) string {
	var tags []string
	for _, line := range strings.Split(file, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			tags = append(tags, line)
		}
	}
	return strings.Join(tags, ",")
}

func binName(goos string) string {
	if goos == "windows" {
		return "kubectl-slices.exe"
	}
	return "kubectl-slices"
}

func sha256File(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeChecksums writes sha256sum's format, sorted by file name.
func writeChecksums(path string, sums map[string]string) error {
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s  %s\n", sums[n], n)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
