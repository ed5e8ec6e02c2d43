// Package protobuf writes zz_generated.protobuf.go in every versioned
// package: the Marshal, Unmarshal and Reset methods through which
// k8s.io/apimachinery's protobuf serializer speaks
// application/vnd.kubernetes.protobuf, in the Kubernetes wire format
// (TypeMeta carried by the envelope, ObjectMeta and the other Kubernetes types
// through their own protobuf methods). Field numbers are kept for life in
// each version's fieldnumbers.yaml (fieldnumbers.go).
//
// Upstream go-to-protobuf needs protoc, a gogo plugin and a GOPATH-shaped
// proto tree, and exits the process on errors; this covers the same wire
// format for the types apiserver-boot generates, in the one generate pass.
package protobuf

import (
	"errors"
	"fmt"
	"go/ast"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/types"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/templates"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// protoType holds the generated code of one struct type, field by field:
// Size terms, MarshalToSizedBuffer statements (in field order; the template
// emits them last field first, as the buffer is written from its end), and
// Unmarshal cases.
type protoType struct {
	Name string
	// Methods name the methods declared (Own: only the three it names).
	Methods   methodSet
	Size      []string
	Marshal   []string
	Unmarshal []string
}

// Reversed returns the marshal statements last field first.
func (t protoType) Reversed() []string {
	out := make([]string, len(t.Marshal))
	for i, s := range t.Marshal {
		out[len(t.Marshal)-1-i] = s
	}
	return out
}

// Result is what a run settled.
type Result struct {
	Files []files.File
	// Numbers are the field numbers of each version package, by import path.
	Numbers map[string]Numbers
	// Partial: some kind is served without protobuf, so clients must not
	// prefer it.
	Partial bool
	// Renumbered say what Options.Renumber numbered afresh.
	Renumbered []string
}

// Generate writes the protobuf methods and field number records of every
// version of api, from the loaded universe.
func Generate(api *model.API, c *generator.Context, opts Options) (*Result, error) {
	res := &Result{Numbers: map[string]Numbers{}}
	if err := checkRenumber(api, opts); err != nil {
		return nil, err
	}
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			pkg := c.Universe.Package(v.Package)
			path := fieldNumbersPath(v)
			rec, err := readFieldNumbers(path)
			if err != nil {
				return nil, err
			}
			var legacy map[string]map[string]int
			var legacyWires map[string]map[string]string
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				if legacy, legacyWires, err = legacyNumbers(v.Dir); err != nil {
					return nil, err
				}
			}
			rel, _ := filepath.Rel(api.Root, path)
			pg := &protoGen{legacy: legacy, legacyWires: legacyWires, universe: pkg, pkg: v.Package, seen: map[string]bool{}, imports: map[string]string{}, rec: rec, recorded: rec.clone(), v: v, root: api.Root, recPath: rel}
			// Each kind is encoded with its list, all or nothing: a kind that
			// cannot be, and never was, is served without protobuf (JSON still
			// works; protobuf requests get 406), with a warning. A kind the
			// record shows was encoded before must stay so: its stored objects
			// are protobuf, which only its protobuf methods can read.
			units := [][]string{}
			for _, r := range v.Requests {
				units = append(units, []string{r})
			}
			for _, k := range v.Kinds {
				units = append(units, []string{k.Kind, k.Kind + "List"})
			}
			pg.roots = roots(units)
			unitName := func(name string) string { return Unit(g, v, name) }
			published := func(name string) string { return opts.Published[g.FullName+"/"+v.Name+"/"+name] }
			if pkg != nil {
				res.Renumbered = append(res.Renumbered, pg.renumber(units, sliceSet(opts.Renumber), unitName)...)
			}
			for _, unit := range units {
				if err := pg.collectAll(pkg, unit); err != nil {
					var numbering *numberingError
					if errors.As(err, &numbering) {
						return nil, fmt.Errorf("%w%s", err, pg.wayOut(numbering.typ, units, unitName, published))
					}
					if pg.recorded[unit[0]] != nil || pg.legacy[unit[0]] != nil {
						return nil, fmt.Errorf("%s.%s cannot keep its protobuf encoding: %w. Objects of %s in etcd are stored as protobuf (%s, or the protobuf code generated before, records it), "+
							"which only generated protobuf methods can read, so generate stops rather than serve the kind as JSON. %s",
							v.Package, unit[0], err, unit[0], rel, keepProtobuf(err))
					}
					api.Warnings = append(api.Warnings, fmt.Sprintf("%s.%s is served without protobuf: %v", v.Package, unit[0], err))
					res.Partial = true
				}
			}
			res.Numbers[v.Package] = pg.rec
			sort.Slice(pg.types, func(i, j int) bool { return pg.types[i].Name < pg.types[j].Name })
			b, err := templates.Render("generated/protobuf.go.tmpl", map[string]any{
				"Header": api.Header, "Package": v.Name, "Types": pg.types, "UsesSort": pg.usesSortIn(), "Imports": pg.imports,
			})
			if err != nil {
				return nil, err
			}
			res.Files = append(res.Files, files.File{Path: filepath.Join(v.Dir, "zz_generated.protobuf.go"), Content: b})
			if len(pg.rec) > 0 {
				res.Files = append(res.Files, files.File{Path: path, Content: pg.rec.render(g.Name + "/" + v.Name)})
			}
		}
	}
	return res, nil
}

