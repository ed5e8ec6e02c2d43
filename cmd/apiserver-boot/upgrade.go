package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"

	apiserverboot "github.com/apiserver-boot/apiserver-boot"
	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/codegen"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/upgrade"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/gomod"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

type upgradeOptions struct {
	dryRun  bool
	fromCLI string
}

func newUpgradeCommand() *cobra.Command {
	o := &upgradeOptions{}
	cmd := &cobra.Command{
		Use:   "upgrade",
		Short: "Take the project to this apiserver-boot: go.mod, PROJECT, scaffolded files, generated code",
		Long: `upgrade brings a project made by an earlier apiserver-boot to this one, in one
commit-sized change, on a clean git tree:

  go.mod      this apiserver-boot's requirements, never lowering one the project raised
  PROJECT     rewritten in today's format, recording this apiserver-boot (cliVersion)
  scaffold    the project's scaffold is replayed (init, create ...) with the old
              apiserver-boot and with this one, into temporary folders; each file:
                update    you never edited it: today's scaffold replaces it
                merge     you edited it: your edits and the scaffold's changes merged
                          three ways (old scaffold, your file, today's scaffold)
                conflict  both changed the same lines: the file gets conflict
                          markers (diff3 style) and is listed; upgrade exits 1
                add       new in today's scaffold
                keep      unchanged, or your edits over a scaffold that did not change;
                          a scaffolded file you deleted stays deleted
  generate    the code is regenerated, which checks the field number records
              (objects stored in etcd stay readable)

Then, unless files conflict, it runs go build ./... (go.mod is not tidied: tidying
drops requirements the next upgrade would add back) and, when
releases are recorded (api snapshot), their compatibility fixtures
(TestCompatibility). Everything is computed before anything is written; with
--dry-run upgrade prints that plan and writes nothing. A second run has nothing
to do. git diff shows the change; git checkout -- . && git clean -fd undoes it.

The old apiserver-boot is --from-cli, or the release PROJECT records as
cliVersion, installed with go install through your module proxy.`,
		Example: `  apiserver-boot upgrade --dry-run
  apiserver-boot upgrade
  apiserver-boot upgrade --from-cli /tmp/apiserver-boot-old`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd) },
	}
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "Print what upgrade would do to each file, go.mod and PROJECT; write nothing")
	cmd.Flags().StringVar(&o.fromCLI, "from-cli", "", "The apiserver-boot binary that made the project (default: PROJECT's cliVersion, installed with go install)")
	return cmd
}

// upgradePlan is everything upgrade writes, decided before anything is.
type upgradePlan struct {
	files       []upgrade.File
	goMod       []byte // nil: unchanged
	goSum       []byte
	modChanges  []string
	record      []byte // PROJECT; nil: unchanged
	oldCLI, cli string
	notes       []string
}

// conflicts lists the files left with conflict markers.
func (u *upgradePlan) conflicts() []string {
	var out []string
	for _, f := range u.files {
		if f.Action == upgrade.Conflict {
			out = append(out, f.Path)
		}
	}
	return out
}

// writes are the files upgrade writes, under root.
func (u *upgradePlan) writes(root string) []files.File {
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

func (o *upgradeOptions) run(cmd *cobra.Command) error {
	root, p, api, err := loadProject()
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if dirty, err := gitDirty(root); err != nil {
		return err
	} else if len(dirty) > 0 && !o.dryRun {
		return fmt.Errorf("the project has uncommitted changes: commit or stash them first, so that upgrade's changes can be reviewed (git diff) and undone apart from yours:\n  %s", strings.Join(dirty, "\n  "))
	}
	con := newConsole(cmd)
	task := con.Start("Replaying the project's scaffold", "")
	u, err := o.plan(root, p, api)
	task.Done()
	if err != nil {
		return err
	}
	writes := u.writes(root)
	if len(writes) == 0 {
		fmt.Fprintf(out, "Nothing to do: the project is already at %s (go.mod, PROJECT and every scaffolded file).\n", u.cli)
		return nil
	}
	u.print(out)
	if o.dryRun {
		if dirty, _ := gitDirty(root); len(dirty) > 0 {
			fmt.Fprintf(out, "note: the project has uncommitted changes; upgrade without --dry-run refuses to run until they are committed or stashed:\n  %s\n", strings.Join(dirty, "\n  "))
		}
		fmt.Fprintln(out, "--dry-run: nothing written.")
		return nil
	}
	tx := &files.Transaction{}
	if err := tx.Write(writes...); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			err = fmt.Errorf("%w (restoring: %v)", err, rerr)
		}
		return err
	}
	if c := u.conflicts(); len(c) > 0 {
		return fmt.Errorf("%d file(s) have conflicts, marked <<<<<<< (yours) ||||||| (old scaffold) ======= (new scaffold) >>>>>>>; everything else is upgraded:\n  %s\nresolve them, then run `apiserver-boot generate` and `go build ./...` (git checkout -- . && git clean -fd undoes the upgrade)", len(c), strings.Join(c, "\n  "))
	}
	if _, err := codegen.On(con, func(w io.Writer) ([]string, error) {
		return codegen.Files(root, w, generators.GenerateOptions{})
	}); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			return fmt.Errorf("generating code: %w (and restoring the files upgrade wrote failed: %v)", err, rerr)
		}
		return fmt.Errorf("generating code: %w; nothing was upgraded (the files upgrade wrote were restored)", err)
	}
	fmt.Fprintln(out, "generated code regenerated; the field number records and the latest recorded release agree with the types")
	return o.check(root, out)
}

