package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/apiserver-boot/apiserver-boot/bench/internal/proc"
	"github.com/apiserver-boot/apiserver-boot/generators/protobuf"
	"golang.org/x/mod/modfile"
)

// Items 1 and 2: code generation of sample-apiserver's wardle API.

// wardleProject is the scaffolded project holding the wardle types.
type wardleProject struct {
	dir      string
	sample   string // sample-apiserver in the module cache
	generate bool   // the last forced generate succeeded
	builds   bool
	full     []time.Duration // full generate runs measured so far
}

// modDir returns the module cache folder of path@version, downloading it
// through the module proxy if needed.
func (b *bench) modDir(path, version string) (string, error) {
	out, err := proc.Command(b.ctx, b.tmp, []string{"GOFLAGS=", "GO111MODULE=on"}, "go", "mod", "download", "-json", path+"@"+version)
	if err != nil {
		return "", err
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w: %s", path, version, err, out)
	}
	if m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", path, version, m.Error)
	}
	return m.Dir, nil
}

// hasForce tells whether this apiserver-boot's generate has --force; if not, a
// full run is forced by removing the project's generate cache.
func (b *bench) hasForce() bool {
	out, _ := proc.Command(b.ctx, b.tmp, nil, b.cli, "generate", "--help")
	return strings.Contains(out, "--force")
}

// fullGenerate runs a full (not cached) generate in dir and times it.
func (b *bench) fullGenerate(dir string) (time.Duration, string, error) {
	return b.fullGenerateEnv(dir, nil)
}

// fullGenerateEnv is fullGenerate with env added to the environment.
func (b *bench) fullGenerateEnv(dir string, env []string) (time.Duration, string, error) {
	if b.hasForce() {
		return proc.TimedCommand(b.ctx, dir, env, b.cli, "generate", "--force")
	}
	for _, p := range []string{".cache", filepath.Join(".apiserver-boot", "generate-cache.json")} {
		if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
			return 0, "", err
		}
	}
	return proc.TimedCommand(b.ctx, dir, env, b.cli, "generate")
}

// adaptation is a change to the wardle types for a shape our generator does
// not take, applied only when its failure is seen.
type adaptation struct {
	name    string
	failure *regexp.Regexp // in the output of generate or go build
	apply   func(w *wardleProject) error
}

var adaptations = []adaptation{
	{
		name:    "Fischer is also served in v1beta1 (a copy of the v1alpha1 type, marked +storageversion)",
		failure: regexp.MustCompile(`one storage version per group`),
		apply:   addFischerV1beta1,
	},
	{
		name:    "marker comment blocks joined to the type's doc comment (wardle separates them by a blank line)",
		failure: regexp.MustCompile(`missing method DeepCopyObject`),
		apply: func(w *wardleProject) error {
			files, _ := filepath.Glob(filepath.Join(w.dir, "pkg", "apis", "wardle", "v*", "*_types.go"))
			for _, f := range files {
				if err := editFile(f, joinCommentBlocks); err != nil {
					return err
				}
			}
			return nil
		},
	},
	{
		name:    "constants of the storage version typed by declaration (`FlunderReferenceType ReferenceType = \"Flunder\"`) instead of by conversion (`= ReferenceType(\"Flunder\")`)",
		failure: regexp.MustCompile(`undefined: wardle\.\w+`),
		apply: func(w *wardleProject) error {
			return editFile(w.typesFile("v1beta1"), func(s string) string {
				return typedConst.ReplaceAllString(s, `$1 $2 = "$3"`)
			})
		},
	},
}

var typedConst = regexp.MustCompile(`(?m)^(\s*\w+)\s*=\s*(\w+)\("([^"]*)"\)`)

func (w *wardleProject) typesFile(version string) string {
	return filepath.Join(w.dir, "pkg", "apis", "wardle", version, "wardle_types.go")
}

func editFile(path string, edit func(string) string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(edit(string(b))), 0o644)
}

