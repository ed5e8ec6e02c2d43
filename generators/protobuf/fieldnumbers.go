package protobuf

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"sigs.k8s.io/yaml"
)

// FieldNumbersFile is the record of protobuf field numbers kept beside the
// types of every version package. etcd holds objects as protobuf, so a field's
// number is part of every stored object: once given, it belongs to its JSON
// name for good, whatever happens to the Go declarations, and the number of a
// removed field is reserved, never given again. generate reads the record,
// numbers new fields after every number it holds, and writes it back; it is
// meant to be committed and reviewed like the types.
const FieldNumbersFile = "fieldnumbers.yaml"

// Numbers is the record of one version package: per struct type that has
// protobuf methods, the number and wire type of each field by key (the JSON
// name; "inline:<GoName>" for an embedded struct inlined into its parent's
// JSON), and the numbers no longer in use.
type Numbers map[string]*TypeNumbers

type TypeNumbers struct {
	Fields   map[string]fieldNumber `json:"fields,omitempty"`
	Reserved []reservedNumber       `json:"reserved,omitempty"`
}

type fieldNumber struct {
	Number int    `json:"number"`
	Wire   string `json:"wire"`
	// Type is the struct of the API package a message field holds (through
	// pointers, slices and map values): renamed, the struct keeps its numbers.
	Type string `json:"type,omitempty"`
}

// reservedNumber is the number of a field that was removed, with its key and
// wire type then, for the reader of the record.
type reservedNumber struct {
	Number int    `json:"number"`
	Name   string `json:"name"`
	Wire   string `json:"wire,omitempty"`
}

// max is the highest number the type has ever used.
func (t *TypeNumbers) max() int {
	m := 0
	for _, f := range t.Fields {
		m = max(m, f.Number)
	}
	for _, r := range t.Reserved {
		m = max(m, r.Number)
	}
	return m
}

// owner names what holds number n in the record: a field key, "reserved (was
// <key>)", or "".
func (t *TypeNumbers) owner(n int) string {
	for k, f := range t.Fields {
		if f.Number == n {
			return k
		}
	}
	for _, r := range t.Reserved {
		if r.Number == n {
			return fmt.Sprintf("reserved (was %s)", r.Name)
		}
	}
	return ""
}

// reservedFor is the number a removed field with this key and wire type had
// (the latest, if it was removed more than once), or 0.
func (t *TypeNumbers) reservedFor(key, wire string) int {
	n := 0
	for _, r := range t.Reserved {
		if r.Name == key && r.Wire == wire {
			n = max(n, r.Number)
		}
	}
	return n
}

// unreserve gives number n back to the field it was reserved for.
func (t *TypeNumbers) unreserve(n int) {
	for i, r := range t.Reserved {
		if r.Number == n {
			t.Reserved = append(t.Reserved[:i], t.Reserved[i+1:]...)
			return
		}
	}
}

func (r Numbers) clone() Numbers {
	out := Numbers{}
	for name, t := range r {
		c := &TypeNumbers{Fields: map[string]fieldNumber{}, Reserved: append([]reservedNumber(nil), t.Reserved...)}
		for k, f := range t.Fields {
			c.Fields[k] = f
		}
		out[name] = c
	}
	return out
}

// readFieldNumbers reads the record of a version package; a missing file is
// an empty record (a project generated before records existed, or a new version).
func readFieldNumbers(path string) (Numbers, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Numbers{}, nil
	}
	if err != nil {
		return nil, err
	}
	rec := Numbers{}
	if err := yaml.UnmarshalStrict(b, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w (it records the protobuf field numbers of stored objects: restore it from version control)", path, err)
	}
	for name, t := range rec {
		if t == nil {
			rec[name] = &TypeNumbers{}
			t = rec[name]
		}
		if t.Fields == nil {
			t.Fields = map[string]fieldNumber{}
		}
		seen := map[int]string{}
		check := func(n int, what string) error {
			if n <= 0 || n > 536870911 || (n >= 19000 && n <= 19999) {
				return fmt.Errorf("%s: %s.%s: number %d is not a valid protobuf field number", path, name, what, n)
			}
			if prev, dup := seen[n]; dup {
				return fmt.Errorf("%s: %s: %s and %s both hold number %d", path, name, prev, what, n)
			}
			seen[n] = what
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(t.Fields)) {
			if err := check(t.Fields[k].Number, k); err != nil {
				return nil, err
			}
		}
		for _, r := range t.Reserved {
			if err := check(r.Number, "reserved "+r.Name); err != nil {
				return nil, err
			}
		}
	}
	return rec, nil
}