// plan replays the scaffold with the old apiserver-boot and this one and
// decides every file, go.mod and PROJECT.
func (o *upgradeOptions) plan(root string, p *project.Project, api *model.API) (*upgradePlan, error) {
	u := &upgradePlan{cli: "apiserver-boot " + version.Get().String()}
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
	old := o.fromCLI
	switch {
	case old != "":
		if abs, err := filepath.Abs(old); err == nil {
			old = abs
		}
		if st, err := os.Stat(old); err != nil || st.IsDir() {
			return nil, fmt.Errorf("--from-cli %s: not an apiserver-boot binary (%v)", o.fromCLI, err)
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
	if u.files, err = upgrade.Plan(root, base, theirs); err != nil {
		return nil, err
	}
	if err := u.planGoMod(root, p); err != nil {
		return nil, err
	}
	return u, u.planRecord(root)
}

// planGoMod merges this apiserver-boot's requirements into go.mod (never
// lowering one) and its sums into go.sum, when that changes a requirement.
func (u *upgradePlan) planGoMod(root string, p *project.Project) error {
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
func (u *upgradePlan) planRecord(root string) error {
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

// print writes the plan: one line per file, go.mod's changes, PROJECT's.
func (u *upgradePlan) print(w io.Writer) {
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

// runGo runs a go command in the project (a variable: unit tests record
// the commands instead of building).
var runGo = func(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// check runs, after the upgrade is written and generated: go build ./..., and the recorded releases' compatibility
// fixtures. A failure is reported with the upgrade kept for the user to
// finish (git shows and undoes it).
func (o *upgradeOptions) check(root string, out io.Writer) error {
	// go.mod is left as init writes it (every requirement the framework was
	// tested with), not tidied: tidying drops some, which the next upgrade
	// would add back.
	steps := [][]string{{"build", "./..."}}
	if entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(generators.SnapshotsDir))); err == nil && len(entries) > 0 {
		steps = append(steps, []string{"test", "-count=1", "-run", "^TestCompatibility$", "./pkg/apis/"})
	}
	for _, s := range steps {
		if msg, err := runGo(root, s...); err != nil {
			return fmt.Errorf("the upgrade is written, and `go %s` fails: %v\n%s\nfix it, or undo the upgrade with git checkout -- . && git clean -fd", strings.Join(s, " "), err, msg)
		}
		fmt.Fprintf(out, "go %s: ok\n", strings.Join(s, " "))
	}
	fmt.Fprintf(out, "Upgraded to %s. Review with git diff, then commit.\n", "apiserver-boot "+version.Get().String())
	return nil
}

// gitDirty lists the project's uncommitted changes (git status --porcelain,
// untracked files included), or fails when the project is not in git.
func gitDirty(root string) ([]string, error) {
	cmd := exec.Command("git", "status", "--porcelain", "--untracked-files=all", "--", ".")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("upgrade needs the project in git, to show (git diff) and undo what it changes: `git status` in %s: %v %s\n(git init && git add -A && git commit -m 'before upgrade' first)", root, err, strings.TrimSpace(stderr.String()))
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out, nil
}
