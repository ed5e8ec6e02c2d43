package upgrade

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/scaffold"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// replayStep is one command of a project's scaffold: the command line an
// apiserver-boot binary runs (args), and the same scaffold in process (do,
// on the replay folder's project and API as they are).
type replayStep struct {
	args []string
	do   func(dir string, p *project.Project, api *model.API) (*scaffold.Plan, error)
}

// replaySteps are the commands that scaffold the project p records (api its
// API as read from its source): init repo, then for each kind create group
// version resource in its first version (the one with the controller, else
// its storage version) with the names, scope and subresources its markers
// say, create version --from it for the other versions, its custom
// subresources, and create controller for each built-in kind with one.
// Which version of a kind was created first is not recorded; these choices
// give the files the kind's scaffold wrote.
func replaySteps(p *project.Project, api *model.API, license string) []replayStep {
	steps := []replayStep{{
		args: []string{"init", "repo", "--domain", p.Domain, "--license", license},
		do: func(dir string, _ *project.Project, _ *model.API) (*scaffold.Plan, error) {
			return scaffold.Repo(dir, scaffold.RepoOptions{Domain: p.Domain, Module: p.Module, License: license, GoMod: replayGoMod(p.Module), Year: time.Now().Year()})
		},
	}}
	type kindKey struct{ group, kind string }
	versions := map[kindKey][]*project.Resource{}
	var kinds []kindKey
	for _, r := range p.Resources {
		if r.External {
			continue
		}
		k := kindKey{r.Group, r.Kind}
		if versions[k] == nil {
			kinds = append(kinds, k)
		}
		versions[k] = append(versions[k], r)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if kinds[i].group != kinds[j].group {
			return kinds[i].group < kinds[j].group
		}
		return kinds[i].kind < kinds[j].kind
	})
	for _, k := range kinds {
		rs := versions[k]
		groupFlag := k.group
		if _, ok := p.Groups[k.group]; ok {
			groupFlag = p.FullGroup(k.group)
		}
		first := firstVersion(api, rs)
		steps = append(steps, createStep(groupFlag, first))
		var rest []*project.Resource
		for _, r := range rs {
			if r != first {
				rest = append(rest, r)
			}
		}
		sort.Slice(rest, func(i, j int) bool { return project.MorePreferred(rest[j].Version, rest[i].Version) })
		for _, r := range rest {
			steps = append(steps, versionStep(groupFlag, first, r))
		}
		if g := api.Group(k.group); g != nil && g.Kind(k.kind) != nil {
			for _, sub := range g.Kind(k.kind).Subresources {
				steps = append(steps, subresourceStep(groupFlag, first, sub.Path))
			}
		}
	}
	for _, r := range p.Resources {
		if r.External && r.Controller {
			steps = append(steps, controllerStep(r))
		}
	}
	return steps
}

// firstVersion is the version of a kind that create group version resource
// made: the one with the controller, else the storage version, else the
// most preferred.
func firstVersion(api *model.API, rs []*project.Resource) *project.Resource {
	for _, r := range rs {
		if r.Controller {
			return r
		}
	}
	if g := api.Group(rs[0].Group); g != nil && g.Kind(rs[0].Kind) != nil {
		for _, r := range rs {
			if r.Version == g.Kind(rs[0].Kind).StorageVersion {
				return r
			}
		}
	}
	best := rs[0]
	for _, r := range rs[1:] {
		if project.MorePreferred(r.Version, best.Version) {
			best = r
		}
	}
	return best
}

