package apicompat

import (
	"fmt"
	"go/types"
	"os/exec"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/exp/apidiff"
	"golang.org/x/mod/semver"
)

// Compare reports the changes from old's exported API to new's, packages
// of the module modulePath matched by their path in the module (apidiff's
// ModuleChanges): a removed package or declaration, or a changed type, is
// incompatible; an addition is compatible.
func Compare(modulePath string, old, new []*types.Package) apidiff.Report {
	return apidiff.ModuleChanges(&apidiff.Module{Path: modulePath, Packages: old}, &apidiff.Module{Path: modulePath, Packages: new})
}

// Incompatible is the report's incompatible changes.
func Incompatible(r apidiff.Report) []string {
	var out []string
	for _, c := range r.Changes {
		if !c.Compatible {
			out = append(out, c.Message)
		}
	}
	return out
}

// releaseTag is a release's tag: vX.Y.Z, no pre-release, no build.
var releaseTag = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// Required is the lowest version that may follow the release last with the
// changes of r (docs/releasing.md): with an incompatible change, the next
// minor while the major is 0 (v0.3.2 -> v0.4.0) and the next major from v1
// on (v1.2.3 -> v2.0.0); otherwise the next patch.
func Required(last string, r apidiff.Report) (string, error) {
	major, minor, patch, err := parse(last)
	if err != nil {
		return "", err
	}
	switch {
	case len(Incompatible(r)) == 0:
		patch++
	case major == 0:
		minor, patch = minor+1, 0
	default:
		major, minor, patch = major+1, 0, 0
	}
	return fmt.Sprintf("v%d.%d.%d", major, minor, patch), nil
}

// Check returns nil when next, the version being released (a pre-release
// counts as the release it precedes: v0.4.0-rc.1 as v0.4.0), may follow the
// release last with the changes of r, and otherwise an error listing the
// incompatible changes and the way out.
func Check(last, next string, r apidiff.Report) error {
	if _, _, _, err := parse(next); err != nil {
		return err
	}
	required, err := Required(last, r)
	if err != nil {
		return err
	}
	release := strings.TrimSuffix(semver.Canonical(next), semver.Prerelease(next))
	if semver.Compare(release, required) >= 0 {
		return nil
	}
	incompatible := Incompatible(r)
	if len(incompatible) == 0 {
		return fmt.Errorf("%s does not follow the last release, %s: release %s or later", next, last, required)
	}
	return fmt.Errorf("%s may not follow %s: pkg/'s exported API changed incompatibly since %s:\n  - %s\n"+
		"release %s or later, or restore what was removed or changed (docs/releasing.md)",
		next, last, last, strings.Join(incompatible, "\n  - "), required)
}

// parse splits a version vX.Y.Z[-pre] into its numbers.
func parse(v string) (major, minor, patch int, err error) {
	c := semver.Canonical(v)
	if c == "" || semver.Build(v) != "" {
		return 0, 0, 0, fmt.Errorf("%q is not a version vX.Y.Z", v)
	}
	_, err = fmt.Sscanf(strings.TrimSuffix(c, semver.Prerelease(c)), "v%d.%d.%d", &major, &minor, &patch)
	return major, minor, patch, err
}

// LastRelease is the release the checkout at dir follows: the highest tag
// vX.Y.Z (no pre-release) reachable from HEAD but not on HEAD itself, and
// below next when next is not ""; "" when there is none (a clone without
// tags, or no release yet).
func LastRelease(dir, next string) (string, error) {
	cmd := exec.Command("git", "tag", "--list", "v*", "--merged", "HEAD", "--no-contains", "HEAD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git tag in %s: %w%s", dir, err, stderr(err))
	}
	var tags []string
	for _, t := range strings.Fields(string(out)) {
		if releaseTag.MatchString(t) && (next == "" || semver.Compare(t, next) < 0) {
			tags = append(tags, t)
		}
	}
	if len(tags) == 0 {
		return "", nil
	}
	return slices.MaxFunc(tags, semver.Compare), nil
}

// stderr is ": <stderr>" of a failed command, "" if it wrote none.
func stderr(err error) string {
	if e, ok := err.(*exec.ExitError); ok && len(e.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(e.Stderr))
	}
	return ""
}
