package krew

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

var (
	safePluginRegexp = regexp.MustCompile(`^[\w-]+$`)
	validSHA256      = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// Decode reads a manifest as krew does: strictly, so an unknown or
// misspelt field is an error rather than silently dropped.
func Decode(b []byte) (Plugin, error) {
	var p Plugin
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		return p, fmt.Errorf("failed to decode plugin manifest: %w", err)
	}
	return p, nil
}

// ValidatePlugin is krew's validation.ValidatePlugin: name is the manifest's
// file name without .yaml, which must equal metadata.name.
func ValidatePlugin(name string, p Plugin) error {
	if p.APIVersion != CurrentAPIVersion {
		return fmt.Errorf("plugin manifest has apiVersion=%q, not supported in this version of krew (try updating plugin index or install a newer version of krew)", p.APIVersion)
	}
	if p.Kind != PluginKind {
		return fmt.Errorf("plugin manifest has kind=%q, but only %q is supported", p.Kind, PluginKind)
	}
	if !safePluginRegexp.MatchString(name) {
		return fmt.Errorf("the plugin name %q is not allowed, must match %q", name, safePluginRegexp.String())
	}
	if p.Name != name {
		return fmt.Errorf("plugin name %q specified in the manifest does not match the file name %q", p.Name, name)
	}
	if p.Spec.ShortDescription == "" {
		return errors.New("should have a short description")
	}
	if len(p.Spec.Platforms) == 0 {
		return errors.New("should have a platform")
	}
	if p.Spec.Version == "" {
		return errors.New("should have a version")
	}
	if err := parseVersion(p.Spec.Version); err != nil {
		return fmt.Errorf("failed to parse version: %w", err)
	}
	for i, pl := range p.Spec.Platforms {
		if err := validatePlatform(pl); err != nil {
			return fmt.Errorf("platform[%d] is not valid: %w", i, err)
		}
	}
	return nil
}

// parseVersion is krew's semver.Parse: a leading v, then semantic version.
func parseVersion(s string) error {
	if !strings.HasPrefix(s, "v") {
		return fmt.Errorf("version string %q does not start with 'v'", s)
	}
	_, err := utilversion.ParseSemantic(s)
	return err
}

func validatePlatform(p Platform) error {
	switch {
	case p.URI == "":
		return errors.New("`uri` has to be set")
	case p.Sha256 == "":
		return errors.New("`sha256` sum has to be set")
	case !validSHA256.MatchString(p.Sha256):
		return fmt.Errorf("`sha256` value %s is not valid, must match pattern %s", p.Sha256, validSHA256)
	case p.Bin == "":
		return errors.New("`bin` has to be set")
	}
	if err := validateFiles(p.Files); err != nil {
		return fmt.Errorf("`files` is invalid: %w", err)
	}
	if err := validateSelector(p.Selector); err != nil {
		return fmt.Errorf("invalid platform selector: %w", err)
	}
	return nil
}

func validateFiles(fops []FileOperation) error {
	if fops == nil {
		return nil
	}
	if len(fops) == 0 {
		return errors.New("`files` has to be unspecified or non-empty")
	}
	for _, op := range fops {
		if op.From == "" {
			return errors.New("`from` field has to be set")
		} else if op.To == "" {
			return errors.New("`to` field has to be set")
		}
	}
	return nil
}

func validateSelector(sel *metav1.LabelSelector) error {
	if sel == nil {
		return errors.New("nil selector is not supported")
	}
	if sel.MatchLabels == nil && len(sel.MatchExpressions) == 0 {
		return errors.New("empty selector is not supported")
	}
	var keys []string
	for k := range sel.MatchLabels {
		keys = append(keys, k)
	}
	for _, expr := range sel.MatchExpressions {
		keys = append(keys, expr.Key)
	}
	for _, key := range keys {
		if key != "os" && key != "arch" {
			return fmt.Errorf("key %q not supported in selector", key)
		}
	}
	return nil
}

// knownPlatforms are the os/arch pairs krew's validate-krew-manifest tries
// when it looks for overlapping selectors.
var knownPlatforms = func() [][2]string {
	var out [][2]string
	for _, os := range []string{"darwin", "linux", "windows"} {
		for _, arch := range []string{"386", "amd64", "arm", "arm64", "ppc64le", "s390x"} {
			out = append(out, [2]string{os, arch})
		}
	}
	return out
}()

// Match is krew's platform matching: the first platform whose selector
// matches the os and arch labels.
func Match(p Plugin, goos, goarch string) (Platform, bool, error) {
	env := labels.Set{"os": goos, "arch": goarch}
	for _, pl := range p.Spec.Platforms {
		sel, err := metav1.LabelSelectorAsSelector(pl.Selector)
		if err != nil {
			return Platform{}, false, fmt.Errorf("failed to compile label selector: %w", err)
		}
		if sel.Matches(env) {
			return pl, true, nil
		}
	}
	return Platform{}, false, nil
}

// Review applies the krew-index review rules that the validator does not:
// selectors that never overlap, a shortDescription of at most 50 characters,
// a description wrapped at 80 columns, an https homepage, archives named for
// the version, files that install the bin and a LICENSE.
func Review(p Plugin) error {
	for _, op := range knownPlatforms {
		n := 0
		for _, pl := range p.Spec.Platforms {
			sel, err := metav1.LabelSelectorAsSelector(pl.Selector)
			if err != nil {
				return err
			}
			if sel.Matches(labels.Set{"os": op[0], "arch": op[1]}) {
				n++
			}
		}
		if n > 1 {
			return fmt.Errorf("overlapping platform selectors found: %d platforms match os=%s arch=%s", n, op[0], op[1])
		}
	}
	if n := len([]rune(p.Spec.ShortDescription)); n > 50 {
		return fmt.Errorf("shortDescription is %d characters, at most 50", n)
	}
	for i, line := range strings.Split(p.Spec.Description, "\n") {
		if n := len([]rune(line)); n > 80 {
			return fmt.Errorf("description line %d is %d columns, wrap at 80", i+1, n)
		}
	}
	if u, err := url.Parse(p.Spec.Homepage); err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("homepage %q is not an https URL", p.Spec.Homepage)
	}
	for i, pl := range p.Spec.Platforms {
		u, err := url.Parse(pl.URI)
		if err != nil || u.Scheme != "https" {
			return fmt.Errorf("platform[%d]: uri %q is not an https URL", i, pl.URI)
		}
		if !strings.Contains(path.Base(u.Path), p.Spec.Version) {
			return fmt.Errorf("platform[%d]: archive %s is not named for version %s", i, path.Base(u.Path), p.Spec.Version)
		}
		if err := reviewFiles(pl); err != nil {
			return fmt.Errorf("platform[%d]: %w", i, err)
		}
	}
	return nil
}

// reviewFiles: explicit files, clean targets, one putting the bin in place
// and one the LICENSE.
func reviewFiles(pl Platform) error {
	if len(pl.Files) == 0 {
		return errors.New("files should list what to install (the bin and the LICENSE)")
	}
	installed := map[string]bool{}
	for _, op := range pl.Files {
		if op.To != path.Clean(op.To) || strings.HasPrefix(op.To, "..") || path.IsAbs(op.To) {
			return fmt.Errorf("files: to %q is not a clean path inside the installation", op.To)
		}
		installed[path.Join(op.To, path.Base(op.From))] = true
	}
	if !installed[path.Clean(pl.Bin)] {
		return fmt.Errorf("no files entry installs bin %q", pl.Bin)
	}
	if !installed["LICENSE"] {
		return errors.New("no files entry installs the LICENSE")
	}
	return nil
}