type protoGen struct {
	pkg     string
	seen    map[string]bool
	types   []protoType
	imports map[string]string // path -> name, for Kubernetes types named in decode code
	// rec is the record of field numbers, updated as types are collected;
	// recorded is the record as read, before this run.
	rec, recorded Numbers
	v             *model.Version
	root, recPath string
	// legacy are the numbers the package's generated code used before the
	// record existed, by type and Go field name (a project's first run).
	legacy      map[string]map[string]int
	legacyWires map[string]map[string]string
	// universe is the loaded version package.
	universe *types.Package
	// roots are the object types the serializer encodes: kinds, their
	// lists and the request types of subresources.
	roots map[string]bool
}

// usesSortIn tells whether the emitted code sorts map keys.
func (g *protoGen) usesSortIn() bool {
	for _, t := range g.types {
		for _, l := range t.Marshal {
			if strings.Contains(l, "sort.Slice") {
				return true
			}
		}
	}
	return false
}

func IsTypeMeta(t *types.Type) bool {
	return t.Name.Package == "k8s.io/apimachinery/pkg/apis/meta/v1" && t.Name.Name == "TypeMeta"
}

// collectAll encodes the named types, or, on error, none of what it added.
func (g *protoGen) collectAll(pkg *types.Package, names []string) error {
	n := len(g.types)
	seen := map[string]bool{}
	for k := range g.seen {
		seen[k] = true
	}
	imports := map[string]string{}
	for k, v := range g.imports {
		imports[k] = v
	}
	rec := g.rec.clone()
	for _, name := range names {
		if t := pkg.Types[name]; t != nil {
			if err := g.collect(t); err != nil {
				g.types, g.seen, g.imports, g.rec = g.types[:n], seen, imports, rec
				return err
			}
		}
	}
	return nil
}

// collect generates the methods of a local struct type and of the local structs it holds.
func (g *protoGen) collect(t *types.Type) error {
	if g.seen[t.Name.Name] {
		return nil
	}
	g.seen[t.Name.Name] = true
	if err := g.checkRoot(t); err != nil {
		return err
	}
	fields, err := g.number(t)
	if err != nil {
		var numbering *numberingError
		if errors.As(err, &numbering) && numbering.typ == "" {
			numbering.typ = t.Name.Name
		}
		return err
	}
	pt := protoType{Name: t.Name.Name, Methods: g.methodsOf(t)}
	for _, f := range fields {
		field := fmt.Sprintf("%s.%s", t.Name.Name, f.member.Name)
		code, err := g.field(f.member.Type, "m."+f.member.Name, f.num, field)
		if err != nil {
			var numbering *numberingError
			if errors.As(err, &numbering) || strings.Contains(err.Error(), ".go:") {
				return err
			}
			return fmt.Errorf("%s: %w", g.pos(t.Name.Name, f.member.Name), err) // the innermost field's
		}
		pt.Size = append(pt.Size, code.size)
		pt.Marshal = append(pt.Marshal, code.marshal)
		pt.Unmarshal = append(pt.Unmarshal, fmt.Sprintf("case %d:\n%s", f.num, code.unmarshal))
	}
	g.types = append(g.types, pt)
	return nil
}

// numberedField is a member of a struct with its protobuf field number.
type numberedField struct {
	member types.Member
	key    string
	num    int
}

// numberingError is a field number generate refuses: nothing is written, and
// no fallback to JSON is taken.
type numberingError struct {
	msg string
	typ string // the struct being numbered
}

func (e *numberingError) Error() string { return e.msg }

// number gives every encoded member of t its field number, from the record:
// a recorded field keeps its number whatever its place, Go name or file; a
// new field gets the next number after every one the type has used; the
// fields no longer declared are reserved. A type the record does not hold is
// numbered in declaration order (or by its protobuf tags), which is how every
// type was numbered before the record existed: a project's first run records
// its stored numbering as it is.
func (g *protoGen) number(t *types.Type) ([]numberedField, error) {
	name := t.Name.Name
	rec := g.rec[name]
	fresh := rec == nil
	if fresh {
		rec = &TypeNumbers{Fields: map[string]fieldNumber{}}
	}
	var fields []numberedField
	wires := map[string]string{}
	byKey := map[string]string{} // key -> Go name
	for _, m := range t.Members {
		if IsTypeMeta(m.Type) || reflect.StructTag(m.Tags).Get("json") == "-" {
			continue // TypeMeta travels in the envelope, as in Kubernetes' own protobuf
		}
		key := FieldKey(m)
		if prev, dup := byKey[key]; dup {
			return nil, numberingErrorf("%s: fields %s.%s and %s.%s (%s) have the same JSON name %q", g.pos(name, m.Name), name, prev, name, m.Name, g.pos(name, prev), key)
		}
		byKey[key] = m.Name
		wires[key] = g.wireType(m.Type)
		fields = append(fields, numberedField{member: m, key: key})
	}
	legacy := g.legacy[name]
	if fresh && legacy != nil {
		if err := g.legacyRecord(name, rec, fields, wires, legacy); err != nil {
			return nil, err
		}
		fresh = false
	} else if !fresh {
		if err := g.renamedEmbedded(name, rec, fields, byKey); err != nil {
			return nil, err
		}
	}
	if err := g.assign(name, rec, fields, byKey, wires, fresh, legacy); err != nil {
		return nil, err
	}
	if err := g.retire(name, rec, fields, byKey); err != nil {
		return nil, err
	}
	if !fresh {
		if err := g.movedOut(name, rec, fields); err != nil {
			return nil, err
		}
	}
	for _, f := range fields {
		typ := g.messageType(f.member.Type)
		if old := rec.Fields[f.key].Type; old != "" && typ != "" && old != typ {
			if err := g.retype(name, f, old, typ); err != nil {
				return nil, err
			}
		}
		rec.Fields[f.key] = fieldNumber{Number: f.num, Wire: wires[f.key], Type: typ}
	}
	g.rec[name] = rec
	return fields, nil
}

