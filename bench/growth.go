package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// growthSpec is the text of a kind's spec, nested type and status, the same
// in both trees and in the internal version of the kube_codegen.sh tree.
func growthSpec(kind string) string {
	return strings.NewReplacer("KIND", kind).Replace(`// KINDSpec is the desired state of a KIND.
type KINDSpec struct {
	// Replicas is the desired number of instances.
	// +optional
	Replicas int32 ` + "`json:\"replicas,omitempty\"`" + `
	// Image is the container image to run.
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
}

// KINDEndpoint is a network endpoint of a KIND.
type KINDEndpoint struct {
	// Host is a DNS name or an IP address.
	Host string ` + "`json:\"host\"`" + `
	// Port is the TCP port.
	Port int32 ` + "`json:\"port\"`" + `
	// Path is the URL path, if any.
	// +optional
	Path *string ` + "`json:\"path,omitempty\"`" + `
}

// KINDStatus is the observed state of a KIND, written by its controller.
type KINDStatus struct {
	// Replicas is the observed number of instances.
	// +optional
	Replicas int32 ` + "`json:\"replicas,omitempty\"`" + `
	// ObservedGeneration is the metadata.generation the status describes.
	// +optional
	ObservedGeneration int64 ` + "`json:\"observedGeneration,omitempty\"`" + `
	// Conditions are the latest observations of the object's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition ` + "`json:\"conditions,omitempty\"`" + `
}
`)
}

// growthObject is the kind and its list, with markers before each.
func growthObject(kind, kindMarkers, listMarkers string) string {
	return strings.NewReplacer("KIND", kind, "KMARK", kindMarkers, "LMARK", listMarkers).Replace(`// KIND is a kind of the growth benchmark.
//
KMARKtype KIND struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Spec   KINDSpec   ` + "`json:\"spec,omitempty\"`" + `
	Status KINDStatus ` + "`json:\"status,omitempty\"`" + `
}

// KINDList is a list of KIND objects.
//
LMARKtype KINDList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `

	Items []KIND ` + "`json:\"items\"`" + `
}
`)
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
// generate, as for a user), then each kind's spec and status replaced by the
// benchmark's in the scaffolded <kind>_types.go.
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
		path := filepath.Join(t.boot, "pkg", "apis", g, v, strings.ToLower(kind)+"_types.go")
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// The scaffolded spec and status, from their doc comments to the list's.
		re := regexp.MustCompile(`(?s)// ` + kind + `Spec is the desired state.*?\n(// ` + kind + `List is)`)
		if !re.Match(src) {
			return fmt.Errorf("%s: no scaffolded %sSpec and %sStatus found", path, kind, kind)
		}
		out := re.ReplaceAllLiteralString(string(src), growthSpec(kind)+"\n// "+kind+"List is")
		return os.WriteFile(path, []byte(out), 0o644)
	})
}

