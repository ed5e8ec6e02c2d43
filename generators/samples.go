package generators

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/gengo/v2/generator"
	"sigs.k8s.io/yaml"

	"github.com/apiserver-boot/apiserver-boot/generators/crdschema"
	"github.com/apiserver-boot/apiserver-boot/generators/driver"
	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
)

// SamplesDir holds one sample object of every kind in every version.
const SamplesDir = "config/samples"

// samples writes config/samples/<group>_<version>_<kind>.yaml: an object of
// each kind in each version with its required fields filled, from the same
// schema the server validates against. A sample is the user's once edited:
// its header records the hash of what generate wrote, and a sample whose
// content no longer matches it (or that has no such header) is kept.
type samples struct{}

func (samples) Name() string                 { return "samples" }
func (samples) Packages(api *State) []string { return nil }

func (samples) Generate(api *State, _ *generator.Context) ([]files.File, error) {
	schemasOf := api.schemas
	if schemasOf == nil {
		schemasOf = func() ([]crdschema.Schema, []string, error) { return crdschema.Generate(api.API, driver.LoadEnv()) }
	}
	list, _, err := schemasOf()
	if err != nil {
		return nil, err
	}
	var out []files.File
	for _, s := range list {
		g := groupOf(api.API, s.Group)
		if g == nil {
			continue
		}
		path := filepath.Join(api.Root, SamplePath(g.Name, s.Version, s.Kind))
		if owned, err := userOwnedSample(path); err != nil {
			return nil, err
		} else if owned {
			continue
		}
		b, err := Sample(s.Group, s.Version, s.Kind, s.Schema)
		if err != nil {
			return nil, fmt.Errorf("sample of %s: %w", s.Key(), err)
		}
		if msg := invalidSample(b, s.Schema); msg != "" {
			api.Warnings = append(api.Warnings, fmt.Sprintf("%s: the sample of %s is not valid (%s): edit it to make it so, and generate keeps it", SamplePath(g.Name, s.Version, s.Kind), s.Key(), msg))
		}
		out = append(out, files.File{Path: path, Content: b})
	}
	return out, nil
}

// sampleValidator validates objects as the server validates a create of
// the kind: defaults applied, then the schema and its CEL rules.
type sampleValidator struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

func newSampleValidator(s *apiextensionsv1.JSONSchemaProps) (*sampleValidator, error) {
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(s, &internal, nil); err != nil {
		return nil, err
	}
	st, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, err
	}
	schema, _, err := apiservervalidation.NewSchemaValidator(&internal)
	if err != nil {
		return nil, err
	}
	return &sampleValidator{structural: st, schema: schema, cel: cel.NewValidator(st, true, celconfig.PerCallLimit)}, nil
}