func createStep(groupFlag string, r *project.Resource) replayStep {
	o := scaffold.CreateOptions{
		Level: scaffold.LevelResource, Group: groupFlag, Version: r.Version, Kind: r.Kind,
		NonNamespaced: r.Scope == project.Cluster, Status: r.HasSubresource("status"), Scale: r.HasSubresource("scale"), Controller: r.Controller,
	}
	args := []string{"create", "group", "version", "resource", "--group", groupFlag, "--version", r.Version, "--kind", r.Kind}
	given := map[string]bool{}
	flag := func(name, value string) {
		args = append(args, "--"+name+"="+value)
		given[name] = true
	}
	if r.Plural != "" && r.Plural != project.Plural(r.Kind) {
		o.Plural = r.Plural
		flag("resource", r.Plural)
	}
	if r.Singular != "" && r.Singular != project.Singular(r.Kind) {
		o.Singular = r.Singular
		flag("singular", r.Singular)
	}
	if len(r.ShortNames) > 0 {
		o.ShortNames = r.ShortNames
		flag("short-names", strings.Join(r.ShortNames, ","))
	}
	if len(r.Categories) > 0 {
		o.Categories = r.Categories
		flag("categories", strings.Join(r.Categories, ","))
	}
	if o.NonNamespaced {
		flag("non-namespaced", "true")
	}
	if !o.Status {
		flag("with-status-subresource", "false")
	}
	if o.Scale {
		flag("with-scale-subresource", "true")
	}
	if !o.Controller {
		flag("controller", "false")
	}
	o.Given = func(name string) bool { return given[name] }
	return replayStep{args: args, do: func(dir string, p *project.Project, api *model.API) (*scaffold.Plan, error) {
		return scaffold.Create(dir, p, api, o)
	}}
}

func versionStep(groupFlag string, from, r *project.Resource) replayStep {
	return replayStep{
		args: []string{"create", "version", "--group", groupFlag, "--version", r.Version, "--kind", r.Kind, "--from", from.Version},
		do: func(dir string, p *project.Project, api *model.API) (*scaffold.Plan, error) {
			f := p.Find(from.Group, from.Version, from.Kind)
			if f == nil {
				return nil, fmt.Errorf("replaying the scaffold: no %s/%s %s to copy", from.Group, from.Version, from.Kind)
			}
			return scaffold.Version(dir, p, api, f, r.Version)
		},
	}
}

func subresourceStep(groupFlag string, r *project.Resource, name string) replayStep {
	return replayStep{
		args: []string{"create", "subresource", "--subresource", name, "--group", groupFlag, "--version", r.Version, "--kind", r.Kind},
		do: func(dir string, p *project.Project, api *model.API) (*scaffold.Plan, error) {
			in := p.Find(r.Group, r.Version, r.Kind)
			if in == nil {
				return nil, fmt.Errorf("replaying the scaffold: no %s/%s %s", r.Group, r.Version, r.Kind)
			}
			return scaffold.Subresource(dir, p, api, in, name, nil)
		},
	}
}

func controllerStep(r *project.Resource) replayStep {
	return replayStep{
		args: []string{"create", "controller", "--group", r.Group, "--version", r.Version, "--kind", r.Kind},
		do: func(dir string, p *project.Project, _ *model.API) (*scaffold.Plan, error) {
			return scaffold.Controller(dir, p, r.Group, r.Version, r.Kind)
		},
	}
}

// replayGoMod is the go.mod a replay starts from, as `go mod init` writes it.
func replayGoMod(module string) []byte { return []byte("module " + module + "\n") }

// replayInProcess scaffolds the steps into dir with this apiserver-boot's
// scaffold, without generating code.
func replayInProcess(dir string, steps []replayStep) error {
	for _, s := range steps {
		var p *project.Project
		var api *model.API
		if len(s.args) > 0 && s.args[0] != "init" {
			var err error
			if p, err = project.Load(dir); err != nil {
				return err
			}
			if api, err = model.LoadAPI(dir, p, version.Module, ""); err != nil {
				return err
			}
			api.Describe(p)
		}
		plan, err := s.do(dir, p, api)
		if err != nil {
			return fmt.Errorf("replaying `apiserver-boot %s` with this apiserver-boot: %w", strings.Join(s.args, " "), err)
		}
		if _, err := plan.Apply(); err != nil {
			return fmt.Errorf("replaying `apiserver-boot %s` with this apiserver-boot: %w", strings.Join(s.args, " "), err)
		}
	}
	return nil
}