// legacyRecord starts the record of a type from the numbers the package's
// generated code decodes (a project's first run after the record came): every
// field it encoded keeps that number; the fields it encoded that are gone are
// reserved, unless a new field takes the number with a protobuf tag (a Go
// field renamed before the upgrade). A new untagged field encoded like a gone
// one may be that one renamed: that is asked, not guessed.
func (g *protoGen) legacyRecord(name string, rec *TypeNumbers, fields []numberedField, wires map[string]string, legacy map[string]int) error {
	declared, tags := map[string]bool{}, map[int]bool{}
	for _, f := range fields {
		declared[f.member.Name] = true
		if n := protoNumber(f.member.Tags); n > 0 {
			tags[n] = true
		}
	}
	code := filepath.Join(filepath.Dir(g.recPath), "zz_generated.protobuf.go")
	for _, goName := range slices.Sorted(maps.Keys(legacy)) {
		n, wire := legacy[goName], g.legacyWires[name][goName]
		if declared[goName] || tags[n] {
			continue
		}
		for _, f := range fields {
			if _, old := legacy[f.member.Name]; old || protoNumber(f.member.Tags) > 0 || wires[f.key] != wire {
				continue
			}
			return numberingErrorf("%s: %s.%s is new, and %s.%s, which the protobuf code stored objects were written with (%s) encodes as field %d (%s), is no longer declared: "+
				"if %s is %s renamed, give it the tag `protobuf:\"bytes,%d,opt,name=%s\"` to keep its stored values; if it is a new field, give it a tag with a number above %d",
				g.pos(name, f.member.Name), name, f.member.Name, name, goName, code, n, wire, f.member.Name, goName, n, f.key, maxValue(legacy))
		}
		rec.Reserved = append(rec.Reserved, reservedNumber{Number: n, Name: goName, Wire: wire})
	}
	return nil
}

// renamedEmbedded carries the number of an inlined embedded struct whose Go
// name changed (the struct renamed): its key is inline:<GoName>, and the
// struct is one nested message whose stored values must stay where they are.
func (g *protoGen) renamedEmbedded(name string, rec *TypeNumbers, fields []numberedField, byKey map[string]string) error {
	var gone, added []string
	for _, k := range slices.Sorted(maps.Keys(rec.Fields)) {
		if _, ok := byKey[k]; !ok && strings.HasPrefix(k, "inline:") {
			gone = append(gone, k)
		}
	}
	for _, f := range fields {
		if _, ok := rec.Fields[f.key]; !ok && strings.HasPrefix(f.key, "inline:") {
			added = append(added, f.key)
		}
	}
	switch {
	case len(gone) == 1 && len(added) == 1:
		rec.Fields[added[0]] = rec.Fields[gone[0]]
		delete(rec.Fields, gone[0])
	case len(gone) > 0 && len(added) > 0:
		return numberingErrorf("%s: %s: the embedded structs %s are gone and %s are new: rename one embedded struct at a time, so that generate can keep each one's stored values",
			g.pos(name, strings.TrimPrefix(added[0], "inline:")), name, strings.Join(gone, ", "), strings.Join(added, ", "))
	}
	return nil
}

// retype handles a field whose messages are now another struct of the
// package than the record says: a renamed struct takes the old one's numbers
// (and the old name's record goes when the old struct is gone); a struct that
// has numbers of its own must agree with the old one's, or stored values
// would be read into other fields.
func (g *protoGen) retype(name string, f numberedField, oldType, newType string) error {
	oldRec := g.rec[oldType]
	if oldRec == nil {
		return nil
	}
	newRec := g.rec[newType]
	if newRec == nil && !g.seen[newType] {
		g.rec[newType] = g.rec.clone()[oldType]
		if g.universe == nil || g.universe.Types[oldType] == nil {
			delete(g.rec, oldType)
		}
		return nil
	}
	if newRec == nil {
		newRec = &TypeNumbers{}
	}
	for _, k := range slices.Sorted(maps.Keys(oldRec.Fields)) {
		of := oldRec.Fields[k]
		nf, ok := newRec.Fields[k]
		owner := newRec.owner(of.Number)
		if (ok && (nf.Number != of.Number || nf.Wire != of.Wire)) || (!ok && owner != "" && owner != "reserved (was "+k+")") {
			got := fmt.Sprintf("%s holds %d for %s", newType, of.Number, owner)
			if ok {
				got = fmt.Sprintf("%s numbers it %d (%s)", newType, nf.Number, nf.Wire)
			}
			return numberingErrorf("%s: %s.%s now holds %s instead of %s, with another numbering: objects in etcd hold %s.%s as field %d (%s), but %s. "+
				"Keep %s, or give %s the numbers of %s in %s",
				g.pos(name, f.member.Name), name, f.member.Name, newType, oldType, oldType, k, of.Number, of.Wire, got, oldType, newType, oldType, g.recPath)
		}
	}
	if g.universe == nil || g.universe.Types[oldType] == nil {
		delete(g.rec, oldType)
	}
	return nil
}