// errors are what the server would refuse obj for.
func (v *sampleValidator) errors(obj map[string]any) field.ErrorList {
	// Integers as the server decodes them (int64, which CEL needs).
	b, _ := json.Marshal(obj)
	var c map[string]any
	_ = utiljson.Unmarshal(b, &c)
	structuraldefaulting.Default(c, v.structural)
	errs := apiservervalidation.ValidateCustomResource(nil, c, v.schema)
	if v.cel != nil {
		celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, c, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	return errs
}

// invalidSample says why the sample b does not validate against s, or "".
func invalidSample(b []byte, s *apiextensionsv1.JSONSchemaProps) string {
	var obj map[string]any
	if err := yaml.Unmarshal(b, &obj); err != nil {
		return err.Error()
	}
	v, err := newSampleValidator(s)
	if err != nil {
		return err.Error()
	}
	if errs := v.errors(obj); len(errs) > 0 {
		return errs.ToAggregate().Error()
	}
	return ""
}

// repair adds optional fields to obj where the server would refuse it (a
// CEL rule wanting one of several fields, a port a reference needs): at the
// object an error names, each optional field its rules mention (then any),
// kept when fewer errors remain.
func repair(obj map[string]any, s *apiextensionsv1.JSONSchemaProps) {
	v, err := newSampleValidator(s)
	if err != nil {
		return
	}
	for range 32 {
		errs := v.errors(obj)
		if len(errs) == 0 {
			return
		}
		improved := false
		for _, e := range errs {
			node, schema := locate(obj, s, e.Field)
			if node == nil {
				continue
			}
			for _, name := range candidates(node, schema) {
				p := schema.Properties[name]
				node[name] = sampleValue(&p, 1)
				if p.Type == "array" && p.Items != nil && p.Items.Schema != nil {
					node[name] = []any{sampleValue(p.Items.Schema, 1)}
				}
				if len(v.errors(obj)) < len(errs) {
					improved = true
					break
				}
				delete(node, name)
			}
			if improved {
				break
			}
		}
		if !improved {
			return
		}
	}
}

var pathStep = regexp.MustCompile(`([^.\[\]]+)|\[([^\]]*)\]`)

// locate is the deepest object of obj on the field path (spec.rules[0].backendRefs[0]), with its schema.
func locate(obj map[string]any, s *apiextensionsv1.JSONSchemaProps, path string) (map[string]any, *apiextensionsv1.JSONSchemaProps) {
	node, schema := obj, s
	var cur any = obj
	cs := s
	for _, m := range pathStep.FindAllStringSubmatch(path, -1) {
		switch c := cur.(type) {
		case map[string]any:
			key := m[1]
			if key == "" {
				key = m[2]
			}
			var next *apiextensionsv1.JSONSchemaProps
			if p, ok := cs.Properties[key]; ok {
				next = &p
			} else if cs.AdditionalProperties != nil && cs.AdditionalProperties.Schema != nil {
				next = cs.AdditionalProperties.Schema
			}
			if next == nil {
				return node, schema
			}
			cur, cs = c[key], next
		case []any:
			i, err := strconv.Atoi(m[2])
			if err != nil || i >= len(c) || cs.Items == nil || cs.Items.Schema == nil {
				return node, schema
			}
			cur, cs = c[i], cs.Items.Schema
		default:
			return node, schema
		}
		if m, ok := cur.(map[string]any); ok && len(cs.Properties) > 0 {
			node, schema = m, cs
		}
	}
	return node, schema
}

// candidates are the optional fields node lacks: those its rules mention first.
func candidates(node map[string]any, s *apiextensionsv1.JSONSchemaProps) []string {
	var rules strings.Builder
	for _, r := range s.XValidations {
		rules.WriteString(r.Rule + " ")
	}
	var mentioned, others []string
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		if _, ok := node[name]; ok {
			continue
		}
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(rules.String()) {
			mentioned = append(mentioned, name)
		} else {
			others = append(others, name)
		}
	}
	return append(mentioned, others...)
}

// SamplePath is where the sample of a kind is, relative to the project:
// the group by its package name, the kind lowercased (kubebuilder's names).
func SamplePath(group, version, kind string) string {
	return filepath.Join(filepath.FromSlash(SamplesDir), group+"_"+version+"_"+strings.ToLower(kind)+".yaml")
}

func groupOf(api *model.API, fullName string) *model.Group {
	for _, g := range api.Groups {
		if g.FullName == fullName {
			return g
		}
	}
	return nil
}

// sampleHeader marks a sample generate wrote, with the hash of its body.
var sampleHeader = regexp.MustCompile(`\A# Generated by apiserver-boot from the schema of [^\n(]+ \(sha256:([0-9a-f]{16})\)\.[^\n]*\n(?:#[^\n]*\n)*`)

// userOwnedSample tells whether the file at path is the user's: it exists
// and is not a sample generate wrote and nobody changed since.
func userOwnedSample(path string) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	m := sampleHeader.FindSubmatchIndex(b)
	if m == nil {
		return true, nil
	}
	return string(b[m[2]:m[3]]) != sampleHash(b[m[1]:]), nil
}

func sampleHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])[:16]
}

// Sample is the sample object of kind in group/version, with the schema s:
// its required fields (and spec) filled with values the schema accepts.
func Sample(group, version, kind string, s *apiextensionsv1.JSONSchemaProps) ([]byte, error) {
	obj := map[string]any{
		"apiVersion": group + "/" + version,
		"kind":       kind,
		"metadata":   map[string]any{"name": strings.ToLower(kind) + "-sample"},
	}
	for name, p := range s.Properties {
		if name == "apiVersion" || name == "kind" || name == "metadata" || name == "status" {
			continue
		}
		if name == "spec" || slices.Contains(s.Required, name) {
			obj[name] = sampleValue(&p, 0)
		}
	}
	repair(obj, s)
	body, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Generated by apiserver-boot from the schema of %s/%s %s (sha256:%s).\n", group, version, kind, sampleHash(body))
	b.WriteString("# generate refreshes it while it is unchanged: edit it and it is yours (generate keeps it).\n")
	b.Write(body)
	return b.Bytes(), nil
}

