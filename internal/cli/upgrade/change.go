package upgrade

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"

	apiserverboot "github.com/apiserver-boot/apiserver-boot"
	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/gomod"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// Change is everything upgrade writes, decided before anything is.
type Change struct {
	files       []File
	goMod       []byte // nil: unchanged
	goSum       []byte
	modChanges  []string
	record      []byte // PROJECT; nil: unchanged
	oldCLI, cli string
	notes       []string
}

// Conflicts lists the files left with conflict markers.
func (u *Change) Conflicts() []string {
	var out []string
	for _, f := range u.files {
		if f.Action == Conflict {
			out = append(out, f.Path)
		}
	}
	return out
}

// Writes are the files upgrade writes, under root.
func (u *Change) Writes(root string) []files.File {
	var out []files.File
	add := func(p string, b []byte) {
		out = append(out, files.File{Path: filepath.Join(root, filepath.FromSlash(p)), Content: b})
	}
	for _, f := range u.files {
		if f.Action.Writes() {
			add(f.Path, f.Content)
		}
	}
	if u.goMod != nil {
		add("go.mod", u.goMod)
		add("go.sum", u.goSum)
	}
	if u.record != nil {
		add(project.FileName, u.record)
	}
	return out
}

// Prepare replays the scaffold of the project at root (p and api as the
// command read them) with the old apiserver-boot and this one, and decides
// every file, go.mod and PROJECT; it writes nothing. fromCLI is the old
// apiserver-boot binary (--from-cli), or "" for the release PROJECT records
// as cliVersion, installed with go install.
func Prepare(root string, p *project.Project, api *model.API, fromCLI string) (*Change, error) {
	u := &Change{cli: "apiserver-boot " + version.Get().String()}
	header, err := os.ReadFile(filepath.Join(root, project.BoilerplateFile))
	if err != nil {
		return nil, fmt.Errorf("reading the license header: %w", err)
	}
	steps := replaySteps(p, api, licenseOf(header))
	tmp, err := os.MkdirTemp("", "apiserver-boot-upgrade-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	newDir, oldDir, bin := filepath.Join(tmp, "new"), filepath.Join(tmp, "old"), filepath.Join(tmp, "bin")
	for _, d := range []string{newDir, oldDir, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := replayInProcess(newDir, steps); err != nil {
		return nil, err
	}
	theirs, err := scaffoldFiles(newDir, header)
	if err != nil {
		return nil, err
	}
	old := fromCLI
	switch {
	case old != "":
		if abs, err := filepath.Abs(old); err == nil {
			old = abs
		}
		if st, err := os.Stat(old); err != nil || st.IsDir() {
			return nil, fmt.Errorf("--from-cli %s: not an apiserver-boot binary (%v)", fromCLI, err)
		}
		u.oldCLI = old
	case p.CLIVersion != "" && p.CLIVersion == releaseVersion():
		u.oldCLI = "apiserver-boot " + p.CLIVersion + " (this one)"
	case semver.IsValid(p.CLIVersion):
		if old, err = installRelease(p.CLIVersion, bin); err != nil {
			return nil, err
		}
		u.oldCLI = "apiserver-boot " + p.CLIVersion
	case p.CLIVersion != "":
		return nil, fmt.Errorf("PROJECT's cliVersion %q is not a release (vMAJOR.MINOR.PATCH) go install can fetch: pass --from-cli PATH, the apiserver-boot binary that made the project", p.CLIVersion)
	default:
		return nil, errNoOldCLI
	}
	base := theirs
	if old != "" {
		if u.notes, err = replayWithCLI(old, oldDir, p.Module, steps); err != nil {
			return nil, err
		}
		if base, err = scaffoldFiles(oldDir, header); err != nil {
			return nil, err
		}
	}
	if u.files, err = Plan(root, base, theirs); err != nil {
		return nil, err
	}
	if err := u.planGoMod(root, p); err != nil {
		return nil, err
	}
	return u, u.planRecord(root)
}

// Target names the apiserver-boot the project is upgraded to: this one.
func (u *Change) Target() string { return u.cli }

// planGoMod merges this apiserver-boot's requirements into go.mod (never
// lowering one) and its sums into go.sum, when that changes a requirement.
func (u *Change) planGoMod(root string, p *project.Project) error {
	existing, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return err
	}
	merged, err := gomod.Merge(existing, apiserverboot.GoMod, p.Module, root, version.Get())
	if err != nil {
		return err
	}
	if u.modChanges, err = modChanges(existing, merged); err != nil || len(u.modChanges) == 0 {
		return err
	}
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	u.goMod, u.goSum = merged, gomod.MergeSum(sum, apiserverboot.GoSum)
	return nil
}

// planRecord rewrites PROJECT in today's format, recording this
// apiserver-boot's release.
func (u *Change) planRecord(root string) error {
	p, err := project.Load(root)
	if err != nil {
		return err
	}
	p.CLIVersion = releaseVersion()
	b, err := p.Marshal()
	if err != nil {
		return err
	}
	if old, _ := os.ReadFile(filepath.Join(root, project.FileName)); !bytes.Equal(old, b) {
		u.record = b
	}
	return nil
}

// releaseVersion is this apiserver-boot's release, or "" when it was built
// from source (PROJECT's cliVersion then records none).
func releaseVersion() string {
	if v := version.Get().Version; semver.IsValid(v) {
		return v
	}
	return ""
}

// modChanges says what differs between two go.mod files: the go version,
// requirements and replacements.
func modChanges(before, after []byte) ([]string, error) {
	a, err := modfile.Parse("go.mod", before, nil)
	if err != nil {
		return nil, fmt.Errorf("go.mod: %w", err)
	}
	b, err := modfile.Parse("go.mod", after, nil)
	if err != nil {
		return nil, err
	}
	var out []string
	if a.Go == nil || a.Go.Version != b.Go.Version {
		from := "none"
		if a.Go != nil {
			from = a.Go.Version
		}
		out = append(out, fmt.Sprintf("go %s -> %s", from, b.Go.Version))
	}
	had := map[string]string{}
	for _, r := range a.Require {
		had[r.Mod.Path] = r.Mod.Version
	}
	indirect := 0
	for _, r := range b.Require {
		v, ok := had[r.Mod.Path]
		switch {
		case ok && v == r.Mod.Version:
		case r.Indirect:
			indirect++
		case !ok:
			out = append(out, fmt.Sprintf("require %s %s (new)", r.Mod.Path, r.Mod.Version))
		default:
			out = append(out, fmt.Sprintf("require %s %s -> %s", r.Mod.Path, v, r.Mod.Version))
		}
	}
	if indirect > 0 {
		out = append(out, fmt.Sprintf("%d indirect requirement(s) added or raised (git diff go.mod)", indirect))
	}
	replaced := map[string]string{}
	for _, r := range a.Replace {
		replaced[r.Old.String()] = r.New.String()
	}
	for _, r := range b.Replace {
		if v := replaced[r.Old.String()]; v != r.New.String() {
			out = append(out, fmt.Sprintf("replace %s => %s (was %q)", r.Old, r.New, v))
		}
	}
	return out, nil
}

// Print writes the plan: one line per file, go.mod's changes, PROJECT's.
func (u *Change) Print(w io.Writer) {
	fmt.Fprintf(w, "Upgrading from %s to %s:\n", u.oldCLI, u.cli)
	for _, n := range u.notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, f := range u.files {
		fmt.Fprintf(w, "  %s\n", f.Describe())
	}
	if u.goMod != nil {
		fmt.Fprintln(w, "  update    go.mod (this apiserver-boot's requirements; none the project raised is lowered):")
		for _, c := range u.modChanges {
			fmt.Fprintf(w, "              %s\n", c)
		}
		fmt.Fprintln(w, "  update    go.sum (this apiserver-boot's sums added)")
	}
	if u.record != nil {
		fmt.Fprintf(w, "  update    %s (today's format, cliVersion %q)\n", project.FileName, releaseVersion())
	}
}
