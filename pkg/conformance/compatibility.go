package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/server"
)

// updateEnv, as in Kubernetes' own compatibility test, records what today's
// code reads from an earlier release's fixture as its after_roundtrip file.
const updateEnv = "UPDATE_COMPATIBILITY_FIXTURE_DATA"

// Compatibility checks that today's code reads what earlier releases wrote,
// the way Kubernetes keeps compatibility fixtures for its own API
// (k8s.io/apimachinery/pkg/api/apitesting/roundtrip): dir holds one folder per
// recorded release (v0.1.0, ...), each with <group>.<version>.<Kind>.json,
// .yaml, .pb (protobuf, as stored in etcd) and .cbor (CBOR, KEP-4222, as
// served with CBORServingAndStorage on; releases recorded before have none)
// of a deterministically filled object of every kind and served version. Each fixture must decode with
// today's code, and every field value the release wrote must read back the
// same from each encoding: a difference names the field. A field added since
// reads as its zero value. An accepted change is recorded as
// <name>.after_roundtrip.json beside the fixture: the JSON today's code must
// give instead.
func Compatibility(t *testing.T, groups []*builders.APIGroup, dir string) {
	scheme, err := server.NewScheme(groups)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []schema.GroupVersionKind
	for _, g := range groups {
		for _, r := range g.Resources {
			for _, v := range r.Versions {
				kinds = append(kinds, schema.GroupVersionKind{Group: g.Name, Version: v, Kind: r.Kind})
			}
		}
	}
	opts := roundtrip.NewCompatibilityTestOptions(scheme)
	opts.Kinds, opts.TestDataDir, opts.TestDataDirsPreviousVersions = kinds, dir, []string{}
	opts.Complete(t)
	cborSerializer := cbor.NewSerializer(scheme, scheme)

	if out := os.Getenv(project.WriteFixturesEnv); out != "" {
		writeFixtures(t, opts, cborSerializer, out)
		return
	}
	releases, err := filepath.Glob(filepath.Join(dir, "v*"))
	if err != nil {
		t.Fatal(err)
	}
	sortReleases(releases)
	if len(releases) == 0 {
		t.Logf("no release recorded under %s yet (apiserver-boot api snapshot <release> records one)", dir)
	}
	served := map[string]bool{}
	for _, gvk := range opts.Kinds {
		served[fixtureName(gvk)] = true
	}
	for _, release := range releases {
		t.Run(filepath.Base(release), func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join(release, "*.json"))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				name := strings.TrimSuffix(filepath.Base(f), ".json")
				if strings.HasSuffix(name, ".after_roundtrip") {
					continue
				}
				if !served[name] {
					t.Logf("%s: %s is no longer served (generate checks that no stored version was dropped)", release, name)
					continue
				}
			}
			for _, gvk := range opts.Kinds {
				checkRelease(t, opts, cborSerializer, release, gvk)
			}
		})
	}
	// Today's filled objects through CBOR, for kinds no release has recorded in CBOR yet.
	t.Run("cbor", func(t *testing.T) {
		for _, gvk := range opts.Kinds {
			if diff, err := cborRoundTrip(scheme, opts.FilledObjects[gvk], gvk.GroupVersion()); err != nil || diff != "" {
				t.Errorf("%s through CBOR: %v%s", gvk, err, diff)
			}
		}
	})
}

func fixtureName(gvk schema.GroupVersionKind) string {
	return gvk.Group + "." + gvk.Version + "." + gvk.Kind
}

