package crdschema

import (
	"context"
	"encoding/json"
	"go/types"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// The CEL rules that could tell a field's zero value from the field left
// out are found by running them, with kube-apiserver's validator for CRDs,
// on the zero value (a rule on the field: it does not run on a field left
// out) or on the object holding the field with it left out and with its
// zero value (a rule of the holding object).

// transitionRule is a rule that reads oldSelf: it runs on an update, with
// the stored value, which for a field that cannot carry its zero value is
// left out where a CRD would keep the zero value. It is not evaluated.
var transitionRule = regexp.MustCompile(`\boldSelf\b`)

// ruleOutcome is what a rule gives on a value.
type ruleOutcome struct {
	pass    bool   // the rule holds
	errored bool   // the rule could not be evaluated (no such key, ...)
	detail  string // why it does not hold
}

// structural converts a schema to the structural form the validator takes.
func structural(p *apiextensionsv1.JSONSchemaProps) (*structuralschema.Structural, error) {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(p, internal, nil); err != nil {
		return nil, err
	}
	return structuralschema.NewStructural(internal)
}

// onlyRule is s with rule as its only rule: the rules below it and those
// of allOf are left out, for the outcome to be rule's.
func onlyRule(s *structuralschema.Structural, rule apiextensionsv1.ValidationRule) *structuralschema.Structural {
	c := withoutRules(s)
	c.XValidations = apiextensionsv1.ValidationRules{rule}
	return c
}

func withoutRules(s *structuralschema.Structural) *structuralschema.Structural {
	if s == nil {
		return nil
	}
	c := *s
	c.XValidations = nil
	if s.ValueValidation != nil {
		v := *s.ValueValidation
		v.AllOf = nil
		c.ValueValidation = &v
	}
	if s.Properties != nil {
		c.Properties = make(map[string]structuralschema.Structural, len(s.Properties))
		for k, p := range s.Properties {
			c.Properties[k] = *withoutRules(&p)
		}
	}
	c.Items = withoutRules(s.Items)
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		c.AdditionalProperties = &structuralschema.StructuralOrBool{Structural: withoutRules(s.AdditionalProperties.Structural), Bool: s.AdditionalProperties.Bool}
	}
	return &c
}

// evalRule runs one rule of s on obj as a create does (no old object).
func evalRule(s *structuralschema.Structural, root bool, rule apiextensionsv1.ValidationRule, obj any) ruleOutcome {
	only := onlyRule(s, rule)
	v := cel.NewValidator(only, root, celconfig.PerCallLimit)
	if v == nil {
		return ruleOutcome{pass: true}
	}
	errs, _ := v.Validate(context.Background(), nil, only, obj, nil, celconfig.RuntimeCELCostBudget)
	if len(errs) == 0 {
		return ruleOutcome{pass: true}
	}
	out := ruleOutcome{detail: errs.ToAggregate().Error()}
	for _, e := range errs {
		d := e.Detail
		if strings.Contains(d, "evaluating rule") || strings.Contains(d, "compile") || strings.Contains(d, "cost") ||
			strings.Contains(d, "did not match a supported operator") || e.Type == "InternalError" {
			out.errored = true
		}
	}
	return out
}

// celZeroRules names the rules of the field (prop) that the zero value
// fails, and the rules of the object holding it (parent, with parentZero
// its value as the Go encoder writes the zero struct) that mention the
// field and give another outcome, or cannot be evaluated, with the field's
// zero value than with the field left out. Transition rules are named
// without being evaluated.
func celZeroRules(name string, prop, parent *apiextensionsv1.JSONSchemaProps, parentRoot bool, zero any, parentZero map[string]any) []string {
	var out []string
	if len(prop.XValidations) > 0 {
		s, err := structural(prop)
		for _, r := range prop.XValidations {
			switch {
			case transitionRule.MatchString(r.Rule):
				out = append(out, "the transition rule "+quote(r.Rule)+" on the field (not evaluated)")
			case err != nil:
				out = append(out, "the CEL rule "+quote(r.Rule)+" on the field")
			default:
				if o := evalRule(s, prop.XEmbeddedResource, r, zero); !o.pass {
					out = append(out, "the CEL rule "+quote(r.Rule)+" on the field")
				}
			}
		}
	}
	if parent == nil || len(parent.XValidations) == 0 {
		return out
	}
	mention := regexp.MustCompile(`\.` + regexp.QuoteMeta(name) + `\b`)
	var s *structuralschema.Structural
	var err error
	for _, r := range parent.XValidations {
		if !mention.MatchString(r.Rule) {
			continue
		}
		if s == nil && err == nil {
			s, err = structural(parent)
		}
		what := "the CEL rule " + quote(r.Rule) + " on the object holding it"
		switch {
		case transitionRule.MatchString(r.Rule):
			out = append(out, "the transition rule "+quote(r.Rule)+" on the object holding it (not evaluated)")
			continue
		case err != nil:
			out = append(out, what)
			continue
		}
		absent := map[string]any{}
		for k, v := range parentZero {
			absent[k] = v
		}
		delete(absent, name)
		present := map[string]any{}
		for k, v := range absent {
			present[k] = v
		}
		present[name] = zero
		a := evalRule(s, parentRoot, r, absent)
		b := evalRule(s, parentRoot, r, present)
		if a.errored || b.errored || a.pass != b.pass {
			out = append(out, what)
		}
	}
	return out
}