// wardle scaffolds the wardle project once, puts sample-apiserver's types in
// it and adapts them where generate or go build fails.
func (b *bench) wardle() (*wardleProject, error) {
	if b.wardleProj != nil {
		return b.wardleProj, nil
	}
	sample, err := b.modDir("k8s.io/sample-apiserver", b.k8s)
	if err != nil {
		return nil, err
	}
	w := &wardleProject{dir: filepath.Join(b.tmp, "wardle"), sample: sample}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return nil, err
	}
	b.logf("scaffolding the wardle project")
	for _, args := range [][]string{
		{"init", "repo", "--domain", "example.com", "--module", "example.com/wardle"},
		{"create", "group", "version", "resource", "--group", "wardle", "--version", "v1alpha1", "--kind", "Flunder"},
		{"create", "group", "version", "resource", "--group", "wardle", "--version", "v1alpha1", "--kind", "Fischer", "--non-namespaced"},
		{"create", "group", "version", "resource", "--group", "wardle", "--version", "v1beta1", "--kind", "Flunder"},
	} {
		if _, err := proc.Command(b.ctx, w.dir, nil, b.cli, args...); err != nil {
			return nil, err
		}
	}
	if err := w.copyTypes(); err != nil {
		return nil, err
	}
	b.note("1", "wardle types from %s: v1alpha1 and v1beta1 `types.go` verbatim (as wardle_types.go) with our markers, v1alpha1 `conversion.go` (import path rewritten) and `defaults.go`; the scaffolded types, hooks, types tests, field number records and protobuf code removed", strings.TrimPrefix(sample, filepath.Dir(filepath.Dir(sample))+"/"))

	applied := map[string]bool{}
	for stage := 0; ; stage++ {
		b.logf("wardle stage %d: generate and build", stage)
		d, out, err := b.fullGenerate(w.dir)
		w.generate = err == nil
		failure := ""
		if err != nil {
			failure = out
			b.note("1", "generate on the wardle types (stage %d) failed after %s:\n```\n%s\n```", stage, d.Round(time.Millisecond), proc.Head(strings.TrimSpace(out), 12))
		} else {
			out, err := proc.Command(b.ctx, w.dir, nil, "go", "build", "./...")
			w.builds = err == nil
			if err != nil {
				failure = out
				b.note("1", "generate succeeded (stage %d) but `go build ./...` failed:\n```\n%s\n```", stage, proc.Head(strings.TrimSpace(out), 12))
			}
		}
		if failure == "" {
			if stage == 0 {
				b.note("1", "wardle's types generate and build unchanged")
			} else {
				b.note("1", "after %d adaptation(s), generate and `go build ./...` succeed", stage)
			}
			return w, b.remember(w)
		}
		var next *adaptation
		for i := range adaptations {
			if a := &adaptations[i]; !applied[a.name] && a.failure.MatchString(failure) {
				next = a
				break
			}
		}
		if next == nil {
			b.note("1", "no known adaptation for this failure: stopping here")
			return w, b.remember(w)
		}
		applied[next.name] = true
		b.note("1", "adaptation %d: %s", stage+1, next.name)
		if err := next.apply(w); err != nil {
			return nil, err
		}
	}
}

func (b *bench) remember(w *wardleProject) error {
	b.wardleProj = w
	return nil
}