// sampleValue is a value s accepts: its default, its first enum value, or
// one its type, bounds, format and pattern allow; objects get their
// required properties.
func sampleValue(s *apiextensionsv1.JSONSchemaProps, depth int) any {
	if s.Default != nil {
		var v any
		if json.Unmarshal(s.Default.Raw, &v) == nil {
			return v
		}
	}
	if len(s.Enum) > 0 {
		var v any
		if json.Unmarshal(s.Enum[0].Raw, &v) == nil {
			return v
		}
	}
	if s.XIntOrString {
		return 1
	}
	switch s.Type {
	case "object":
		m := map[string]any{}
		if depth > 8 {
			return m
		}
		for _, name := range s.Required {
			if p, ok := s.Properties[name]; ok {
				m[name] = sampleValue(&p, depth+1)
			}
		}
		if s.MinProperties != nil && int64(len(m)) < *s.MinProperties && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			for i := int64(len(m)); i < *s.MinProperties; i++ {
				m[fmt.Sprintf("key%d", i)] = sampleValue(s.AdditionalProperties.Schema, depth+1)
			}
		}
		return m
	case "array":
		list := []any{}
		if s.MinItems != nil && s.Items != nil && s.Items.Schema != nil && depth <= 8 {
			for i := int64(0); i < *s.MinItems; i++ {
				list = append(list, sampleValue(s.Items.Schema, depth+1))
			}
		}
		return list
	case "integer", "number":
		return sampleNumber(s)
	case "boolean":
		return false
	case "string":
		return sampleString(s)
	}
	return map[string]any{}
}

func sampleNumber(s *apiextensionsv1.JSONSchemaProps) any {
	v := 1.0
	if s.Minimum != nil {
		v = *s.Minimum
		if s.ExclusiveMinimum {
			v++
		}
	}
	if s.Maximum != nil && v > *s.Maximum {
		v = *s.Maximum
		if s.ExclusiveMaximum {
			v--
		}
	}
	if s.Type == "integer" {
		return int64(v)
	}
	return v
}

// sampleStrings are tried in order against a string's format and pattern.
var sampleStrings = []string{"sample", "Sample", "a", "1", "sample-1", "sample.example.com", "example.com/sample", "https://example.com", "10.0.0.1", "1s"}

func sampleString(s *apiextensionsv1.JSONSchemaProps) string {
	switch s.Format {
	case "date-time":
		return "2026-01-01T00:00:00Z"
	case "date":
		return "2026-01-01"
	case "duration":
		return "1s"
	case "byte":
		return "c2FtcGxl"
	case "uuid":
		return "00000000-0000-4000-8000-000000000000"
	case "ipv4", "ip":
		return "10.0.0.1"
	case "ipv6":
		return "fd00::1"
	case "uri":
		return "https://example.com"
	case "email":
		return "sample@example.com"
	case "hostname":
		return "sample.example.com"
	}
	fits := func(v string) bool {
		if s.MinLength != nil && int64(len(v)) < *s.MinLength || s.MaxLength != nil && int64(len(v)) > *s.MaxLength {
			return false
		}
		if s.Pattern != "" {
			re, err := regexp.Compile(s.Pattern)
			return err == nil && re.MatchString(v)
		}
		return true
	}
	for _, v := range sampleStrings {
		if fits(v) {
			return v
		}
		// Repeated up to the minimum length ("111111111" for a
		// nine-character cron field of digits).
		if s.MinLength != nil && int64(len(v)) < *s.MinLength {
			if long := strings.Repeat(v, int(*s.MinLength)/len(v)+1)[:*s.MinLength]; fits(long) {
				return long
			}
		}
	}
	v := "sample"
	if s.MinLength != nil && int64(len(v)) < *s.MinLength {
		v += strings.Repeat("a", int(*s.MinLength)-len(v))
	}
	if s.MaxLength != nil && int64(len(v)) > *s.MaxLength {
		v = v[:*s.MaxLength]
	}
	return v
}