func numberingErrorf(format string, args ...any) error {
	return &numberingError{msg: fmt.Sprintf(format, args...)}
}

// assign gives each field its number: in declaration order for a fresh
// type; otherwise the recorded (or legacy) one, a tag's, a reserved one given
// back to its own field, or the next unused one.
func (g *protoGen) assign(name string, rec *TypeNumbers, fields []numberedField, byKey, wires map[string]string, fresh bool, legacy map[string]int) error {
	taken := rec.numbers() // numbers a new field may not get
	for _, f := range fields {
		if n := protoNumber(f.member.Tags); n > 0 {
			taken[n] = true
		}
	}
	for _, n := range legacy {
		taken[n] = true
	}
	num, next := 0, max(rec.max(), maxValue(legacy))
	used := map[int]string{} // number -> Go name, in this declaration
	for i := range fields {
		f := &fields[i]
		tag := protoNumber(f.member.Tags)
		recorded, isRecorded := rec.Fields[f.key]
		switch {
		case fresh:
			num++
			if tag > 0 {
				num = tag
			}
			f.num = num
		case legacy[f.member.Name] > 0:
			f.num = legacy[f.member.Name]
			if tag > 0 && tag != f.num {
				return numberingErrorf("%s: %s.%s has protobuf tag number %d, but the generated code stored objects were written with (zz_generated.protobuf.go) encodes it as %d. Remove the tag, or make it %d",
					g.pos(name, f.member.Name), name, f.member.Name, tag, f.num, f.num)
			}
		case isRecorded:
			f.num = recorded.Number
			if tag > 0 && tag != recorded.Number {
				return numberingErrorf("%s: %s.%s has protobuf tag number %d, but %s records %d for %q: objects in etcd hold it under %d. Remove the tag, or make it %d",
					g.pos(name, f.member.Name), name, f.member.Name, tag, g.recPath, recorded.Number, f.key, recorded.Number, recorded.Number)
			}
			if w := wires[f.key]; w != recorded.Wire {
				return numberingErrorf("%s: %s.%s (JSON %q) is now encoded as %s, but objects in etcd hold its field %d as %s (%s): they could no longer be read. "+
					"Keep a type encoded as %s, or give the new field another JSON name (%d stays reserved for the old one)",
					g.pos(name, f.member.Name), name, f.member.Name, f.key, w, recorded.Number, recorded.Wire, g.recPath, recorded.Wire, recorded.Number)
			}
		case tag == 0 && rec.reservedFor(f.key, wires[f.key]) > 0:
			// A field removed and declared again, encoded as before: stored
			// objects written before its removal hold it under its old number.
			f.num = rec.reservedFor(f.key, wires[f.key])
			rec.unreserve(f.num)
		case tag > 0:
			if owner := rec.owner(tag); owner != "" {
				if _, declared := byKey[owner]; !declared && !strings.HasPrefix(owner, "reserved") {
					owner += " (no longer declared: the number stays reserved)"
				}
				source, wayOut := g.recPath, ""
				if legacy != nil {
					// No record yet: the numbers come from the generated code.
					source = filepath.Join(filepath.Dir(g.recPath), "zz_generated.protobuf.go")
					wayOut = "; if no object was ever stored with the other field, delete " + source + " (generated for the types before), and " + g.recPath + " is recorded from today's types"
				}
				return numberingErrorf("%s: %s.%s has protobuf tag number %d, which %s gives to %s: a number is never given to another field, as objects in etcd may hold the other one under it. "+
					"Remove the tag (generate numbers the field), or pick a number above %d%s",
					g.pos(name, f.member.Name), name, f.member.Name, tag, source, owner, max(rec.max(), maxValue(legacy)), wayOut)
			}
			f.num = tag
		default:
			for next++; taken[next]; next++ {
			}
			f.num = next
		}
		if prev, dup := used[f.num]; dup {
			return numberingErrorf("%s: fields %s.%s and %s.%s (%s) both have protobuf number %d: give them distinct numbers",
				g.pos(name, f.member.Name), name, f.member.Name, name, prev, g.pos(name, prev), f.num)
		}
		used[f.num] = f.member.Name
	}
	return nil
}