func quote(rule string) string { return strconv.Quote(short(rule)) }

// encodedZero is the zero value of t as encoding/json writes it and the
// server decodes it against s: present is false for null (a nil pointer,
// slice or map, which the server drops) and for what the encoder leaves
// out. A type with its own JSON form is taken as left out.
func encodedZero(t types.Type, s *apiextensionsv1.JSONSchemaProps, depth int) (v any, present bool) {
	if s == nil || depth > 32 || hasMarshaler(t) {
		return nil, false
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsNumeric != 0 && s.Type == "integer":
			return int64(0), true
		case u.Info()&types.IsNumeric != 0 && s.Type == "number":
			return float64(0), true
		case u.Info()&types.IsString != 0 && s.Type == "string":
			return "", true
		case u.Info()&types.IsBoolean != 0 && s.Type == "boolean":
			return false, true
		}
	case *types.Struct:
		if s.Type == "object" {
			m := map[string]any{}
			encodeStructZero(u, s, m, depth)
			return m, true
		}
	}
	return nil, false
}

func encodeStructZero(st *types.Struct, s *apiextensionsv1.JSONSchemaProps, m map[string]any, depth int) {
	for i := 0; i < st.NumFields(); i++ {
		f := st.Field(i)
		jf, ok := jsonFieldOf(st, i)
		if !ok {
			continue
		}
		if jf.inline {
			if u, ok := f.Type().Underlying().(*types.Struct); ok && !hasMarshaler(f.Type()) {
				encodeStructZero(u, s, m, depth+1)
			}
			continue
		}
		prop, ok := s.Properties[jf.name]
		if !ok {
			continue
		}
		// encoding/json leaves a zero value out with omitzero, and with
		// omitempty unless it is a struct.
		if _, isStruct := f.Type().Underlying().(*types.Struct); jf.omitZero || jf.omitEmpty && !isStruct {
			continue
		}
		if v, ok := encodedZero(f.Type(), &prop, depth+1); ok {
			m[jf.name] = v
		}
	}
}

// hasMarshaler: t or *t has MarshalJSON (metav1.Time, resource.Quantity).
func hasMarshaler(t types.Type) bool {
	if _, ok := t.(*types.Pointer); ok {
		return false
	}
	for _, tt := range []types.Type{t, types.NewPointer(t)} {
		ms := types.NewMethodSet(tt)
		for i := 0; i < ms.Len(); i++ {
			if ms.At(i).Obj().Name() == "MarshalJSON" {
				return true
			}
		}
	}
	return false
}

// fieldZero is what a client sends for the field's zero value: 0, "",
// false, [], {} for a map, and for a struct its zero as the Go encoder
// writes it.
func fieldZero(t types.Type, shape zeroShape, prop *apiextensionsv1.JSONSchemaProps) any {
	switch shape {
	case zeroNumber:
		if prop.Type == "integer" {
			return int64(0)
		}
		return float64(0)
	case zeroStruct:
		if v, ok := encodedZero(t, prop, 0); ok {
			return v
		}
	}
	return zeroJSON(shape)
}

// defaultedZeroIsDefault: the zero struct, once the defaults of its fields
// are filled in as a CRD fills them, is the struct's default, so sending
// it and having the default fill its place give the same object (a status
// whose default is the defaults of its fields).
func defaultedZeroIsDefault(t types.Type, prop *apiextensionsv1.JSONSchemaProps) bool {
	zero, ok := encodedZero(t, prop, 0)
	if !ok || prop.Default == nil {
		return false
	}
	s, err := structural(prop)
	if err != nil {
		return false
	}
	var def any
	if json.Unmarshal(prop.Default.Raw, &def) != nil {
		return false
	}
	b, err := json.Marshal(zero)
	if err != nil || json.Unmarshal(b, &zero) != nil {
		return false
	}
	structuraldefaulting.Default(zero, s)
	structuraldefaulting.Default(def, s)
	return reflect.DeepEqual(zero, def)
}
