package generators

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/types"
	"sigs.k8s.io/controller-tools/pkg/markers"
	"sigs.k8s.io/yaml"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/generators/protobuf"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
)

// The API as a release published it, and the check that today's API keeps
// it: `apiserver-boot api snapshot <release>` writes
// pkg/apis/testdata/<release>/api.yaml (beside the release's compatibility
// fixtures), and every generate compares the API with the latest one. A JSON
// field removed or renamed, a field's type or protobuf number changed, a
// required field added, or a kind or version dropped that may hold stored
// objects is an error naming it, unless the group's doc.go accepts it:
//
//	// +apiserver-boot:accept-breaking-change=v1/CronTab.spec.schedule
const (
	// SnapshotsDir holds the recorded releases, relative to the project.
	SnapshotsDir = project.APIsDir + "/testdata"
	// SnapshotFile is the API description in a release folder.
	SnapshotFile = "api.yaml"
)

// apiDescription is what clients and stored objects depend on: per group,
// version and kind, every field by JSON path (spec.replicas,
// status.conditions[]), with its type, protobuf field numbers from the kind's
// message, and whether it is required.
type apiDescription struct {
	Groups map[string]*groupDescription `json:"groups"`
}

type groupDescription struct {
	Versions map[string]*versionDescription `json:"versions"`
}

type versionDescription struct {
	Kinds map[string]*kindDescription `json:"kinds"`
}

type kindDescription struct {
	// Stored: the kind's objects are stored in etcd in this version.
	Stored bool                        `json:"stored,omitempty"`
	Fields map[string]fieldDescription `json:"fields"`
}

type fieldDescription struct {
	// Type is the Go type as JSON and protobuf see it: builtins, "object"
	// for the structs of the API, []T, map[K]V, or a package-qualified type.
	Type string `json:"type"`
	// Protobuf is the path of field numbers from the kind's message ("2.1"),
	// empty for kinds stored as JSON.
	Protobuf string `json:"protobuf,omitempty"`
	Required bool   `json:"required,omitempty"`
}

// compatibility checks the API against the latest recorded release and, for
// `api snapshot`, records the API of a new one.
type compatibility struct{}

func (compatibility) Name() string                 { return "compatibility" }
func (compatibility) Packages(api *State) []string { return nil }

func (compatibility) Generate(api *State, c *generator.Context) ([]files.File, error) {
	last, lastPath, err := latestSnapshot(api.Root)
	if err != nil || (last == nil && api.SnapshotDir == "") {
		return nil, err
	}
	desc := describe(api, c)
	if last != nil {
		accepted, err := acceptedChanges(api)
		if err != nil {
			return nil, err
		}
		release := filepath.Base(filepath.Dir(lastPath))
		var errs []string
		used := map[string]bool{}
		for _, f := range breakingChanges(last, desc) {
			if pos, ok := accepted[f.group+" "+f.id]; ok {
				used[f.group+" "+f.id] = true
				api.Warnings = append(api.Warnings, fmt.Sprintf("%s: accepted breaking change since %s: %s %s: %s", pos, release, f.group, f.id, f.msg))
				continue
			}
			errs = append(errs, fmt.Sprintf("%s %s: %s\n    to accept it on purpose, add to pkg/apis/%s/doc.go: // +%s=%s",
				f.group, f.id, f.msg, groupDir(api, f.group), model.AcceptMarker, f.id))
		}
		for _, key := range slices.Sorted(maps.Keys(accepted)) {
			if !used[key] {
				api.Warnings = append(api.Warnings, fmt.Sprintf("%s: +%s=%s accepts nothing against %s: remove it", accepted[key], model.AcceptMarker, strings.SplitN(key, " ", 2)[1], release))
			}
		}
		if len(errs) > 0 {
			rel, _ := filepath.Rel(api.Root, lastPath)
			return nil, fmt.Errorf("the API breaks what release %s published (%s): objects stored or clients written since would break:\n  %s\n(see \"Evolving an API safely\" in docs/versions.md)",
				release, rel, strings.Join(errs, "\n  "))
		}
	}
	if api.SnapshotDir == "" {
		return nil, nil
	}
	b, err := yaml.Marshal(desc)
	if err != nil {
		return nil, err
	}
	header := "# The API as this release published it, recorded by apiserver-boot api snapshot: generate\n" +
		"# compares today's API with the latest release. History: do not edit.\n"
	return []files.File{{Path: filepath.Join(api.SnapshotDir, SnapshotFile), Content: append([]byte(header), b...)}}, nil
}

func groupDir(api *State, fullName string) string {
	for _, g := range api.Groups {
		if g.FullName == fullName {
			return g.Name
		}
	}
	return strings.SplitN(fullName, ".", 2)[0]
}

// latestSnapshot reads the API description of the latest recorded release.
func latestSnapshot(root string) (*apiDescription, string, error) {
	paths, err := snapshotPaths(root)
	if err != nil || len(paths) == 0 {
		return nil, "", err
	}
	last := paths[len(paths)-1]
	d, err := readSnapshot(last)
	return d, last, err
}