// writeFixtures writes the filled object of every kind in JSON, YAML, CBOR
// and, where the kind has protobuf methods, protobuf.
func writeFixtures(t *testing.T, opts *roundtrip.CompatibilityTestOptions, cborSerializer runtime.Serializer, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, gvk := range opts.Kinds {
		obj := opts.FilledObjects[gvk]
		base := filepath.Join(dir, fixtureName(gvk))
		for ext, s := range map[string]runtime.Serializer{"json": opts.JSON, "yaml": opts.YAML, "pb": opts.Proto, "cbor": cborSerializer} {
			if ext == "pb" && !hasProtobuf(obj) {
				continue
			}
			var b bytes.Buffer
			if err := s.Encode(obj, &b); err != nil {
				t.Fatalf("%s: encoding %s: %v", gvk, ext, err)
			}
			if err := os.WriteFile(base+"."+ext, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func hasProtobuf(obj runtime.Object) bool {
	_, ok := obj.(interface {
		Size() int
		MarshalToSizedBuffer([]byte) (int, error)
		Unmarshal([]byte) error
	})
	return ok
}

// checkRelease decodes the fixtures of gvk recorded in release with today's
// code and compares every field with what the release wrote.
func checkRelease(t *testing.T, opts *roundtrip.CompatibilityTestOptions, cborSerializer runtime.Serializer, release string, gvk schema.GroupVersionKind) {
	base := filepath.Join(release, fixtureName(gvk))
	written, err := os.ReadFile(base + ".json")
	if os.IsNotExist(err) {
		return // the kind or version came later
	}
	if err != nil {
		t.Fatal(err)
	}
	expected := written
	if after, err := os.ReadFile(base + ".after_roundtrip.json"); err == nil {
		expected = after
	}
	var want any
	if err := json.Unmarshal(expected, &want); err != nil {
		t.Fatalf("%s: %v", base+".json", err)
	}
	decoded := map[string]runtime.Object{}
	for _, enc := range []struct {
		ext string
		s   runtime.Serializer
	}{{"json", opts.JSON}, {"yaml", opts.YAML}, {"pb", opts.Proto}, {"cbor", cborSerializer}} {
		data, err := os.ReadFile(base + "." + enc.ext)
		if os.IsNotExist(err) && enc.ext == "pb" {
			continue // the kind was stored as JSON in that release
		}
		if os.IsNotExist(err) && enc.ext == "cbor" {
			continue // recorded before CBOR fixtures were
		}
		if err != nil {
			t.Fatal(err)
		}
		obj, err := opts.Scheme.New(gvk)
		if err != nil {
			t.Fatal(err)
		}
		if enc.ext == "json" {
			var compact bytes.Buffer
			if err := json.Compact(&compact, data); err != nil {
				t.Fatalf("%s.json: %v", base, err)
			}
			data = compact.Bytes()
		}
		obj, _, err = enc.s.Decode(data, &gvk, obj)
		if err != nil {
			t.Errorf("%s.%s written by %s no longer decodes: %v", base, enc.ext, filepath.Base(release), err)
			continue
		}
		decoded[enc.ext] = obj
		var out bytes.Buffer
		if err := opts.JSON.Encode(obj, &out); err != nil {
			t.Fatal(err)
		}
		var got any
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		diffs := diffJSON("", want, got, zeroJSON(t, opts, gvk))
		for _, d := range diffs {
			t.Errorf("%s.%s written by %s, read with today's code: %s", base, enc.ext, filepath.Base(release), d)
		}
		if len(diffs) > 0 && enc.ext == "json" {
			if os.Getenv(updateEnv) == "true" {
				if err := os.WriteFile(base+".after_roundtrip.json", out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s.after_roundtrip.json: review and commit it", base)
			} else {
				t.Logf("if the change is made on purpose (and accepted in generate), record what today's code reads with %s=true go test ./pkg/apis -run TestCompatibility", updateEnv)
			}
		}
	}
	if js, ok := decoded["json"]; ok {
		for _, ext := range []string{"yaml", "pb", "cbor"} {
			if o, ok := decoded[ext]; ok && !apiequality.Semantic.DeepEqual(js, o) {
				t.Errorf("%s: the %s and json fixtures of %s decode differently:\n%s", base, ext, filepath.Base(release), cmp.Diff(js, o))
			}
		}
	}
}

// zeroJSON is today's JSON of an empty object of gvk: what fields added since
// a release read as (a Quantity reads "0", a Duration "0s").
func zeroJSON(t *testing.T, opts *roundtrip.CompatibilityTestOptions, gvk schema.GroupVersionKind) any {
	obj, err := opts.Scheme.New(gvk)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := opts.JSON.Encode(obj, &b); err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// diffJSON lists, by field path, every value of want that got does not hold.
// Fields got has and want has not are new since the release: they must be
// zero (absent, null, "", 0, false, empty) or what an empty object has there
// (zeroAt, the empty object's value at path, nil where unknown).
func diffJSON(path string, want, got, zeroAt any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: the release wrote an object, today's code gives %s", display(path), short(got))}
		}
		z, _ := zeroAt.(map[string]any)
		var out []string
		for _, k := range sortedKeys(w) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			gv, present := g[k]
			if !present {
				out = append(out, fmt.Sprintf("%s: the release wrote %s, today's code drops it", p, short(w[k])))
				continue
			}
			out = append(out, diffJSON(p, w[k], gv, z[k])...)
		}
		for _, k := range sortedKeys(g) {
			if _, old := w[k]; !old && !zero(g[k]) && !reflect.DeepEqual(g[k], z[k]) {
				p := k
				if path != "" {
					p = path + "." + k
				}
				out = append(out, fmt.Sprintf("%s: absent from the release, today's code reads %s into it (a field moved or renumbered?)", p, short(g[k])))
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: the release wrote %s, today's code gives %s", display(path), short(want), short(got))}
		}
		var out []string
		for i := range w {
			out = append(out, diffJSON(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], nil)...)
		}
		return out
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: the release wrote %s, today's code gives %s", display(path), short(want), short(got))}
	}
	return nil
}

func display(path string) string {
	if path == "" {
		return "(object)"
	}
	return path
}

func zero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case float64:
		return x == 0
	case bool:
		return !x
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !zero(e) {
				return false
			}
		}
		return true
	}
	return false
}

func short(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sortReleases orders release folders oldest first.
func sortReleases(dirs []string) {
	sort.Slice(dirs, func(i, j int) bool { return project.ReleaseLess(filepath.Base(dirs[i]), filepath.Base(dirs[j])) })
}