// copyTypes replaces the scaffolded types with sample-apiserver's and adds our markers.
func (w *wardleProject) copyTypes() error {
	apis := filepath.Join(w.dir, "pkg", "apis", "wardle")
	for _, v := range []string{"v1alpha1", "v1beta1"} {
		// The scaffolded types go, with the field numbers recorded for them and
		// their protobuf code (no object was stored with them): wardle's types
		// bring their own tags.
		files, _ := filepath.Glob(filepath.Join(apis, v, "*"))
		for _, f := range files {
			base := filepath.Base(f)
			if strings.HasSuffix(base, "_types.go") || strings.HasSuffix(base, "_hooks.go") || strings.HasSuffix(base, "_types_test.go") || base == protobuf.FieldNumbersFile || base == "zz_generated.protobuf.go" {
				if err := os.Remove(f); err != nil {
					return err
				}
			}
		}
		src, err := os.ReadFile(filepath.Join(w.sample, "pkg", "apis", "wardle", v, "types.go"))
		if err != nil {
			return err
		}
		s := string(src)
		markers := map[string]string{
			"Flunder": "// +resource:path=flunders,strategy=FlunderStrategy,scope=Namespaced\n",
			"Fischer": "// +resource:path=fischers,strategy=FischerStrategy,scope=Cluster\n",
		}
		if v == "v1beta1" {
			markers["Flunder"] += "// +storageversion\n"
		}
		for kind, m := range markers {
			decl := "\ntype " + kind + " struct {"
			if strings.Contains(s, decl) {
				s = strings.Replace(s, decl, "\n"+m+decl[1:], 1)
			}
		}
		if err := os.WriteFile(w.typesFile(v), []byte(s), 0o644); err != nil {
			return err
		}
	}
	conv, err := os.ReadFile(filepath.Join(w.sample, "pkg", "apis", "wardle", "v1alpha1", "conversion.go"))
	if err != nil {
		return err
	}
	conv = []byte(strings.ReplaceAll(string(conv), `"k8s.io/sample-apiserver/pkg/apis/wardle"`, `"example.com/wardle/pkg/apis/wardle"`))
	if err := os.WriteFile(filepath.Join(apis, "v1alpha1", "conversion.go"), conv, 0o644); err != nil {
		return err
	}
	defaults, err := os.ReadFile(filepath.Join(w.sample, "pkg", "apis", "wardle", "v1alpha1", "defaults.go"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(apis, "v1alpha1", "defaults.go"), defaults, 0o644)
}

// addFischerV1beta1 copies Fischer and FischerList, with the comments above
// them, from v1alpha1 to a new v1beta1 file and marks v1beta1 Fischer the storage version.
func addFischerV1beta1(w *wardleProject) error {
	b, err := os.ReadFile(w.typesFile("v1alpha1"))
	if err != nil {
		return err
	}
	lines := strings.Split(string(b), "\n")
	var out []string
	for _, kind := range []string{"Fischer", "FischerList"} {
		start, end := -1, -1
		for i, l := range lines {
			if l == "type "+kind+" struct {" {
				start = i
				for end = i; lines[end] != "}"; end++ {
				}
				break
			}
		}
		if start < 0 {
			return fmt.Errorf("no type %s in %s", kind, w.typesFile("v1alpha1"))
		}
		// The comment lines above, across blank lines, up to the previous declaration.
		for start > 0 && (strings.HasPrefix(lines[start-1], "//") || lines[start-1] == "") {
			start--
		}
		decl := append([]string{}, lines[start:end+1]...)
		if kind == "Fischer" {
			for i, l := range decl {
				if strings.HasPrefix(l, "// +resource:") {
					decl = append(decl[:i+1], append([]string{"// +storageversion"}, decl[i+1:]...)...)
					break
				}
			}
		}
		out = append(out, decl...)
	}
	src := "package v1beta1\n\nimport metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n" + strings.Join(out, "\n") + "\n"
	return os.WriteFile(filepath.Join(filepath.Dir(w.typesFile("v1beta1")), "fischer_types.go"), []byte(src), 0o644)
}

// joinCommentBlocks removes blank lines between comment blocks directly
// above a type declaration, so that they all become its doc comment.
func joinCommentBlocks(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if !strings.HasPrefix(lines[i], "type ") {
			continue
		}
		for j := i - 1; j > 0; j-- {
			if strings.HasPrefix(lines[j], "//") {
				continue
			}
			if lines[j] == "" && strings.HasPrefix(lines[j-1], "//") {
				lines = append(lines[:j], lines[j+1:]...)
				continue
			}
			break
		}
	}
	return strings.Join(lines, "\n")
}