// retire reserves the numbers of recorded fields that are no longer declared.
// One whose JSON name is now declared by an inlined embedded struct has moved
// into it: the JSON is the same, but the embedded struct is one nested
// message, so stored objects would lose the value without a word.
func (g *protoGen) retire(name string, rec *TypeNumbers, fields []numberedField, byKey map[string]string) error {
	inlined, numOf := map[string]string{}, map[string]int{}
	for _, f := range fields {
		numOf[f.member.Name] = f.num
		if strings.HasPrefix(f.key, "inline:") {
			for _, k := range g.jsonNames(f.member.Type) {
				inlined[k] = f.member.Name
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(rec.Fields)) {
		if _, ok := byKey[key]; ok {
			continue
		}
		r := rec.Fields[key]
		if emb, ok := inlined[key]; ok {
			return numberingErrorf("%s: %s.%s moved into the embedded struct %s: its JSON is unchanged, but in protobuf %s is one nested message (field %d) and objects in etcd hold %s as field %d of %s, "+
				"so they would lose its value. Keep %s declared in %s",
				g.pos(name, emb), name, key, emb, emb, numOf[emb], key, r.Number, name, key, name)
		}
		delete(rec.Fields, key)
		rec.Reserved = append(rec.Reserved, reservedNumber{Number: r.Number, Name: key, Wire: r.Wire})
	}
	return nil
}

// movedOut refuses a new field whose JSON name an inlined struct recorded and
// no longer declares: it moved out of it, and stored objects hold it in that
// struct's message.
func (g *protoGen) movedOut(name string, rec *TypeNumbers, fields []numberedField) error {
	for _, f := range fields {
		if _, old := rec.Fields[f.key]; old || strings.HasPrefix(f.key, "inline:") {
			continue
		}
		for _, e := range fields {
			s := LocalStruct(g.pkg, e.member.Type)
			if !strings.HasPrefix(e.key, "inline:") || s == nil || g.recorded[s.Name.Name] == nil {
				continue
			}
			if r, ok := g.recorded[s.Name.Name].Fields[f.key]; ok && !slices.Contains(g.jsonNames(s), f.key) {
				return numberingErrorf("%s: %s.%s moved out of the embedded struct %s: its JSON is unchanged, but objects in etcd hold it as field %d of %s, the nested message %s is (field %d), "+
					"so they would lose its value. Keep it declared in %s",
					g.pos(name, f.member.Name), name, f.key, e.member.Name, r.Number, s.Name.Name, e.member.Name, e.num, s.Name.Name)
			}
		}
	}
	return nil
}

// numbers are every number the type has used.
func (t *TypeNumbers) numbers() map[int]bool {
	out := map[int]bool{}
	for _, f := range t.Fields {
		out[f.Number] = true
	}
	for _, r := range t.Reserved {
		out[r.Number] = true
	}
	return out
}

// FieldKey is the record key of a member: its JSON name, or "inline:<GoName>"
// for an embedded struct inlined into the parent's JSON.
func FieldKey(m types.Member) string {
	parts := strings.Split(reflect.StructTag(m.Tags).Get("json"), ",")
	for _, p := range parts[1:] {
		if p == "inline" {
			return "inline:" + m.Name
		}
	}
	if parts[0] != "" {
		return parts[0]
	}
	if m.Embedded {
		return "inline:" + m.Name
	}
	return m.Name
}

// messageType names the struct of this package a field's messages are, through
// pointers, slices and map values, or "".
func (g *protoGen) messageType(t *types.Type) string {
	for {
		switch {
		case t.Kind == types.Alias && t.Underlying != nil && (t.Underlying.Kind == types.Slice || t.Underlying.Kind == types.Map || t.Underlying.Kind == types.Pointer):
			t = t.Underlying
		case t.Kind == types.Pointer || t.Kind == types.Slice || t.Kind == types.Map:
			t = t.Elem
		case t.Kind == types.Struct && t.Name.Package == g.pkg:
			return t.Name.Name
		default:
			return ""
		}
	}
}

func maxValue(m map[string]int) int {
	n := 0
	for _, v := range m {
		n = max(n, v)
	}
	return n
}

// LocalStruct is the struct of package pkg t is, or points to, or nil.
func LocalStruct(pkg string, t *types.Type) *types.Type {
	if t.Kind == types.Pointer {
		t = t.Elem
	}
	if t.Kind == types.Struct && t.Name.Package == pkg {
		return t
	}
	return nil
}

// jsonNames lists the JSON names a struct contributes to the object it is
// inlined into.
func (g *protoGen) jsonNames(t *types.Type) []string {
	if t.Kind == types.Pointer {
		t = t.Elem
	}
	if t.Kind != types.Struct {
		return nil
	}
	var out []string
	for _, m := range t.Members {
		if key := FieldKey(m); strings.HasPrefix(key, "inline:") {
			out = append(out, g.jsonNames(m.Type)...)
		} else if reflect.StructTag(m.Tags).Get("json") != "-" {
			out = append(out, key)
		}
	}
	return out
}

// wireType is how a field's values travel, as far as reading stored objects
// is concerned: varint, fixed32, fixed64, bytes (strings and []byte),
// message or map. A field's wire type may not change while objects hold it.
func (g *protoGen) wireType(t *types.Type) string {
	for t.Kind == types.Alias && t.Underlying != nil && (t.Underlying.Kind == types.Slice || t.Underlying.Kind == types.Map || t.Underlying.Kind == types.Pointer) {
		t = t.Underlying
	}
	if t.Kind == types.Pointer || t.Kind == types.Slice {
		if t.Kind == types.Slice && t.Elem.Kind == types.Builtin && t.Elem.Name.Name == "byte" {
			return "bytes"
		}
		t = t.Elem
	}
	if s, ok := g.scalar(t); ok {
		return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(s.wire, "protowire."), "Type"))
	}
	if t.Kind == types.Map {
		return "map"
	}
	return "message"
}

// pos is where field goName of type typeName is declared, as file:line
// relative to the project, or the package directory if not found.
func (g *protoGen) pos(typeName, goName string) string {
	if g.v == nil {
		return typeName
	}
	for _, f := range g.v.Files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok || ts.Name.Name != typeName {
					continue
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, af := range st.Fields.List {
					names := []string{model.EmbeddedName(af.Type)}
					if len(af.Names) > 0 {
						names = nil
						for _, n := range af.Names {
							names = append(names, n.Name)
						}
					}
					if slices.Contains(names, goName) {
						p := g.v.Fset.Position(af.Pos())
						rel, _ := filepath.Rel(g.root, p.Filename)
						return fmt.Sprintf("%s:%d", rel, p.Line)
					}
				}
			}
		}
	}
	rel, _ := filepath.Rel(g.root, g.v.Dir)
	return rel
}

