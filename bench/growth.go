package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apiserver-boot/apiserver-boot/bench/internal/proc"
)

// Item 7: how code generation grows with the number of kinds, against
// kube_codegen.sh on the same types.

// growthSize is one API surface: groups × versions × kinds per version.
type growthSize struct {
	groups, versions, perVersion int
}

func (s growthSize) kinds() int { return s.groups * s.versions * s.perVersion }

var growthSizes = []growthSize{{1, 1, 1}, {5, 2, 1}, {5, 2, 5}}

var (
	growthGroups   = []string{"fleet", "billing", "storage", "network", "audit"}
	growthVersions = []string{"v1", "v2"}
	growthNouns    = []string{"Widget", "Gadget", "Gizmo", "Sprocket", "Lever"}
)

// growthKind is the kind's name: unique across groups, since a project has
// one controller per kind name.
func growthKind(group string, i int) string {
	return strings.ToUpper(group[:1]) + group[1:] + growthNouns[i]
}

// growthTree is the same API surface as an apiserver-boot project and as a
// sample-apiserver style tree for kube_codegen.sh.
type growthTree struct {
	size    growthSize
	module  string
	boot    string // apiserver-boot project
	kube    string // the kube_codegen.sh tree
	viol    string // its API rule violations report
	setup   time.Duration
	bootErr error // setup or generate of the apiserver-boot project failed
	kubeErr error // setup or kube_codegen.sh failed
	ours    []time.Duration
	theirs  []time.Duration
	buildOK [2]error // go build ./... of the two trees
	creates int
	// lastCreate is how long the last create took (it ends with a generate).
	lastCreate time.Duration
}

// growthSpecFields are the fields item 7 adds to the spec of each
// scaffolded kind, after its Replicas: six of other shapes.
func growthSpecFields(kind string) string {
	return strings.NewReplacer("KIND", kind).Replace(`	// Image is the container image to run.
	Image string ` + "`json:\"image\"`" + `
	// Description is free text for humans.
	// +optional
	Description string ` + "`json:\"description,omitempty\"`" + `
	// Args are passed to the entrypoint.
	// +optional
	// +listType=atomic
	Args []string ` + "`json:\"args,omitempty\"`" + `
	// Labels are copied to the objects the KIND owns.
	// +optional
	Labels map[string]string ` + "`json:\"labels,omitempty\"`" + `
	// Endpoint is where the KIND is reachable.
	// +optional
	Endpoint KINDEndpoint ` + "`json:\"endpoint,omitempty\"`" + `
	// TimeoutSeconds bounds each attempt; unset means no bound.
	// +optional
	TimeoutSeconds *int64 ` + "`json:\"timeoutSeconds,omitempty\"`" + `
`)
}

// growthEndpoint is the type of the spec's nested field.
func growthEndpoint(kind string) string {
	return strings.NewReplacer("KIND", kind).Replace(`// KINDEndpoint is a network endpoint of a KIND.
type KINDEndpoint struct {
	// Host is a DNS name or an IP address.
	Host string ` + "`json:\"host\"`" + `
	// Port is the TCP port.
	Port int32 ` + "`json:\"port\"`" + `
	// Path is the URL path, if any.
	// +optional
	Path *string ` + "`json:\"path,omitempty\"`" + `
}
`)
}

// growthEdit makes a scaffolded kind item 7's: the spec's added fields and
// their nested type, and the status's conditions a map list keyed by type.
func growthEdit(path, kind string) error {
	k, err := readKind(path)
	if err != nil {
		return err
	}
	if err := k.addFields(kind+"Spec", growthSpecFields(kind)); err != nil {
		return err
	}
	if err := k.addDecl(kind+"Spec", growthEndpoint(kind)); err != nil {
		return err
	}
	if err := k.addFieldMarkers(kind+"Status", "Conditions", "+listType=map", "+listMapKey=type"); err != nil {
		return err
	}
	return k.write()
}

