package protobuf

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/gengo/v2/types"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
)

// Renumbering a kind no release has published: its types are numbered
// afresh, as if the record had never held them. A new kind's types replaced
// by one's own (the scaffolded CronTabSpec for the one a kubebuilder API
// had) would otherwise keep the scaffold's numbers, and generate refuses
// what would break objects stored under them. Objects stored under the old
// numbers become unreadable, which is why a kind a release published (api
// snapshot) is never renumbered.

// Options are what a run of Generate is asked, besides the API.
type Options struct {
	// Renumber are the kinds (or subresource request types) to number afresh,
	// as <group package>/<version>/<Kind>.
	Renumber []string
	// Published are the kinds recorded releases published, by
	// <full group>/<version>/<Kind>, with the release that did.
	Published map[string]string
}

// Unit names a kind of a version as --renumber takes it.
func Unit(g *model.Group, v *model.Version, kind string) string {
	return g.Name + "/" + v.Name + "/" + kind
}

// checkRenumber refuses --renumber of what the API does not have, or of a
// kind a release published.
func checkRenumber(api *model.API, opts Options) error {
	units := map[string]bool{}
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			for _, k := range v.Kinds {
				units[Unit(g, v, k.Kind)] = true
				if rel, ok := opts.Published[g.FullName+"/"+v.Name+"/"+k.Kind]; ok && slices.Contains(opts.Renumber, Unit(g, v, k.Kind)) {
					return fmt.Errorf("--renumber %s: release %s published %s %s/%s (pkg/apis/testdata/%s): objects are stored under its protobuf numbers, which stay its numbers for good; keep the fields as they were (see \"Evolving an API safely\" in docs/versions.md)",
						Unit(g, v, k.Kind), rel, k.Kind, g.FullName, v.Name, rel)
				}
			}
			for _, r := range v.Requests {
				units[Unit(g, v, r)] = true
			}
		}
	}
	for _, u := range opts.Renumber {
		if !units[u] {
			return fmt.Errorf("--renumber %s: the API has no such kind: want <group>/<version>/<Kind>, one of %s", u, strings.Join(slices.Sorted(maps.Keys(units)), ", "))
		}
	}
	return nil
}

// reach lists the structs of the package a unit's types hold (the kind and
// its list), through the package's types and through the record (a struct
// since renamed keeps its record under its old name until this run).
func (g *protoGen) reach(unit []string) map[string]bool {
	out := map[string]bool{}
	var walk func(name string)
	var hold func(t *types.Type)
	hold = func(t *types.Type) {
		for t != nil {
			switch {
			case t.Kind == types.Alias && t.Underlying != nil:
				t = t.Underlying
			case t.Kind == types.Pointer || t.Kind == types.Slice || t.Kind == types.Array || t.Kind == types.Map:
				if t.Kind == types.Map && t.Key != nil {
					hold(t.Key)
				}
				t = t.Elem
			case t.Kind == types.Struct && t.Name.Package == g.pkg:
				walk(t.Name.Name)
				return
			default:
				return
			}
		}
	}
	walk = func(name string) {
		if out[name] {
			return
		}
		out[name] = true
		if g.universe == nil {
			return
		}
		if t := g.universe.Types[name]; t != nil {
			for _, m := range t.Members {
				hold(m.Type)
			}
		}
		if rec := g.rec[name]; rec != nil {
			for _, f := range rec.Fields {
				if f.Type != "" {
					walk(f.Type)
				}
			}
		}
	}
	for _, name := range unit {
		if (g.universe != nil && g.universe.Types[name] != nil) || g.rec[name] != nil {
			walk(name)
		}
	}
	return out
}

// renumber drops from the record the types of the units to renumber that no
// other unit holds, and says so in a warning.
func (g *protoGen) renumber(units [][]string, renumber map[string]bool, unitName func(string) string) []string {
	drop, keep := map[string]bool{}, map[string]bool{}
	var named []string
	for _, u := range units {
		if renumber[unitName(u[0])] {
			maps.Copy(drop, g.reach(u))
			named = append(named, unitName(u[0]))
		} else {
			maps.Copy(keep, g.reach(u))
		}
	}
	var dropped []string
	for _, name := range slices.Sorted(maps.Keys(drop)) {
		if keep[name] {
			continue
		}
		if g.rec[name] != nil || g.legacy[name] != nil {
			dropped = append(dropped, name)
		}
		delete(g.rec, name)
		delete(g.recorded, name)
		delete(g.legacy, name)
	}
	if len(named) == 0 {
		return nil
	}
	if len(dropped) == 0 {
		return []string{fmt.Sprintf("--renumber %s: no protobuf field numbers were recorded for it in %s; it is numbered as a new kind", strings.Join(named, ", "), g.recPath)}
	}
	return []string{fmt.Sprintf("--renumber %s: the protobuf fields of %s are numbered afresh in %s; objects of it stored under the old numbers can no longer be read",
		strings.Join(named, ", "), strings.Join(dropped, ", "), g.recPath)}
}

// wayOut is what a numbering error of a type held by the units says to do
// when no object stored under the old numbers needs to be read: renumber
// them (no hand edit of the record), unless a release published one.
func (g *protoGen) wayOut(typ string, units [][]string, unitName func(string) string, published func(string) string) string {
	var flags, names []string
	for _, u := range units {
		if !g.reach(u)[typ] {
			continue
		}
		if rel := published(u[0]); rel != "" {
			return fmt.Sprintf("\n%s is in release %s (pkg/apis/testdata/%s): objects are stored under these numbers, so they stay; keep the field as it was (see \"Evolving an API safely\" in docs/versions.md)", u[0], rel, rel)
		}
		flags = append(flags, "--renumber "+unitName(u[0]))
		names = append(names, u[0])
	}
	if len(flags) == 0 {
		return ""
	}
	return fmt.Sprintf("\nIf no stored object of %s needs to be read again (no release published it: there is no api snapshot of it), number its fields afresh: apiserver-boot generate %s (objects stored under the old numbers become unreadable)",
		strings.Join(names, ", "), strings.Join(flags, " "))
}

func sliceSet(s []string) map[string]bool {
	out := map[string]bool{}
	for _, x := range s {
		out[x] = true
	}
	return out
}