// snapshotPaths are the recorded releases' API descriptions, oldest first.
func snapshotPaths(root string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(root, SnapshotsDir, "v*", SnapshotFile))
	if err != nil {
		return nil, err
	}
	sort.Slice(paths, func(i, j int) bool {
		return project.ReleaseLess(filepath.Base(filepath.Dir(paths[i])), filepath.Base(filepath.Dir(paths[j])))
	})
	return paths, nil
}

// readSnapshot reads one recorded release's API description.
func readSnapshot(path string) (*apiDescription, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d apiDescription
	if err := yaml.UnmarshalStrict(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &d, nil
}

// publishedKinds are the kinds every recorded release published, by
// <full group>/<version>/<Kind>, with the first release that did.
func publishedKinds(root string) (map[string]string, error) {
	paths, err := snapshotPaths(root)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, path := range paths {
		d, err := readSnapshot(path)
		if err != nil {
			return nil, err
		}
		for group, gd := range d.Groups {
			for version, vd := range gd.Versions {
				for kind := range vd.Kinds {
					key := group + "/" + version + "/" + kind
					if _, ok := out[key]; !ok {
						out[key] = filepath.Base(filepath.Dir(path))
					}
				}
			}
		}
	}
	return out, nil
}

// acceptedChanges reads the accept markers of every group's doc.go, by
// "<full group> <id>", with where each is written.
func acceptedChanges(api *State) (map[string]string, error) {
	out := map[string]string{}
	dirs, err := os.ReadDir(filepath.Join(api.Root, project.APIs()))
	if err != nil {
		return nil, err
	}
	full := map[string]string{}
	for _, g := range api.Groups {
		full[g.Name] = g.FullName
	}
	for _, d := range dirs {
		path := filepath.Join(api.Root, project.APIs(d.Name(), "doc.go"))
		if !d.IsDir() {
			continue
		}
		src, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		group := full[d.Name()]
		if group == "" {
			group = d.Name()
		}
		rel, _ := filepath.Rel(api.Root, path)
		vals, err := model.FileMarkers(rel, src, markers.DescribesPackage)
		if err != nil && strings.Contains(err.Error(), "+"+model.AcceptMarker) {
			return nil, fmt.Errorf("%w: want +%s=<id>, the id generate printed", err, model.AcceptMarker)
		} else if err != nil {
			return nil, err
		}
		for _, v := range vals[model.AcceptMarker] {
			out[group+" "+string(v.Value.(model.AcceptBreakingChange))] = fmt.Sprintf("%s:%d", rel, v.Pos.Line)
		}
	}
	return out, nil
}

// finding is one breaking change: its group, the id an accept marker names,
// and what it breaks.
type finding struct {
	group, id, msg string
}

// breakingChanges lists what today's API breaks of a release's.
func breakingChanges(old, now *apiDescription) []finding {
	var out []finding
	for _, gname := range slices.Sorted(maps.Keys(old.Groups)) {
		og := old.Groups[gname]
		ng := now.Groups[gname]
		for _, vname := range slices.Sorted(maps.Keys(og.Versions)) {
			ov := og.Versions[vname]
			var nv *versionDescription
			if ng != nil {
				nv = ng.Versions[vname]
			}
			if nv == nil {
				var stored []string
				for _, k := range slices.Sorted(maps.Keys(ov.Kinds)) {
					if ov.Kinds[k].Stored {
						stored = append(stored, k)
					}
				}
				if len(stored) > 0 {
					out = append(out, finding{gname, vname, fmt.Sprintf("version dropped, but etcd may still hold %s objects in it (run migrate storage to the new storage version first, and keep serving %s until every object is rewritten)", strings.Join(stored, ", "), vname)})
				} else {
					out = append(out, finding{gname, vname, "version dropped: clients of it break"})
				}
				continue
			}
			for _, kname := range slices.Sorted(maps.Keys(ov.Kinds)) {
				ok, nk := ov.Kinds[kname], nv.Kinds[kname]
				id := vname + "/" + kname
				if nk == nil {
					msg := "kind no longer served in this version: clients of it break"
					if ok.Stored {
						msg = "kind no longer served in its storage version: etcd may still hold its objects in it"
					}
					out = append(out, finding{gname, id, msg})
					continue
				}
				for _, path := range slices.Sorted(maps.Keys(ok.Fields)) {
					of := ok.Fields[path]
					nf, present := nk.Fields[path]
					fid := id + "." + path
					switch {
					case !present:
						out = append(out, finding{gname, fid, "JSON field removed or renamed in a served version: clients and stored objects that set it lose it"})
					case nf.Required && !of.Required:
						out = append(out, finding{gname, fid, "field made required in a served version: objects and requests without it become invalid"})
					case of.Type != nf.Type:
						out = append(out, finding{gname, fid, fmt.Sprintf("type changed from %s to %s", of.Type, nf.Type)})
					case of.Protobuf != "" && nf.Protobuf != "" && of.Protobuf != nf.Protobuf:
						out = append(out, finding{gname, fid, fmt.Sprintf("protobuf field numbers changed from %s to %s: objects stored in etcd hold it under %s", of.Protobuf, nf.Protobuf, of.Protobuf)})
					}
				}
				for _, path := range slices.Sorted(maps.Keys(nk.Fields)) {
					nf := nk.Fields[path]
					if _, existed := ok.Fields[path]; existed || !nf.Required {
						continue
					}
					parent := ""
					if i := strings.LastIndex(path, "."); i >= 0 {
						parent = path[:i]
					}
					if _, ok := ok.Fields[strings.TrimRight(parent, "[]{}")]; parent == "" || ok {
						out = append(out, finding{gname, id + "." + path, "required field added to a served version: objects and requests without it become invalid (make it optional: +optional or omitempty)"})
					}
				}
			}
		}
	}
	return out
}

// describe builds the API description from the loaded universe and the
// field numbers the protobuf generator settled.
func describe(api *State, c *generator.Context) *apiDescription {
	d := &apiDescription{Groups: map[string]*groupDescription{}}
	for _, g := range api.Groups {
		gd := &groupDescription{Versions: map[string]*versionDescription{}}
		d.Groups[g.FullName] = gd
		for _, v := range g.Versions {
			vd := &versionDescription{Kinds: map[string]*kindDescription{}}
			gd.Versions[v.Name] = vd
			pkg := c.Universe.Package(v.Package)
			for _, k := range v.Kinds {
				t := pkg.Types[k.Kind]
				if t == nil {
					continue
				}
				kd := &kindDescription{Fields: map[string]fieldDescription{}}
				for _, gk := range g.Kinds {
					if gk.Kind == k.Kind && gk.StorageVersion == v.Name {
						kd.Stored = true
					}
				}
				w := describer{pkg: v.Package, numbers: api.protobuf.Numbers[v.Package], fields: kd.Fields, walking: map[string]bool{}}
				w.walk(t, "", "")
				vd.Kinds[k.Kind] = kd
			}
		}
	}
	return d
}

type describer struct {
	pkg     string
	numbers protobuf.Numbers
	fields  map[string]fieldDescription
	walking map[string]bool
}

func (w *describer) walk(t *types.Type, path, wire string) {
	if w.walking[t.Name.Name] {
		return // a recursive type: described once
	}
	w.walking[t.Name.Name] = true
	defer delete(w.walking, t.Name.Name)
	for _, m := range t.Members {
		if protobuf.IsTypeMeta(m.Type) || reflect.StructTag(m.Tags).Get("json") == "-" {
			continue
		}
		key := protobuf.FieldKey(m)
		num := ""
		if rec := w.numbers[t.Name.Name]; rec != nil {
			if f, ok := rec.Fields[key]; ok {
				num = fmt.Sprint(f.Number)
				if wire != "" {
					num = wire + "." + num
				}
			}
		}
		if strings.HasPrefix(key, "inline:") {
			if s := protobuf.LocalStruct(w.pkg, m.Type); s != nil {
				w.walk(s, path, num)
			}
			continue
		}
		p := key
		if path != "" {
			p = path + "." + key
		}
		w.fields[p] = fieldDescription{Type: w.typeString(m.Type), Protobuf: num, Required: required(m)}
		w.children(m.Type, p, num)
	}
}

// children describes the fields of the structs a field holds.
func (w *describer) children(t *types.Type, path, wire string) {
	t = underlying(t)
	switch t.Kind {
	case types.Pointer:
		w.children(t.Elem, path, wire)
	case types.Slice:
		w.children(t.Elem, path+"[]", wire)
	case types.Map:
		w.children(t.Elem, path+"{}", wire)
	case types.Struct:
		if t.Name.Package == w.pkg {
			w.walk(t, path, wire)
		}
	}
}

// underlying resolves named types of the API package to what they name.
func underlying(t *types.Type) *types.Type {
	for t.Kind == types.Alias && t.Underlying != nil {
		t = t.Underlying
	}
	return t
}

// typeString is a field's type as its JSON and protobuf see it: named types
// of the API are what they name, and its structs are "object" (their fields
// are described by path).
func (w *describer) typeString(t *types.Type) string {
	u := underlying(t)
	switch u.Kind {
	case types.Builtin:
		return u.Name.Name
	case types.Pointer:
		return w.typeString(u.Elem)
	case types.Slice:
		return "[]" + w.typeString(u.Elem)
	case types.Map:
		return "map[" + w.typeString(u.Key) + "]" + w.typeString(u.Elem)
	case types.Struct:
		if u.Name.Package == w.pkg {
			return "object"
		}
	}
	return u.Name.String()
}

// required follows the OpenAPI generators: a field is required unless it is
// omitempty (or omitzero) or marked +optional; +required forces it.
func required(m types.Member) bool {
	for _, l := range m.CommentLines {
		switch strings.TrimSpace(l) {
		case "+required", "+kubebuilder:validation:Required", "+k8s:required":
			return true
		case "+optional", "+kubebuilder:validation:Optional", "+k8s:optional":
			return false
		}
	}
	for _, opt := range strings.Split(reflect.StructTag(m.Tags).Get("json"), ",")[1:] {
		if opt == "omitempty" || opt == "omitzero" {
			return false
		}
	}
	return true
}
