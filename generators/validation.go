package generators

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"maps"
	"path/filepath"
	"regexp"
	"slices"

	"strconv"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/templates"

	"github.com/apiserver-boot/apiserver-boot/internal/files"
)

// markerValidation writes pkg/apis/<group>/zz_generated.validation.go: the
// server-side checks declared by field markers, as Go code over the internal
// types (which mirror the storage version). Every kind gets
// ValidateMarkers_<Kind>, which the strategy runs before the Validate hooks.
type markerValidation struct{}

func (markerValidation) Name() string { return "marker-validation" }

// validator is one generated function: validate_<Type>.
type validator struct {
	Type  string
	Lines []string
}

func (markerValidation) Generate(api *State) ([]files.File, error) {
	var out []files.File
	for _, g := range api.Groups {
		// The checks run on the internal types: each is read from the version
		// its internal copy comes from.
		sources, err := internalSources(g)
		if err != nil {
			return nil, err
		}
		gen := &validationGen{sources: sources, needs: map[string]bool{}, visiting: map[string]bool{}}
		var kinds []string
		for _, k := range g.Kinds {
			kinds = append(kinds, k.Name)
			if _, err := gen.need(k.Name); err != nil {
				return nil, err
			}
		}
		var validators []validator
		for _, name := range slices.Sorted(maps.Keys(gen.needs)) {
			if !gen.needs[name] {
				continue
			}
			gen.v = sources[name]
			lines, err := gen.body(gen.v.Types[name])
			if err != nil {
				return nil, err
			}
			validators = append(validators, validator{Type: name, Lines: lines})
		}
		b, err := templates.Render("generated/validation.go.tmpl", map[string]any{
			"Header": api.Header, "Package": g.Name, "Kinds": kinds, "Validators": validators,
			"Needs": gen.needs, "Patterns": gen.patterns, "UsesFmt": gen.usesFmt, "UsesUTF8": gen.usesUTF8,
		})
		if err != nil {
			return nil, err
		}
		out = append(out, files.File{Path: filepath.Join(g.Dir, "zz_generated.validation.go"), Content: b})
	}
	return out, nil
}

type validationGen struct {
	v        *model.Version            // where the type being generated is declared
	sources  map[string]*model.Version // internal type -> the version it is copied from
	needs    map[string]bool           // type -> has checks (transitively)
	visiting map[string]bool
	patterns []string
	// imports the generated code needs
	usesFmt, usesUTF8 bool
}

// need reports whether a local struct type has any marker check, transitively.
func (g *validationGen) need(name string) (bool, error) {
	if n, ok := g.needs[name]; ok {
		return n, nil
	}
	v := g.sources[name]
	if v == nil || v.Types[name] == nil || v.Types[name].Struct == nil || g.visiting[name] {
		return false, nil
	}
	td := v.Types[name]
	prev := g.v
	g.v = v
	defer func() { g.v = prev }()
	g.visiting[name] = true
	defer delete(g.visiting, name)
	result := false
	for _, f := range td.Fields {
		if !f.Markers.Empty() {
			result = true
		}
		if local := g.localStruct(f.Type); local != "" {
			n, err := g.need(local)
			if err != nil {
				return false, err
			}
			result = result || n
		}
	}
	g.needs[name] = result
	return result, nil
}