// replayWithCLI runs the steps with the apiserver-boot binary cli in dir,
// leaving out the flags it does not know (said in the returned notes), as
// an earlier apiserver-boot lacks some. Each of its commands may generate
// code, as that apiserver-boot did.
func replayWithCLI(cli, dir, module string, steps []replayStep) ([]string, error) {
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), replayGoMod(module), 0o644); err != nil {
		return nil, err
	}
	known := map[string]map[string]bool{}
	flagsOf := func(args []string) (map[string]bool, error) {
		var cmdPath []string
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				break
			}
			cmdPath = append(cmdPath, a)
		}
		key := strings.Join(cmdPath, " ")
		if f, ok := known[key]; ok {
			return f, nil
		}
		out, err := exec.Command(cli, append(cmdPath, "--help")...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("--from-cli %s: `%s --help`: %v\n%s", cli, key, err, out)
		}
		f := map[string]bool{}
		for _, m := range regexp.MustCompile(`--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(string(out), -1) {
			f[m[1]] = true
		}
		known[key] = f
		return f, nil
	}
	var notes []string
	for _, s := range steps {
		flags, err := flagsOf(s.args)
		if err != nil {
			return nil, err
		}
		var args []string
		for i := 0; i < len(s.args); i++ {
			a := s.args[i]
			if !strings.HasPrefix(a, "--") {
				args = append(args, a)
				continue
			}
			name, _, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if !flags[name] {
				notes = append(notes, fmt.Sprintf("the old apiserver-boot has no --%s: left out of `%s`", name, strings.Join(s.args, " ")))
				if !hasValue && i+1 < len(s.args) {
					i++
				}
				continue
			}
			args = append(args, a)
		}
		cmd := exec.Command(cli, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("replaying the project's scaffold with the old apiserver-boot (%s): `apiserver-boot %s` failed: %v\n%s", cli, strings.Join(args, " "), err, out)
		}
	}
	return notes, nil
}

// scaffoldFiles reads the scaffolded files of a replay in dir, by slash
// path: not go.mod, go.sum and PROJECT (upgrade merges those itself), nor
// what generate writes (files saying "Code generated ... DO NOT EDIT.", the
// field number records, the recorded releases, the local state). The
// replay's license header (header, as init wrote it there) is replaced by
// the project's (want) wherever it appears.
func scaffoldFiles(dir string, want []byte) (map[string][]byte, error) {
	header, err := os.ReadFile(filepath.Join(dir, project.BoilerplateFile))
	if err != nil {
		return nil, fmt.Errorf("the replayed scaffold: %w", err)
	}
	out := map[string][]byte{}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" || rel == ".apiserver-boot" || rel == "bin" || rel == generators.SnapshotsDir {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || slices.Contains([]string{"go.mod", "go.sum", project.FileName, "kubeconfig"}, rel) ||
			strings.HasPrefix(d.Name(), "zz_generated") || d.Name() == "fieldnumbers.yaml" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if files.IsGenerated(b) {
			return nil
		}
		if len(bytes.TrimSpace(header)) > 0 && !bytes.Equal(header, want) {
			b = bytes.ReplaceAll(b, header, want)
		}
		out[rel] = b
		return nil
	})
	return out, err
}

// licenseOf is the init repo --license of a project's header: none for an
// empty one, else apache2 (the header itself replaces the replay's).
func licenseOf(header []byte) string {
	if len(bytes.TrimSpace(header)) == 0 {
		return "none"
	}
	return "apache2"
}

// errNoOldCLI is returned when neither --from-cli nor PROJECT's cliVersion
// says which apiserver-boot made the project.
var errNoOldCLI = errors.New("PROJECT records no cliVersion (the project was made by an apiserver-boot built from source, or before releases): pass --from-cli PATH, the apiserver-boot binary that made the project (or last upgraded it), e.g. built from its commit with `git -C <apiserver-boot checkout> worktree add /tmp/old <commit> && (cd /tmp/old && go build -o /tmp/apiserver-boot-old ./cmd/apiserver-boot)`")

// installRelease installs apiserver-boot at release into bin through the
// user's module proxy and returns the binary.
func installRelease(release, bin string) (string, error) {
	cmd := exec.Command("go", "install", version.Module+"/cmd/apiserver-boot@"+release)
	cmd.Dir = bin
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("installing apiserver-boot %s (PROJECT's cliVersion), the one that made the project: %v\n%s\npass --from-cli PATH, an apiserver-boot %s binary, instead", release, err, out, release)
	}
	return filepath.Join(bin, "apiserver-boot"), nil
}