// codegen is item 1.
func (b *bench) codegen() error {
	w, err := b.wardle()
	if err != nil {
		return err
	}
	if !w.generate {
		b.add(row{Item: "1", Measure: "generate, wardle API (full run)", Value: "generate fails (notes)", Ref: "-", Ratio: "-", Target: "≥5x faster", Met: "no"})
		return nil
	}
	c, err := b.codegenSetup(w)
	if err != nil {
		return err
	}
	if err := b.codegenRuns(w, c); err != nil {
		return err
	}
	w.full = append(w.full, c.ours...)
	b.logf("go build ./... in both trees")
	_, c.oursBuildErr = proc.Command(b.ctx, w.dir, nil, "go", "build", "./...")
	_, c.theirsBuildErr = proc.Command(b.ctx, c.sample, nil, "go", "build", "./...")
	b.reportCodegen(c)
	return nil
}

// codegenRun is item 1's comparison: apiserver-boot on the wardle project
// (with the go/packages driver's cache warm and cold) against
// sample-apiserver's own codegen on a writable copy of its tree.
type codegenRun struct {
	sample, gocache              string
	kc                           *kubeCodegen
	scriptEnv                    []string
	ours, theirs, cold           []time.Duration
	coldErr                      error
	oursBuildErr, theirsBuildErr error
}

// codegenSetup copies sample-apiserver to a writable folder and installs
// kube_codegen.sh's generators.
func (b *bench) codegenSetup(w *wardleProject) (*codegenRun, error) {
	c := &codegenRun{sample: filepath.Join(b.tmp, "sample-apiserver")}
	if _, err := proc.Command(b.ctx, b.tmp, nil, "cp", "-r", w.sample, c.sample); err != nil {
		return nil, err
	}
	if _, err := proc.Command(b.ctx, b.tmp, nil, "chmod", "-R", "u+w", c.sample); err != nil {
		return nil, err
	}
	kc, err := b.kubeCodegen(w.sample)
	if err != nil {
		return nil, err
	}
	c.kc = kc
	viol := filepath.Join(b.tmp, "api-violations")
	if err := os.MkdirAll(viol, 0o755); err != nil {
		return nil, err
	}
	c.scriptEnv = kc.scriptEnv(viol)
	// The cold runs move only the go/packages driver's cache of bodyless
	// files (os.UserCacheDir, i.e. XDG_CACHE_HOME) to a fresh folder; Go's
	// build cache, whose default also lives there, stays where it is.
	gocache, err := proc.Command(b.ctx, b.tmp, nil, "go", "env", "GOCACHE")
	if err != nil {
		return nil, err
	}
	c.gocache = strings.TrimSpace(gocache)
	return c, nil
}

// codegenRuns alternates the two so that both see the same contention.
func (b *bench) codegenRuns(w *wardleProject, c *codegenRun) error {
	for i := 0; i < b.runs; i++ {
		b.logf("run %d/%d: apiserver-boot generate --force", i+1, b.runs)
		d, _, err := b.fullGenerate(w.dir)
		if err != nil {
			return err
		}
		c.ours = append(c.ours, d)
		b.logf("run %d/%d: sample-apiserver hack/update-codegen.sh", i+1, b.runs)
		d, _, err = proc.TimedCommand(b.ctx, c.sample, c.scriptEnv, "bash", "hack/update-codegen.sh")
		if err != nil {
			return err
		}
		c.theirs = append(c.theirs, d)
		b.logf("run %d/%d: apiserver-boot generate --force, driver cache cold", i+1, b.runs)
		xdg := filepath.Join(b.tmp, fmt.Sprintf("xdg-cache-%d", i))
		if err := os.MkdirAll(xdg, 0o755); err != nil {
			return err
		}
		if c.coldErr == nil {
			d, _, c.coldErr = b.fullGenerateEnv(w.dir, []string{"XDG_CACHE_HOME=" + xdg, "GOCACHE=" + c.gocache})
			if c.coldErr == nil {
				c.cold = append(c.cold, d)
			}
		}
	}
	return nil
}