// localStruct returns the local struct type a field holds, directly or
// through a pointer, slice or map.
func (g *validationGen) localStruct(e ast.Expr) string {
	for {
		switch k := g.v.BasicKind(e); {
		case strings.HasPrefix(k, "struct:"):
			return strings.TrimPrefix(k, "struct:")
		case k == "pointer" || k == "slice" || k == "map":
			e = model.Elem(g.v.Resolve(e))
		default:
			return ""
		}
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// body returns the statements of validate_<Type>(fp *field.Path, in *<Type>).
func (g *validationGen) body(td *model.TypeDecl) ([]string, error) {
	var lines []string
	add := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	for _, f := range td.Fields {
		path := fmt.Sprintf("fp.Child(%q)", f.JSONName)
		if f.Inline {
			path = "fp"
		}
		access := "in." + f.GoName
		m := f.Markers
		kind := g.v.BasicKind(f.Type)
		bad := func(marker string) error {
			return fmt.Errorf("%s: +kubebuilder:validation:%s does not apply to field %s of type %s", f.Pos, marker, f.GoName, model.ExprString(g.v.Fset, f.Type))
		}
		if m.Required {
			switch kind {
			case "pointer":
				add("if %s == nil {\nerrs = append(errs, field.Required(%s, \"\"))\n}", access, path)
			case "string", "slice", "map":
				add("if len(%s) == 0 {\nerrs = append(errs, field.Required(%s, \"\"))\n}", access, path)
			}
		}
		// Scalar checks apply to the value, through a pointer if there is one.
		value, scalar := access, kind
		open := ""
		if kind == "pointer" {
			scalar = g.v.BasicKind(model.Elem(f.Type))
			value = "(*" + access + ")"
			open = fmt.Sprintf("if %s != nil {", access)
		}
		var checks []string
		check := func(format string, a ...any) { checks = append(checks, fmt.Sprintf(format, a...)) }
		if m.Minimum != nil || m.Maximum != nil {
			if scalar != "number" {
				if m.Minimum != nil {
					return nil, bad("Minimum")
				}
				return nil, bad("Maximum")
			}
			if m.Minimum != nil {
				check("if float64(%s) < %s {\nerrs = append(errs, field.Invalid(%s, %s, \"must be greater than or equal to %s\"))\n}", value, fmtFloat(*m.Minimum), path, value, fmtFloat(*m.Minimum))
			}
			if m.Maximum != nil {
				check("if float64(%s) > %s {\nerrs = append(errs, field.Invalid(%s, %s, \"must be less than or equal to %s\"))\n}", value, fmtFloat(*m.Maximum), path, value, fmtFloat(*m.Maximum))
			}
		}
		if m.Pattern != nil || m.MinLength != nil || m.MaxLength != nil || m.Enum != nil {
			if scalar != "string" {
				switch {
				case m.Pattern != nil:
					return nil, bad("Pattern")
				case m.Enum != nil:
					return nil, bad("Enum")
				default:
					return nil, bad("MinLength/MaxLength")
				}
			}
			if m.Pattern != nil {
				if _, err := regexp.Compile(*m.Pattern); err != nil {
					return nil, fmt.Errorf("%s: +kubebuilder:validation:Pattern on %s: %w", f.Pos, f.GoName, err)
				}
				g.patterns = append(g.patterns, *m.Pattern)
				check("if !pattern%d.MatchString(string(%s)) {\nerrs = append(errs, field.Invalid(%s, %s, %q))\n}", len(g.patterns)-1, value, path, value, "must match the regular expression '"+*m.Pattern+"'")
			}
			if m.MinLength != nil || m.MaxLength != nil {
				g.usesUTF8 = true
			}
			if m.MinLength != nil {
				check("if utf8.RuneCountInString(string(%s)) < %d {\nerrs = append(errs, field.Invalid(%s, %s, %q))\n}", value, *m.MinLength, path, value, "must be at least "+plural(*m.MinLength, "character")+" long")
			}
			if m.MaxLength != nil {
				check("if utf8.RuneCountInString(string(%s)) > %d {\nerrs = append(errs, field.TooLong(%s, %s, %d))\n}", value, *m.MaxLength, path, value, *m.MaxLength)
			}
			if m.Enum != nil {
				var vals []string
				for _, e := range m.Enum {
					vals = append(vals, strconv.Quote(fmt.Sprint(e)))
				}
				check("switch string(%s) {\ncase %s:\ndefault:\nerrs = append(errs, field.NotSupported(%s, %s, []string{%s}))\n}", value, strings.Join(vals, ", "), path, value, strings.Join(vals, ", "))
			}
		}
		if m.MinItems != nil || m.MaxItems != nil {
			if kind != "slice" && kind != "map" {
				return nil, bad("MinItems/MaxItems")
			}
			if m.MinItems != nil {
				check("if len(%s) < %d {\nerrs = append(errs, field.Invalid(%s, len(%s), %q))\n}", access, *m.MinItems, path, access, "must have at least "+plural(*m.MinItems, "item"))
			}
			if m.MaxItems != nil {
				check("if len(%s) > %d {\nerrs = append(errs, field.TooMany(%s, len(%s), %d))\n}", access, *m.MaxItems, path, access, *m.MaxItems)
			}
		}
		// A zero scalar is either absent (omitempty) or already reported as required.
		if len(checks) > 0 && open == "" && (f.OmitEmpty || m.Required) {
			switch scalar {
			case "string":
				open = fmt.Sprintf("if %s != \"\" {", value)
			case "number":
				open = fmt.Sprintf("if %s != 0 {", value)
			}
		}
		if len(checks) > 0 {
			if open != "" {
				add("%s\n%s\n}", open, strings.Join(checks, "\n"))
			} else {
				lines = append(lines, checks...)
			}
		}
		// Recurse into local structs that have checks.
		if local := g.localStruct(f.Type); local != "" && g.needs[local] {
			elemKind := g.v.BasicKind(model.Elem(g.v.Resolve(f.Type)))
			switch {
			case kind == "struct:"+local:
				add("errs = append(errs, validate_%s(%s, &%s)...)", local, path, access)
			case kind == "pointer" && elemKind == "struct:"+local:
				add("if %s != nil {\nerrs = append(errs, validate_%s(%s, %s)...)\n}", access, local, path, access)
			case kind == "slice" && elemKind == "struct:"+local:
				add("for i := range %s {\nerrs = append(errs, validate_%s(%s.Index(i), &%s[i])...)\n}", access, local, path, access)
			case kind == "slice" && elemKind == "pointer":
				add("for i := range %s {\nif %s[i] != nil {\nerrs = append(errs, validate_%s(%s.Index(i), %s[i])...)\n}\n}", access, access, local, path, access)
			case kind == "map" && elemKind == "struct:"+local:
				g.usesFmt = true
				add("for k := range %s {\nv := %s[k]\nerrs = append(errs, validate_%s(%s.Key(fmt.Sprint(k)), &v)...)\n}", access, access, local, path)
			case kind == "map" && elemKind == "pointer":
				g.usesFmt = true
				add("for k, v := range %s {\nif v != nil {\nerrs = append(errs, validate_%s(%s.Key(fmt.Sprint(k)), v)...)\n}\n}", access, local, path)
			default:
				return nil, fmt.Errorf("%s: field %s of type %s holds %s, whose markers apply through pointers, slices and maps one level deep only", f.Pos, f.GoName, model.ExprString(g.v.Fset, f.Type), local)
			}
		}
	}
	return lines, nil
}

// defaultJSON renders a +kubebuilder:default value as JSON.
func defaultJSON(d *model.Default) (string, error) {
	b, err := json.Marshal(d.Value)
	return string(b), err
}