// protoNumber reads the field number of a `protobuf:"bytes,3,opt,name=x"` tag.
func protoNumber(tags string) int {
	parts := strings.Split(reflect.StructTag(tags).Get("protobuf"), ",")
	if len(parts) > 1 {
		n, _ := strconv.Atoi(parts[1])
		return n
	}
	return 0
}

// protoScalar says how a builtin is written: its wire type, the size of a
// value (without the tag), the statement writing a value backwards into
// dAtA, and the function reading one.
type protoScalar struct {
	wire, size, put, consume string
}

// sizeOf is the size of value x, without the tag.
func (s protoScalar) sizeOf(x string) string {
	if !strings.Contains(s.size, "%s") {
		return s.size // fixed width
	}
	return fmt.Sprintf(s.size, x)
}

func (g *protoGen) scalar(t *types.Type) (protoScalar, bool) {
	u := t
	for u.Kind == types.Alias && u.Underlying != nil {
		u = u.Underlying
	}
	if u.Kind != types.Builtin {
		return protoScalar{}, false
	}
	switch u.Name.Name {
	case "string":
		return protoScalar{"protowire.BytesType", "protowire.SizeBytes(len(%s))", "i = zzProtoPutBytes(dAtA, i, %s)", "protowire.ConsumeString"}, true
	case "bool":
		return protoScalar{"protowire.VarintType", "1", "i = zzProtoPutVarint(dAtA, i, protowire.EncodeBool(bool(%s)))", "zzProtoConsumeBool"}, true
	case "int", "int8", "int16", "int32", "int64":
		return protoScalar{"protowire.VarintType", "protowire.SizeVarint(uint64(int64(%s)))", "i = zzProtoPutVarint(dAtA, i, uint64(int64(%s)))", "zzProtoConsumeInt"}, true
	case "uint", "uint8", "uint16", "uint32", "uint64":
		return protoScalar{"protowire.VarintType", "protowire.SizeVarint(uint64(%s))", "i = zzProtoPutVarint(dAtA, i, uint64(%s))", "protowire.ConsumeVarint"}, true
	case "float64":
		return protoScalar{"protowire.Fixed64Type", "8", "i = zzProtoPutFixed64(dAtA, i, math.Float64bits(float64(%s)))", "zzProtoConsumeFloat64"}, true
	case "float32":
		return protoScalar{"protowire.Fixed32Type", "4", "i = zzProtoPutFixed32(dAtA, i, math.Float32bits(float32(%s)))", "zzProtoConsumeFloat32"}, true
	}
	return protoScalar{}, false
}

// message reports whether t is written as a nested message, and checks it can
// be: a struct of this package (whose methods are generated here), or a type
// with the methods go-to-protobuf generates for Kubernetes' own types.
func (g *protoGen) message(t *types.Type, field string) (bool, error) {
	if t.Kind != types.Struct {
		return false, nil
	}
	if t.Name.Package == g.pkg {
		return true, g.collect(t)
	}
	for _, m := range []string{"Size", "MarshalToSizedBuffer", "Unmarshal"} {
		if _, ok := t.Methods[m]; !ok {
			return false, fmt.Errorf("protobuf: field %s has type %s, which has no protobuf encoding (Size, MarshalToSizedBuffer and Unmarshal methods); use a Kubernetes type or a struct of this package", field, t.Name)
		}
	}
	return true, nil
}

// protoField is the code of one field: a Size term, MarshalToSizedBuffer
// statements, and the body of its Unmarshal case.
type protoField struct {
	size, marshal, unmarshal string
}

// putMessage writes message x (addressable) backwards, length first.
func putMessage(x string, ms methodSet) string {
	return fmt.Sprintf("{\nn, err := %s.%s(dAtA[:i])\nif err != nil {\nreturn 0, err\n}\ni -= n\ni = zzProtoPutVarint(dAtA, i, uint64(n))\n}", x, ms.MarshalToSizedBuffer)
}

func putTag(num int, wire string) string {
	return fmt.Sprintf("i = zzProtoPutTag(dAtA, i, %d, %s)", num, wire)
}