// growthKube writes the same types as a sample-apiserver style tree: its
// go.mod, go.sum, hack/update-codegen.sh and models-schema command with the
// module path changed, an internal version per group and the versioned types
// with the tags sample-apiserver's carry.
func (b *bench) growthKube(t *growthTree, sample string) error {
	copyEdited := func(from, to string) error {
		src, err := os.ReadFile(filepath.Join(sample, from))
		if err != nil {
			return err
		}
		s := string(src)
		if strings.HasSuffix(from, "go.mod") {
			s = strings.Replace(s, "\nmodule k8s.io/sample-apiserver\n", "\nmodule "+t.module+"\n", 1)
		} else {
			s = strings.ReplaceAll(s, "k8s.io/sample-apiserver", t.module)
		}
		return writeFile(filepath.Join(t.kube, to), s)
	}
	for _, f := range []string{"go.mod", "go.sum", "hack/boilerplate.go.txt", "hack/update-codegen.sh", "pkg/generated/openapi/cmd/models-schema/main.go"} {
		if err := copyEdited(f, f); err != nil {
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
	deepcopy := "// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object\n"
	for _, g := range growthGroups[:t.size.groups] {
		dir := filepath.Join(t.kube, "pkg", "apis", g)
		doc := fmt.Sprintf("%s\n// +k8s:deepcopy-gen=package\n// +groupName=%s.example.com\n\n// Package %s is the internal version of the API.\npackage %s\n", header, g, g, g)
		reg := fmt.Sprintf(`%s
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
`, header, g, g, knownTypes(kinds[g]))
		types := fmt.Sprintf("%s\npackage %s\n\nimport metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n", header, g)
		for _, k := range kinds[g] {
			types += "\n" + growthObject(k, deepcopy, deepcopy) + "\n" + growthSpec(k)
		}
		for name, s := range map[string]string{"doc.go": doc, "register.go": reg, "types.go": types} {
			if err := writeFile(filepath.Join(dir, name), s); err != nil {
				return err
			}
		}
	}
	for _, key := range order {
		g, v, _ := strings.Cut(key, "/")
		dir := filepath.Join(t.kube, "pkg", "apis", g, v)
		doc := fmt.Sprintf(`%s
// +k8s:openapi-gen=true
// +k8s:deepcopy-gen=package
// +k8s:conversion-gen=%s/pkg/apis/%s
// +k8s:defaulter-gen=TypeMeta
// +groupName=%s.example.com
// +k8s:openapi-model-package=com.example.%s.pkg.apis.%s.%s

// Package %s is the %s version of the API.
package %s
`, header, t.module, g, g, filepath.Base(t.module), g, v, v, v, v)
		reg := fmt.Sprintf(`%s
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
`, header, v, g, v, knownTypes(kinds[key]))
		types := fmt.Sprintf("%s\npackage %s\n\nimport metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n", header, v)
		for _, k := range kinds[key] {
			types += "\n" + growthObject(k, "// +genclient\n"+deepcopy, deepcopy) + "\n" + growthSpec(k)
		}
		for name, s := range map[string]string{"doc.go": doc, "register.go": reg, "types.go": types} {
			if err := writeFile(filepath.Join(dir, name), s); err != nil {
				return err
			}
		}
	}
	return os.MkdirAll(t.viol, 0o755)
}

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

		b.logf("%d kind%s: scaffolding the apiserver-boot project (%d group%s, %d version%s)", n, plural(n), s.groups, plural(s.groups), s.versions, plural(s.versions))
		start := time.Now()
		t.bootErr = b.growthBoot(t)
		t.setup = time.Since(start)
		if t.bootErr == nil {
			// Untimed: the first generate of the benchmark's types.
			_, _, t.bootErr = b.fullGenerate(t.boot)
		}
		b.logf("%d kind%s: writing the kube_codegen.sh tree", n, plural(n))
		if t.kubeErr = b.growthKube(t, sample); t.kubeErr == nil {
			// Untimed, as above (it also builds models-schema once).
			_, _, t.kubeErr = proc.TimedCommand(b.ctx, t.kube, kc.scriptEnv(t.viol), "bash", "hack/update-codegen.sh")
		}
		if b.ctx.Err() != nil {
			return b.ctx.Err()
		}
	}

	// Alternate the two tools, run by run, size by size.
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
	for _, t := range trees {
		b.logf("%d kind%s: go build ./... in both trees", t.size.kinds(), plural(t.size.kinds()))
		if t.bootErr == nil {
			_, t.buildOK[0] = proc.Command(b.ctx, t.boot, nil, "go", "build", "./...")
		}
		if t.kubeErr == nil {
			_, t.buildOK[1] = proc.Command(b.ctx, t.kube, nil, "go", "build", "./...")
		}
	}

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
	growthOf := func(a, z []time.Duration, aErr, zErr error) (float64, string) {
		if aErr != nil || zErr != nil {
			return 0, "failed (notes)"
		}
		g := ratio(median(z), median(a))
		return g, fmt.Sprintf("%.2fx", g)
	}
	og, ogText := growthOf(first.ours, last.ours, first.bootErr, last.bootErr)
	_, tgText := growthOf(first.theirs, last.theirs, first.kubeErr, last.kubeErr)
	met := "no"
	if first.bootErr == nil && last.bootErr == nil {
		met = yesNo(og <= 3)
	}
	b.add(row{Item: "7", Measure: fmt.Sprintf("growth: %d kinds over %d kind", last.size.kinds(), first.size.kinds()), Value: ogText,
		Ref: tgText + " (kube_codegen.sh)", Ratio: "-", Target: "≤3x", Met: met})

	if mid := trees[1]; len(trees) == 3 {
		_, o := growthOf(first.ours, mid.ours, first.bootErr, mid.bootErr)
		_, k := growthOf(first.theirs, mid.theirs, first.kubeErr, mid.kubeErr)
		b.note("7", "growth, %d kinds over %d kind: apiserver-boot %s, kube_codegen.sh %s", mid.size.kinds(), first.size.kinds(), o, k)
	}

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

	b.note("7", "types: each kind a spec of seven fields (int32, two strings, []string, map[string]string, a nested struct with a *string, *int64) and a status with replicas, observedGeneration and []metav1.Condition; the same text in both trees. Groups %s; versions %s; kinds %s…",
		strings.Join(growthGroups, ", "), strings.Join(growthVersions, ", "), strings.Join([]string{growthKind("fleet", 0), growthKind("fleet", 1), growthKind("billing", 0)}, ", "))
	for _, t := range trees {
		n := t.size.kinds()
		b.note("7", "%d kind%s (%d group%s × %d version%s × %d kind%s per version): apiserver-boot runs: %s; kube_codegen.sh runs: %s. Scaffolding the apiserver-boot project (init repo and %d `create group version resource`, each ending with a generate) took %s, the last create %s (not timed above)",
			n, plural(n), t.size.groups, plural(t.size.groups), t.size.versions, plural(t.size.versions), t.size.perVersion, plural(t.size.perVersion),
			orNone(durations(t.ours)), orNone(durations(t.theirs)), t.creates, secs(t.setup), secs(t.lastCreate))
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
	b.note("7", "kube_codegen.sh's generators were installed once per bench run before any timed run (%s, %d of 9 already there; excluded)", secs(kc.install), kc.present)
	return nil
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