// reportCodegen adds item 1's rows and notes.
func (b *bench) reportCodegen(c *codegenRun) {
	mo, mt := median(c.ours), median(c.theirs)
	b.add(row{Item: "1", Measure: "full generate, wardle API", Value: secs(mo), Ref: secs(mt) + " (kube_codegen.sh)",
		Ratio: fmt.Sprintf("%.2f (%.1fx faster)", ratio(mo, mt), ratio(mt, mo)), Target: "≥5x faster", Met: yesNo(mt >= 5*mo)})
	if c.coldErr != nil {
		b.add(row{Item: "1", Measure: "full generate, wardle API, driver cache cold", Value: "failed (notes)", Ref: secs(mo) + " (warm driver cache)", Ratio: "-"})
		b.note("1", "generate with a cold driver cache failed:\n```\n%s\n```", proc.Head(c.coldErr.Error(), 12))
	} else {
		mc := median(c.cold)
		b.add(row{Item: "1", Measure: "full generate, wardle API, driver cache cold", Value: secs(mc), Ref: secs(mo) + " (warm driver cache)",
			Ratio: fmt.Sprintf("%.2f", ratio(mc, mo))})
	}
	b.add(row{Item: "1", Measure: "kube_codegen.sh generator install (one time, excluded above)", Value: "-",
		Ref: fmt.Sprintf("%s (%d of 9 binaries were already installed)", secs(c.kc.install), c.kc.present), Ratio: "-"})
	b.add(row{Item: "1", Measure: "`go build ./...` after generation", Value: okText(c.oursBuildErr), Ref: okText(c.theirsBuildErr), Ratio: "-", Target: "both build", Met: yesNo(c.oursBuildErr == nil && c.theirsBuildErr == nil)})
	b.note("1", "apiserver-boot runs: %s; kube_codegen.sh runs: %s; apiserver-boot runs with a cold driver cache: %s (XDG_CACHE_HOME a fresh folder per run, GOCACHE pinned to %s)", durations(c.ours), durations(c.theirs), durations(c.cold), c.gocache)
	if c.oursBuildErr != nil {
		b.note("1", "apiserver-boot's wardle project does not build:\n```\n%s\n```", proc.Head(c.oursBuildErr.Error(), 12))
	}
	if c.theirsBuildErr != nil {
		b.note("1", "sample-apiserver does not build after kube_codegen.sh:\n```\n%s\n```", proc.Head(c.theirsBuildErr.Error(), 12))
	}
}

// kubeCodegen is k8s.io/code-generator's kube_codegen.sh, in the version
// sample-apiserver pins, with its generators installed (items 1 and 7).
type kubeCodegen struct {
	dir     string        // code-generator in the module cache
	env     []string      // GOBIN and GOFLAGS for the script and its go install
	tmp     string        // TMPDIR of the script
	install time.Duration // the one-time install of the generators
	present int           // generators already installed before
}