// field returns the code of a field of type t, read as x.
func (g *protoGen) field(t *types.Type, x string, num int, field string) (protoField, error) {
	// A named slice, map or pointer type (type Tags []string) is encoded as what it names.
	for t.Kind == types.Alias && t.Underlying != nil && (t.Underlying.Kind == types.Slice || t.Underlying.Kind == types.Map || t.Underlying.Kind == types.Pointer) {
		t = t.Underlying
	}
	tagSize := fmt.Sprintf("protowire.SizeTag(%d)", num)
	conv := func(t *types.Type, v string) string { return g.qualified(t) + "(" + v + ")" }
	if s, ok := g.scalar(t); ok {
		return protoField{
			size:      fmt.Sprintf("n += %s + %s", tagSize, s.sizeOf(x)),
			marshal:   fmt.Sprintf(s.put, x) + "\n" + putTag(num, s.wire),
			unmarshal: expectWire(s.wire, fmt.Sprintf("v, n := %s(b)\nif n < 0 {\nreturn protowire.ParseError(n)\n}\n%s = %s\nb = b[n:]", s.consume, x, conv(t, "v"))),
		}, nil
	}
	switch t.Kind {
	case types.Pointer:
		elem := t.Elem
		if s, ok := g.scalar(elem); ok {
			return protoField{
				size:      fmt.Sprintf("if %s != nil {\nn += %s + %s\n}", x, tagSize, s.sizeOf("*"+x)),
				marshal:   fmt.Sprintf("if %s != nil {\n%s\n%s\n}", x, fmt.Sprintf(s.put, "*"+x), putTag(num, s.wire)),
				unmarshal: expectWire(s.wire, fmt.Sprintf("v, n := %s(b)\nif n < 0 {\nreturn protowire.ParseError(n)\n}\nvv := %s\n%s = &vv\nb = b[n:]", s.consume, conv(elem, "v"), x)),
			}, nil
		}
		if ok, err := g.message(elem, field); err != nil || !ok {
			return protoField{}, orUnsupported(err, field, t)
		}
		ms := g.methodsOf(elem)
		return protoField{
			size:      fmt.Sprintf("if %s != nil {\nn += %s + protowire.SizeBytes(%s.%s())\n}", x, tagSize, x, ms.Size),
			marshal:   fmt.Sprintf("if %s != nil {\n%s\n%s\n}", x, putMessage(x, ms), putTag(num, "protowire.BytesType")),
			unmarshal: expectWire("protowire.BytesType", fmt.Sprintf("v, n := protowire.ConsumeBytes(b)\nif n < 0 {\nreturn protowire.ParseError(n)\n}\nif %s == nil {\n%s = new(%s)\n}\nif err := %s.%s(v); err != nil {\nreturn err\n}\nb = b[n:]", x, x, g.qualified(elem), x, ms.Unmarshal)),
		}, nil
	case types.Struct:
		if ok, err := g.message(t, field); err != nil || !ok {
			return protoField{}, orUnsupported(err, field, t)
		}
		ms := g.methodsOf(t)
		return protoField{
			size:      fmt.Sprintf("n += %s + protowire.SizeBytes(%s.%s())", tagSize, x, ms.Size),
			marshal:   putMessage(x, ms) + "\n" + putTag(num, "protowire.BytesType"),
			unmarshal: expectWire("protowire.BytesType", fmt.Sprintf("v, n := protowire.ConsumeBytes(b)\nif n < 0 {\nreturn protowire.ParseError(n)\n}\nif err := %s.%s(v); err != nil {\nreturn err\n}\nb = b[n:]", x, ms.Unmarshal)),
		}, nil
	case types.Slice:
		elem := t.Elem
		if elem.Kind == types.Builtin && elem.Name.Name == "byte" {
			return protoField{
				size:      fmt.Sprintf("n += %s + protowire.SizeBytes(len(%s))", tagSize, x),
				marshal:   fmt.Sprintf("i = zzProtoPutBytes(dAtA, i, %s)\n%s", x, putTag(num, "protowire.BytesType")),
				unmarshal: expectWire("protowire.BytesType", fmt.Sprintf("v, n := protowire.ConsumeBytes(b)\nif n < 0 {\nreturn protowire.ParseError(n)\n}\n%s = append(%s[:0], v...)\nb = b[n:]", x, x)),
			}, nil
		}
		// Repeated fields are unpacked, one tag per element, as in Kubernetes' proto2 messages.
		if s, ok := g.scalar(elem); ok {
			return protoField{
				size:      fmt.Sprintf("for _, e := range %s {\nn += %s + %s\n}", x, tagSize, s.sizeOf("e")),
				marshal:   fmt.Sprintf("for j := len(%s) - 1; j >= 0; j-- {\n%s\n%s\n}", x, fmt.Sprintf(s.put, x+"[j]"), putTag(num, s.wire)),
				unmarshal: expectWire(s.wire, fmt.Sprintf("v, n := %s(b)\nif n < 0 {\nreturn protowire.ParseError(n)\n}\n%s = append(%s, %s)\nb = b[n:]", s.consume, x, x, conv(elem, "v"))),
			}, nil
		}
		if ok, err := g.message(elem, field); err != nil || !ok {
			return protoField{}, orUnsupported(err, field, t)
		}
		ms := g.methodsOf(elem)
		return protoField{
			size:      fmt.Sprintf("for j := range %s {\nn += %s + protowire.SizeBytes(%s[j].%s())\n}", x, tagSize, x, ms.Size),
			marshal:   fmt.Sprintf("for j := len(%s) - 1; j >= 0; j-- {\n%s\n%s\n}", x, putMessage(x+"[j]", ms), putTag(num, "protowire.BytesType")),
			unmarshal: expectWire("protowire.BytesType", fmt.Sprintf("v, n := protowire.ConsumeBytes(b)\nif n < 0 {\nreturn protowire.ParseError(n)\n}\nvar e %s\nif err := e.%s(v); err != nil {\nreturn err\n}\n%s = append(%s, e)\nb = b[n:]", g.qualified(elem), ms.Unmarshal, x, x)),
		}, nil
	case types.Map:
		return g.mapField(t, x, num, field)
	}
	return protoField{}, orUnsupported(nil, field, t)
}

// mapValue is how the value v of a map entry is sized, written backwards,
// declared as val, and read back.
type mapValue struct{ size, put, typ, decl, wire, dec string }