// each calls f for every group, version and kind of the size, the versions
// of a group in order.
func (s growthSize) each(f func(group, version, kind string) error) error {
	for _, g := range growthGroups[:s.groups] {
		for _, v := range growthVersions[:s.versions] {
			for i := 0; i < s.perVersion; i++ {
				if err := f(g, v, growthKind(g, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// growthBoot scaffolds the apiserver-boot project: init repo, then one
// `create group version resource` per kind and version (each ends with a
// generate, as for a user), then each scaffolded <kind>_types.go edited by
// growthEdit.
func (b *bench) growthBoot(t *growthTree) error {
	if err := os.MkdirAll(t.boot, 0o755); err != nil {
		return err
	}
	if _, err := proc.Command(b.ctx, t.boot, nil, b.cli, "init", "repo", "--domain", "example.com", "--module", t.module); err != nil {
		return err
	}
	err := t.size.each(func(g, v, kind string) error {
		t.creates++
		d, _, err := proc.TimedCommand(b.ctx, t.boot, nil, b.cli, "create", "group", "version", "resource", "--group", g, "--version", v, "--kind", kind)
		t.lastCreate = d
		return err
	})
	if err != nil {
		return err
	}
	return t.size.each(func(g, v, kind string) error {
		return growthEdit(kindTypesFile(t.boot, g, v, kind), kind)
	})
}

// growthKube writes the same types as a sample-apiserver style tree: its
// go.mod, go.sum, hack/update-codegen.sh and models-schema command with the
// module path changed, an internal version per group and the versioned
// types: each kind's types file of the apiserver-boot project, edited, with
// the tags sample-apiserver's types carry instead of apiserver-boot's.
func (b *bench) growthKube(t *growthTree, sample string) error {
	for _, f := range []string{"go.mod", "go.sum", "hack/boilerplate.go.txt", "hack/update-codegen.sh", "pkg/generated/openapi/cmd/models-schema/main.go"} {
		if err := t.copySample(sample, f); err != nil {
			return err
		}
	}
	header, err := os.ReadFile(filepath.Join(sample, "hack", "boilerplate.go.txt"))
	if err != nil {
		return err
	}
	kinds := map[string][]string{} // group/version (or group) -> kinds
	var order []string
	_ = t.size.each(func(g, v, kind string) error {
		key := g + "/" + v
		if kinds[key] == nil {
			order = append(order, key)
		}
		kinds[key] = append(kinds[key], kind)
		if v == growthVersions[0] {
			kinds[g] = append(kinds[g], kind)
		}
		return nil
	})
	for _, g := range growthGroups[:t.size.groups] {
		if err := t.kubeInternal(string(header), g, kinds[g]); err != nil {
			return err
		}
	}
	for _, key := range order {
		g, v, _ := strings.Cut(key, "/")
		if err := t.kubeVersion(string(header), g, v, kinds[key]); err != nil {
			return err
		}
	}
	return os.MkdirAll(t.viol, 0o755)
}

// copySample copies a file of sample-apiserver into the kube_codegen.sh
// tree, with its module path changed.
func (t *growthTree) copySample(sample, name string) error {
	src, err := os.ReadFile(filepath.Join(sample, name))
	if err != nil {
		return err
	}
	s := string(src)
	if strings.HasSuffix(name, "go.mod") {
		s = strings.Replace(s, "\nmodule k8s.io/sample-apiserver\n", "\nmodule "+t.module+"\n", 1)
	} else {
		s = strings.ReplaceAll(s, "k8s.io/sample-apiserver", t.module)
	}
	return writeFile(filepath.Join(t.kube, name), s)
}

// kubeKind writes a kind's types to the kube_codegen.sh tree's package
// folder dir (package pkg): the apiserver-boot project's types file of the
// kind in version, without apiserver-boot's resource markers, with markers
// added to the kind.
func (t *growthTree) kubeKind(g, version, kind, dir, pkg string, markers ...string) error {
	k, err := readKind(kindTypesFile(t.boot, g, version, kind))
	if err != nil {
		return err
	}
	k.dropMarkers("+resource:", "+subresource:")
	if err := k.setPackage(pkg); err != nil {
		return err
	}
	if err := k.addTypeMarkers(kind, markers...); err != nil {
		return err
	}
	return k.writeTo(filepath.Join(dir, strings.ToLower(kind)+"_types.go"))
}

// kubeInternal writes the internal version of group g: doc.go, register.go
// and the kinds of its first version.
func (t *growthTree) kubeInternal(header, g string, kinds []string) error {
	dir := filepath.Join(t.kube, "pkg", "apis", g)
	doc := fmt.Sprintf("%s\n// +k8s:deepcopy-gen=package\n// +groupName=%s.example.com\n\n// Package %s is the internal version of the API.\npackage %s\n", header, g, g, g)
	reg := fmt.Sprintf(kubeInternalRegister, header, g, g, knownTypes(kinds))
	for name, s := range map[string]string{"doc.go": doc, "register.go": reg} {
		if err := writeFile(filepath.Join(dir, name), s); err != nil {
			return err
		}
	}
	for _, k := range kinds {
		if err := t.kubeKind(g, growthVersions[0], k, dir, g); err != nil {
			return err
		}
	}
	return nil
}

// kubeVersion writes version v of group g: doc.go with sample-apiserver's
// package tags, register.go and the kinds, each a +genclient.
func (t *growthTree) kubeVersion(header, g, v string, kinds []string) error {
	dir := filepath.Join(t.kube, "pkg", "apis", g, v)
	doc := fmt.Sprintf(kubeVersionDoc, header, t.module, g, g, filepath.Base(t.module), g, v, v, v, v)
	reg := fmt.Sprintf(kubeVersionRegister, header, v, g, v, knownTypes(kinds))
	for name, s := range map[string]string{"doc.go": doc, "register.go": reg} {
		if err := writeFile(filepath.Join(dir, name), s); err != nil {
			return err
		}
	}
	for _, k := range kinds {
		if err := t.kubeKind(g, v, k, dir, v, "+genclient"); err != nil {
			return err
		}
	}
	return nil
}

// kubeInternalRegister is register.go of an internal version, as
// sample-apiserver's: header, package, group, known types.
const kubeInternalRegister = `%s
package %s

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the group name used in this package
const GroupName = "%s.example.com"

// SchemeGroupVersion is group version used to register these objects
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: runtime.APIVersionInternal}

// Kind takes an unqualified kind and returns back a Group qualified GroupKind
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

// Resource takes an unqualified resource and returns back a Group qualified GroupResource
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder is the scheme builder with scheme init functions to run for this API package
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme is a common registration function for mapping packaged scoped group & version keys to a scheme
	AddToScheme = SchemeBuilder.AddToScheme
)

// Adds the list of known types to the given scheme.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
%s	)
	return nil
}
`

// kubeVersionDoc is doc.go of a version, with sample-apiserver's tags:
// header, module, group, group, module base, group, version, version,
// version, version.
const kubeVersionDoc = `%s
// +k8s:openapi-gen=true
// +k8s:deepcopy-gen=package
// +k8s:conversion-gen=%s/pkg/apis/%s
// +k8s:defaulter-gen=TypeMeta
// +groupName=%s.example.com
// +k8s:openapi-model-package=com.example.%s.pkg.apis.%s.%s

// Package %s is the %s version of the API.
package %s
`

// kubeVersionRegister is register.go of a version, as sample-apiserver's:
// header, package, group, version, known types.
const kubeVersionRegister = `%s
package %s

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName holds the API group name.
const GroupName = "%s.example.com"

// SchemeGroupVersion is group version used to register these objects
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "%s"}

var (
	// SchemeBuilder is the scheme builder with scheme init functions to run for this API package
	SchemeBuilder      runtime.SchemeBuilder
	localSchemeBuilder = &SchemeBuilder
	// AddToScheme is a common registration function for mapping packaged scoped group & version keys to a scheme
	AddToScheme = localSchemeBuilder.AddToScheme
)

func init() {
	// The generated conversions register themselves in their own file.
	localSchemeBuilder.Register(addKnownTypes)
}

// Adds the list of known types to the given scheme.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
%s	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// Resource takes an unqualified resource and returns a Group qualified GroupResource
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}
`

func knownTypes(kinds []string) string {
	var sb strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&sb, "\t\t&%s{},\n\t\t&%sList{},\n", k, k)
	}
	return sb.String()
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// growth is item 7.
func (b *bench) growth() error {
	sample, err := b.modDir("k8s.io/sample-apiserver", b.k8s)
	if err != nil {
		return err
	}
	kc, err := b.kubeCodegen(sample)
	if err != nil {
		return err
	}
	var trees []*growthTree
	for _, s := range growthSizes {
		n := s.kinds()
		base := filepath.Join(b.tmp, fmt.Sprintf("growth-%d", n))
		t := &growthTree{size: s, module: fmt.Sprintf("example.com/growth%d", n),
			boot: filepath.Join(base, "boot"), kube: filepath.Join(base, "kube"), viol: filepath.Join(base, "api-violations")}
		trees = append(trees, t)
		if err := b.growthSetup(t, sample, kc); err != nil {
			return err
		}
	}
	if err := b.growthRuns(trees, kc); err != nil {
		return err
	}
	b.growthBuilds(trees)
	b.reportGrowthTimes(trees)
	b.reportGrowthBuilds(trees)
	b.growthNotes(trees, kc)
	return nil
}

// growthSetup scaffolds and edits the apiserver-boot project of a size,
// writes the kube_codegen.sh tree from its types, and runs each tool once
// (untimed: the first generate of the benchmark's types; kube_codegen.sh
// also builds models-schema once). A failure is kept in the tree; only a
// cancelled run is an error.
func (b *bench) growthSetup(t *growthTree, sample string, kc *kubeCodegen) error {
	n, s := t.size.kinds(), t.size
	b.logf("%d kind%s: scaffolding the apiserver-boot project (%d group%s, %d version%s)", n, plural(n), s.groups, plural(s.groups), s.versions, plural(s.versions))
	start := time.Now()
	scaffoldErr := b.growthBoot(t)
	t.setup = time.Since(start)
	if t.bootErr = scaffoldErr; t.bootErr == nil {
		_, _, t.bootErr = b.fullGenerate(t.boot)
	}
	b.logf("%d kind%s: writing the kube_codegen.sh tree", n, plural(n))
	if scaffoldErr != nil {
		t.kubeErr = fmt.Errorf("no types to copy, the apiserver-boot project's scaffolding failed: %w", scaffoldErr)
	} else if t.kubeErr = b.growthKube(t, sample); t.kubeErr == nil {
		_, _, t.kubeErr = proc.TimedCommand(b.ctx, t.kube, kc.scriptEnv(t.viol), "bash", "hack/update-codegen.sh")
	}
	return b.ctx.Err()
}

// growthRuns alternates the two tools, run by run, size by size.
func (b *bench) growthRuns(trees []*growthTree, kc *kubeCodegen) error {
	for i := 0; i < b.runs; i++ {
		for _, t := range trees {
			n := t.size.kinds()
			if t.bootErr == nil {
				b.logf("run %d/%d, %d kind%s: apiserver-boot generate --force", i+1, b.runs, n, plural(n))
				d, _, err := b.fullGenerate(t.boot)
				if err != nil {
					t.bootErr = err
				} else {
					t.ours = append(t.ours, d)
				}
			}
			if t.kubeErr == nil {
				b.logf("run %d/%d, %d kind%s: kube_codegen.sh (hack/update-codegen.sh)", i+1, b.runs, n, plural(n))
				d, _, err := proc.TimedCommand(b.ctx, t.kube, kc.scriptEnv(t.viol), "bash", "hack/update-codegen.sh")
				if err != nil {
					t.kubeErr = err
				} else {
					t.theirs = append(t.theirs, d)
				}
			}
			if b.ctx.Err() != nil {
				return b.ctx.Err()
			}
		}
	}
	return nil
}

// growthBuilds runs go build ./... in both trees of each size.
func (b *bench) growthBuilds(trees []*growthTree) {
	for _, t := range trees {
		b.logf("%d kind%s: go build ./... in both trees", t.size.kinds(), plural(t.size.kinds()))
		if t.bootErr == nil {
			_, t.buildOK[0] = proc.Command(b.ctx, t.boot, nil, "go", "build", "./...")
		}
		if t.kubeErr == nil {
			_, t.buildOK[1] = proc.Command(b.ctx, t.kube, nil, "go", "build", "./...")
		}
	}
}

// growthOf is how many times longer z's median is than a's, as a figure and text.
func growthOf(a, z []time.Duration, aErr, zErr error) (float64, string) {
	if aErr != nil || zErr != nil {
		return 0, "failed (notes)"
	}
	g := ratio(median(z), median(a))
	return g, fmt.Sprintf("%.2fx", g)
}

// reportGrowthTimes adds a row per size (apiserver-boot's full generate
// against kube_codegen.sh's) and the growth row: the largest size over the
// smallest, with the middle size in a note.
func (b *bench) reportGrowthTimes(trees []*growthTree) {
	figure := func(ds []time.Duration, err error) string {
		if err != nil {
			return "failed (notes)"
		}
		return secs(median(ds))
	}
	for _, t := range trees {
		n := t.size.kinds()
		r := row{Item: "7", Measure: fmt.Sprintf("full generate, %d kind%s", n, plural(n)), Value: figure(t.ours, t.bootErr),
			Ref: figure(t.theirs, t.kubeErr) + " (kube_codegen.sh)", Ratio: "-"}
		if t.bootErr == nil && t.kubeErr == nil {
			mo, mt := median(t.ours), median(t.theirs)
			r.Ratio = fmt.Sprintf("%.2f (%.1fx faster)", ratio(mo, mt), ratio(mt, mo))
		}
		b.add(r)
	}
	first, last := trees[0], trees[len(trees)-1]
	og, ogText := growthOf(first.ours, last.ours, first.bootErr, last.bootErr)
	_, tgText := growthOf(first.theirs, last.theirs, first.kubeErr, last.kubeErr)
	met := "no"
	if first.bootErr == nil && last.bootErr == nil {
		met = yesNo(og <= 3)
	}
	b.add(row{Item: "7", Measure: fmt.Sprintf("growth: %d kinds over %d kind", last.size.kinds(), first.size.kinds()), Value: ogText,
		Ref: tgText + " (kube_codegen.sh)", Ratio: "-", Target: "≤3x", Met: met})
	if len(trees) == 3 {
		mid := trees[1]
		_, o := growthOf(first.ours, mid.ours, first.bootErr, mid.bootErr)
		_, k := growthOf(first.theirs, mid.theirs, first.kubeErr, mid.kubeErr)
		b.note("7", "growth, %d kinds over %d kind: apiserver-boot %s, kube_codegen.sh %s", mid.size.kinds(), first.size.kinds(), o, k)
	}
}

// reportGrowthBuilds adds the row of whether both trees of every size build.
func (b *bench) reportGrowthBuilds(trees []*growthTree) {
	var built []string
	allBuild := true
	for _, t := range trees {
		ok := func(err, setup error) string {
			if setup != nil {
				return "not generated"
			}
			if err != nil {
				allBuild = false
				return "FAILS"
			}
			return "builds"
		}
		built = append(built, fmt.Sprintf("%d: %s / %s", t.size.kinds(), ok(t.buildOK[0], t.bootErr), ok(t.buildOK[1], t.kubeErr)))
		if t.bootErr != nil || t.kubeErr != nil {
			allBuild = false
		}
	}
	b.add(row{Item: "7", Measure: "`go build ./...` after generation (kinds: apiserver-boot / kube_codegen.sh)", Value: strings.Join(built, "; "),
		Ref: "-", Ratio: "-", Target: "all build", Met: yesNo(allBuild)})
}

// growthNotes notes the types, each size's runs and setup, and failures.
func (b *bench) growthNotes(trees []*growthTree, kc *kubeCodegen) {
	b.note("7", "types: each kind scaffolded by `create group version resource`, its spec given six fields more than the scaffolded replicas (two strings, []string, map[string]string, a nested struct with a *string, *int64) and the status's conditions +listType=map; the kube_codegen.sh tree gets each edited types file with sample-apiserver's tags instead of apiserver-boot's. Groups %s; versions %s; kinds %s…",
		strings.Join(growthGroups, ", "), strings.Join(growthVersions, ", "), strings.Join([]string{growthKind("fleet", 0), growthKind("fleet", 1), growthKind("billing", 0)}, ", "))
	for _, t := range trees {
		n := t.size.kinds()
		b.note("7", "%d kind%s (%d group%s × %d version%s × %d kind%s per version): apiserver-boot runs: %s; kube_codegen.sh runs: %s. Scaffolding the apiserver-boot project (init repo and %d `create group version resource`, each ending with a generate) took %s, the last create %s (not timed above)",
			n, plural(n), t.size.groups, plural(t.size.groups), t.size.versions, plural(t.size.versions), t.size.perVersion, plural(t.size.perVersion),
			orNone(durations(t.ours)), orNone(durations(t.theirs)), t.creates, secs(t.setup), secs(t.lastCreate))
		t.failureNotes(b, n)
	}
	b.note("7", "kube_codegen.sh's generators were installed once per bench run before any timed run (%s, %d of 9 already there; excluded)", secs(kc.install), kc.present)
}

// failureNotes notes how a size's trees failed, if they did.
func (t *growthTree) failureNotes(b *bench, n int) {
	if t.bootErr != nil {
		b.note("7", "%d kind%s: apiserver-boot failed:\n```\n%s\n```", n, plural(n), proc.Head(strings.TrimSpace(t.bootErr.Error()), 16))
	}
	if t.kubeErr != nil {
		b.note("7", "%d kind%s: kube_codegen.sh failed:\n```\n%s\n```", n, plural(n), proc.Head(strings.TrimSpace(t.kubeErr.Error()), 16))
	}
	if t.buildOK[0] != nil {
		b.note("7", "%d kind%s: the apiserver-boot project does not build:\n```\n%s\n```", n, plural(n), proc.Head(t.buildOK[0].Error(), 12))
	}
	if t.buildOK[1] != nil {
		b.note("7", "%d kind%s: the kube_codegen.sh tree does not build:\n```\n%s\n```", n, plural(n), proc.Head(t.buildOK[1].Error(), 12))
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