// kubeCodegen installs kube_codegen.sh's generators once per bench run.
func (b *bench) kubeCodegen(sample string) (*kubeCodegen, error) {
	if b.kcg != nil {
		return b.kcg, nil
	}
	saMod, err := os.ReadFile(filepath.Join(sample, "go.mod"))
	if err != nil {
		return nil, err
	}
	mf, err := modfile.ParseLax("go.mod", saMod, nil)
	if err != nil {
		return nil, err
	}
	cgVersion := ""
	for _, r := range mf.Require {
		if r.Mod.Path == "k8s.io/code-generator" {
			cgVersion = r.Mod.Version
		}
	}
	if cgVersion == "" {
		return nil, fmt.Errorf("sample-apiserver's go.mod does not require k8s.io/code-generator")
	}
	cg, err := b.modDir("k8s.io/code-generator", cgVersion)
	if err != nil {
		return nil, err
	}
	// kube_codegen.sh installs its generators into GOBIN, running go install
	// inside the module cache: -modcacherw. A GOBIN of our own keeps
	// ~/go/bin untouched and makes the install one-time across bench runs.
	gobin := filepath.Join(b.repo, ".cache", "bench", "gobin")
	if err := os.MkdirAll(gobin, 0o755); err != nil {
		return nil, err
	}
	bins := []string{"conversion-gen", "deepcopy-gen", "defaulter-gen", "validation-gen", "applyconfiguration-gen", "client-gen", "lister-gen", "informer-gen"}
	present := 0
	for _, bin := range append(bins, "openapi-gen") {
		if _, err := os.Stat(filepath.Join(gobin, bin)); err == nil {
			present++
		}
	}
	env := []string{"GOBIN=" + gobin, b.goflags("-modcacherw")}
	b.logf("installing kube_codegen.sh's generators (%d of 9 already in %s)", present, gobin)
	var pkgs []string
	for _, bin := range bins {
		pkgs = append(pkgs, "k8s.io/code-generator/cmd/"+bin)
	}
	install, _, err := proc.TimedCommand(b.ctx, cg, env, "go", append([]string{"install"}, pkgs...)...)
	if err != nil {
		return nil, err
	}
	d, _, err := proc.TimedCommand(b.ctx, cg, env, "go", "install", "k8s.io/kube-openapi/cmd/openapi-gen")
	if err != nil {
		return nil, err
	}
	install += d
	// kube_codegen.sh leaves mktemp files behind: keep them in the bench's folder.
	scriptTmp := filepath.Join(b.tmp, "codegen-tmp")
	if err := os.MkdirAll(scriptTmp, 0o755); err != nil {
		return nil, err
	}
	b.kcg = &kubeCodegen{dir: cg, env: env, tmp: scriptTmp, install: install, present: present}
	return b.kcg, nil
}

// scriptEnv is the environment of a sample-apiserver style
// hack/update-codegen.sh: the known API rule violations are written to
// violDir (updated, not diffed).
func (kc *kubeCodegen) scriptEnv(violDir string) []string {
	return append(append([]string{}, kc.env...), "CODEGEN_PKG="+kc.dir, "API_KNOWN_VIOLATIONS_DIR="+violDir, "UPDATE_API_KNOWN_VIOLATIONS=true", "TMPDIR="+kc.tmp)
}

// noop is item 2.
func (b *bench) noop() error {
	w, err := b.wardle()
	if err != nil {
		return err
	}
	if !w.generate {
		b.add(row{Item: "2", Measure: "no-op generate", Value: "generate fails (item 1 notes)", Ref: "-", Ratio: "-", Target: "< 0.5 s", Met: "no"})
		return nil
	}
	for len(w.full) < b.runs {
		d, _, err := b.fullGenerate(w.dir)
		if err != nil {
			return err
		}
		w.full = append(w.full, d)
	}
	// Fill the cache, then time runs with nothing changed.
	if _, err := proc.Command(b.ctx, w.dir, nil, b.cli, "generate"); err != nil {
		return err
	}
	var noops []time.Duration
	var last string
	for i := 0; i < max(b.runs, 5); i++ {
		d, out, err := proc.TimedCommand(b.ctx, w.dir, nil, b.cli, "generate")
		if err != nil {
			return err
		}
		noops = append(noops, d)
		last = out
	}
	mn, mf := median(noops), median(w.full)
	b.add(row{Item: "2", Measure: "no-op generate, wardle API", Value: secs(mn), Ref: secs(mf) + " (full run)",
		Ratio: fmt.Sprintf("%.3f", ratio(mn, mf)), Target: "< 0.5 s", Met: yesNo(mn < 500*time.Millisecond)})
	b.note("2", "no-op runs: %s (full runs: %s); a no-op run prints: %q", durations(noops), durations(w.full), lastLine(last))
	return nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration{}, ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func secs(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.3f s", d.Seconds())
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func durations(ds []time.Duration) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, secs(d))
	}
	return strings.Join(parts, ", ")
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

func okText(err error) string {
	if err == nil {
		return "builds"
	}
	return "FAILS (notes)"
}