// mapValue encodes the values of map type t: scalars, or structs (or
// pointers to structs, a nil one an entry without field 2) as messages.
func (g *protoGen) mapValue(t *types.Type, field string) (mapValue, error) {
	if vs, ok := g.scalar(t.Elem); ok {
		typ := g.qualified(t.Elem)
		return mapValue{
			typ:  typ,
			size: fmt.Sprintf("l += protowire.SizeTag(2) + %s", vs.sizeOf("v")),
			put:  fmt.Sprintf("%s\n%s", fmt.Sprintf(vs.put, "v"), putTag(2, vs.wire)),
			decl: "var val " + typ, wire: vs.wire,
			dec: fmt.Sprintf("v, n := %s(entry)\nif n < 0 {\nreturn protowire.ParseError(n)\n}\nval = %s(v)\nentry = entry[n:]", vs.consume, typ),
		}, nil
	}
	elem, ptr := t.Elem, t.Elem.Kind == types.Pointer
	if ptr {
		elem = elem.Elem
	}
	if ok, err := g.message(elem, field); err != nil || !ok {
		return mapValue{}, orUnsupported(err, field, t)
	}
	ms := g.methodsOf(elem)
	v := mapValue{
		typ: g.qualified(elem), decl: "var val " + g.qualified(elem),
		size: "l += protowire.SizeTag(2) + protowire.SizeBytes(v." + ms.Size + "())",
		put:  putMessage("v", ms) + "\n" + putTag(2, "protowire.BytesType"),
		wire: "protowire.BytesType",
	}
	newVal := ""
	if ptr {
		// A nil value is an entry without field 2, read back as nil.
		v.typ, v.decl = "*"+v.typ, "var val *"+g.qualified(elem)
		v.size = fmt.Sprintf("if v != nil {\n%s\n}", v.size)
		v.put = fmt.Sprintf("if v != nil {\n%s\n}", v.put)
		newVal = "val = new(" + g.qualified(elem) + ")\n"
	}
	v.dec = "v, n := protowire.ConsumeBytes(entry)\nif n < 0 {\nreturn protowire.ParseError(n)\n}\n" + newVal + "if err := val." + ms.Unmarshal + "(v); err != nil {\nreturn err\n}\nentry = entry[n:]"
	return v, nil
}

// mapField encodes a map with scalar keys as repeated entries {1: key,
// 2: value}, keys sorted; values are scalars, or structs (or pointers to
// structs) written as messages.
func (g *protoGen) mapField(t *types.Type, x string, num int, field string) (protoField, error) {
	ks, ok := g.scalar(t.Key)
	if !ok {
		return protoField{}, orUnsupported(nil, field, t)
	}
	key := g.qualified(t.Key)
	mv, err := g.mapValue(t, field)
	if err != nil {
		return protoField{}, err
	}
	valueSize, valuePut, valueType, valueDecl, valueWire, valueDec := mv.size, mv.put, mv.typ, mv.decl, mv.wire, mv.dec
	size := fmt.Sprintf(`for k, v := range %[1]s {
_ = v
l := protowire.SizeTag(1) + %[2]s
%[3]s
n += protowire.SizeTag(%[4]d) + protowire.SizeBytes(l)
}`, x, ks.sizeOf("k"), valueSize, num)
	// Entries are written last key first, so that they read in key order.
	marshal := fmt.Sprintf(`{
keys := make([]%[1]s, 0, len(%[2]s))
for k := range %[2]s {
keys = append(keys, k)
}
sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
for j := len(keys) - 1; j >= 0; j-- {
k, v := keys[j], %[2]s[keys[j]]
end := i
%[3]s
%[4]s
%[5]s
i = zzProtoPutVarint(dAtA, i, uint64(end-i))
%[6]s
}
}`, key, x, valuePut, fmt.Sprintf(ks.put, "k"), putTag(1, ks.wire), putTag(num, "protowire.BytesType"))
	dec := fmt.Sprintf(`entry, n := protowire.ConsumeBytes(b)
if n < 0 {
return protowire.ParseError(n)
}
b = b[n:]
var key %[1]s
%[2]s
for len(entry) > 0 {
num, typ, n := protowire.ConsumeTag(entry)
if n < 0 {
return protowire.ParseError(n)
}
entry = entry[n:]
switch {
case num == 1 && typ == %[3]s:
v, n := %[4]s(entry)
if n < 0 {
return protowire.ParseError(n)
}
key = %[1]s(v)
entry = entry[n:]
case num == 2 && typ == %[5]s:
%[6]s
default:
n := protowire.ConsumeFieldValue(num, typ, entry)
if n < 0 {
return protowire.ParseError(n)
}
entry = entry[n:]
}
}
if %[7]s == nil {
%[7]s = map[%[1]s]%[8]s{}
}
%[7]s[key] = val`, key, valueDecl, ks.wire, ks.consume, valueWire, valueDec, x, valueType)
	return protoField{size: size, marshal: marshal, unmarshal: expectWire("protowire.BytesType", dec)}, nil
}

// qualified names a type in generated code of the package (builtins, local types,
// or Kubernetes types through their package's conventional import).
func (g *protoGen) qualified(t *types.Type) string {
	if t.Name.Package == g.pkg || t.Name.Package == "" {
		return t.Name.Name
	}
	name := project.ImportAlias(t.Name.Package)
	g.imports[t.Name.Package] = name
	return name + "." + t.Name.Name
}

func orUnsupported(err error, field string, t *types.Type) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("protobuf: field %s has type %s, which apiserver-boot cannot encode (use scalars, strings, structs, slices, and maps of scalars)", field, t.String())
}

// expectWire guards a decode with the wire type the field was written with.
func expectWire(wire, dec string) string {
	return fmt.Sprintf("if typ != %s {\nreturn fmt.Errorf(\"field %%d: wire type %%d, want %%d\", num, typ, %s)\n}\n%s", wire, wire, dec)
}