// yamlKey quotes a name for the record: always, as YAML reads many bare
// words (y, N, on, Null, ~) as something other than a string.
func yamlKey(s string) string { return strconv.Quote(s) }

// render writes the record with types by name and fields by number, one field
// per line, so that a change reads as a small diff.
func (r Numbers) render(pkg string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Protobuf field numbers of the types of %s, as objects are stored in etcd.\n", pkg)
	b.WriteString("# Written by apiserver-boot generate: commit it with the types and review its changes.\n")
	b.WriteString("# A number belongs to its JSON field for good; a removed field's number is reserved,\n")
	b.WriteString("# never given again. See docs/versions.md, \"Evolving an API safely\".\n")
	for _, name := range slices.Sorted(maps.Keys(r)) {
		t := r[name]
		fmt.Fprintf(&b, "%s:\n", yamlKey(name))
		if len(t.Fields) > 0 {
			b.WriteString("  fields:\n")
			keys := slices.Sorted(maps.Keys(t.Fields))
			sort.SliceStable(keys, func(i, j int) bool { return t.Fields[keys[i]].Number < t.Fields[keys[j]].Number })
			for _, k := range keys {
				f := t.Fields[k]
				typ := ""
				if f.Type != "" {
					typ = ", type: " + yamlKey(f.Type)
				}
				fmt.Fprintf(&b, "    %s: {number: %d, wire: %s%s}\n", yamlKey(k), f.Number, f.Wire, typ)
			}
		}
		if len(t.Reserved) > 0 {
			b.WriteString("  reserved:\n")
			res := append([]reservedNumber(nil), t.Reserved...)
			sort.Slice(res, func(i, j int) bool { return res[i].Number < res[j].Number })
			for _, x := range res {
				fmt.Fprintf(&b, "  - {number: %d, name: %s, wire: %s}\n", x.Number, yamlKey(x.Name), x.Wire)
			}
		}
	}
	return b.Bytes()
}

// fieldNumbersPath is where the record of version v lives.
func fieldNumbersPath(v *model.Version) string { return filepath.Join(v.Dir, FieldNumbersFile) }

// legacyNumbers reads the field numbers the existing zz_generated.protobuf.go
// of a package decodes, by type and Go field name: the numbering of a project
// generated before the record existed, which its stored objects were written
// with, even if the types were edited since that code was generated.
func legacyNumbers(dir string) (numbers map[string]map[string]int, wires map[string]map[string]string, err error) {
	path := filepath.Join(dir, "zz_generated.protobuf.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading the field numbers of the existing %s: %w", path, err)
	}
	out, outWires := map[string]map[string]int{}, map[string]map[string]string{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != "Unmarshal" || fd.Recv == nil || len(fd.Recv.List) != 1 || fd.Body == nil {
			continue
		}
		star, ok := fd.Recv.List[0].Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		recv, ok := star.X.(*ast.Ident)
		if !ok {
			continue
		}
		fields, fieldWires := map[string]int{}, map[string]string{}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			cc, ok := n.(*ast.CaseClause)
			if !ok || len(cc.List) != 1 {
				return true
			}
			lit, ok := cc.List[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.INT {
				return true
			}
			num, err := strconv.Atoi(lit.Value)
			if err != nil {
				return true
			}
			// The field is the first m.<Field> the case reads or writes; its
			// wire type the first protowire.<Wire>Type it checks.
			field, wire := "", ""
			for _, stmt := range cc.Body {
				ast.Inspect(stmt, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok {
						if id, ok := sel.X.(*ast.Ident); ok && id.Name == "m" && field == "" {
							field = sel.Sel.Name
						}
						if id, ok := sel.X.(*ast.Ident); ok && id.Name == "protowire" && wire == "" && strings.HasSuffix(sel.Sel.Name, "Type") {
							wire = strings.ToLower(strings.TrimSuffix(sel.Sel.Name, "Type"))
						}
					}
					return field == "" || wire == ""
				})
			}
			if field != "" {
				fields[field], fieldWires[field] = num, wire
			}
			return false
		})
		out[recv.Name], outWires[recv.Name] = fields, fieldWires
	}
	return out, outWires, nil
}
