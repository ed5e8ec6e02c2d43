package conformance

import (
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Lost fields. k8s.io/apimachinery's round-trip tester starts from a fuzzed
// internal object, so it never sees a field that only a version has (the
// internal type cannot hold a value for it), and it reports a loss as a diff
// of whole objects. These checks convert, without serialisation, both ways:
// a fuzzed internal object through each version and back, and a fuzzed
// object of each version (with its defaults, as a client's request gets
// them) through the internal type and back, and name every field that does
// not come back by its JSON path:
//
//	v2 CronTab: spec.schedule is lost converting through the internal type (sent "*/5 * * * *", read back "")

// reporter is the part of testing.T the checks use.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// lossIterations is how many fuzzed objects each check converts: a field is
// lost in the first one where it is set.
const lossIterations = 20

// checkLostFields runs both checks for one kind of a group, for each of the
// versions; fill fuzzes an object. It reports what each lost and tells
// whether anything was.
func checkLostFields(t reporter, scheme *runtime.Scheme, fill func(any), gk schema.GroupKind, versions []string) bool {
	t.Helper()
	internal := gk.WithVersion(runtime.APIVersionInternal)
	lost := false
	for _, version := range versions {
		gvk := gk.WithVersion(version)
		// A version's object through the internal type.
		for i := 0; i < lossIterations; i++ {
			sent, err := scheme.New(gvk)
			if err != nil {
				t.Errorf("%s %s: %v", version, gk.Kind, err)
				return true
			}
			fill(sent)
			scheme.Default(sent)
			back, err := roundTripVia(scheme, sent, internal, gvk)
			if err != nil {
				t.Errorf("%s %s: converting through the internal type: %v", version, gk.Kind, err)
				lost = true
				break
			}
			scheme.Default(back)
			if diffs := diffObjects(sent, back); len(diffs) > 0 {
				for _, d := range diffs {
					t.Errorf("%s %s: %s", version, gk.Kind, d.say("", "converting through the internal type"))
				}
				lost = true
				break
			}
		}
		// An internal object through the version.
		for i := 0; i < lossIterations; i++ {
			sent, err := scheme.New(internal)
			if err != nil {
				t.Errorf("%s: %v", gk.Kind, err)
				return true
			}
			fill(sent)
			back, err := roundTripVia(scheme, sent, gvk, internal)
			if err != nil {
				t.Errorf("%s %s: converting the internal type to %s and back: %v", version, gk.Kind, version, err)
				lost = true
				break
			}
			if diffs := diffObjects(sent, back); len(diffs) > 0 {
				for _, d := range diffs {
					t.Errorf("%s %s: %s", version, gk.Kind, d.say(" of the internal type", "converting through "+version))
				}
				lost = true
				break
			}
		}
	}
	return lost
}

// roundTripVia converts obj (of kind from) to via and back.
func roundTripVia(scheme *runtime.Scheme, obj runtime.Object, via, from schema.GroupVersionKind) (runtime.Object, error) {
	mid, err := scheme.New(via)
	if err != nil {
		return nil, err
	}
	if err := scheme.Convert(obj.DeepCopyObject(), mid, nil); err != nil {
		return nil, err
	}
	back, err := scheme.New(from)
	if err != nil {
		return nil, err
	}
	if err := scheme.Convert(mid, back, nil); err != nil {
		return nil, err
	}
	return back, nil
}

// diffObjects names, by JSON path, every value of sent that back does not
// hold, and every value back has that sent had not. The type meta is not
// compared: conversions leave it to the codecs.
func diffObjects(sent, back runtime.Object) []fieldDiff {
	s, b := asJSON(sent), asJSON(back)
	for _, m := range []map[string]any{s, b} {
		delete(m, "apiVersion")
		delete(m, "kind")
	}
	return diffValues("", s, b)
}

func asJSON(obj any) map[string]any {
	raw, err := json.Marshal(obj)
	if err != nil {
		return map[string]any{"(object)": err.Error()}
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return map[string]any{"(object)": err.Error()}
	}
	return out
}

// fieldDiff is a value that does not come back from a round trip.
type fieldDiff struct {
	path       string
	what       string // "is lost", "changes", "appears"
	sent, back any
}

// say words the difference, with whose field it is and how it came about:
// "spec.schedule is lost converting through the internal type (sent "x", read back "")".
func (d fieldDiff) say(of, how string) string {
	return fmt.Sprintf("%s%s %s %s (sent %s, read back %s)", display(d.path), of, d.what, how, short(d.sent), short(d.back))
}

// diffValues compares two JSON values; empty values count as absent.
func diffValues(path string, sent, back any) []fieldDiff {
	sm, sok := sent.(map[string]any)
	bm, bok := back.(map[string]any)
	// An object that does not come back at all: name its fields.
	if sok && back == nil {
		bm, bok = map[string]any{}, true
	} else if bok && sent == nil {
		sm, sok = map[string]any{}, true
	}
	if sok && bok {
		var out []fieldDiff
		keys := sortedKeys(sm)
		for _, k := range sortedKeys(bm) {
			if _, ok := sm[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			out = append(out, diffValues(p, sm[k], bm[k])...)
		}
		return out
	}
	sl, sok := sent.([]any)
	bl, bok := back.([]any)
	if sok && bok && len(sl) == len(bl) {
		var out []fieldDiff
		for i := range sl {
			out = append(out, diffValues(fmt.Sprintf("%s[%d]", path, i), sl[i], bl[i])...)
		}
		return out
	}
	d := fieldDiff{path: path, what: "changes", sent: sent, back: back}
	switch {
	case zero(sent) && zero(back), reflect.DeepEqual(sent, back):
		return nil
	case zero(back):
		d.what = "is lost"
	case zero(sent):
		d.what = "appears"
	}
	return []fieldDiff{d}
}
