package crdschema

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	apimodel "github.com/apiserver-boot/apiserver-boot/generators/model"
)

// checkRules compiles every CEL rule of a schema as kube-apiserver compiles
// the rules of a new CRD (the Kubernetes libraries, the environment of new
// expressions), and returns an error per rule, rule message expression that
// does not compile, naming the marker that declares it.
func checkRules(api *apimodel.API, s Schema) []string {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(s.Schema, internal, nil); err != nil {
		return []string{fmt.Sprintf("%s: %v", s.Key(), err)}
	}
	structural, err := structuralschema.NewStructural(internal)
	if err != nil {
		return []string{fmt.Sprintf("%s: the schema is not structural: %v", s.Key(), err)}
	}
	envSet := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	var errs []string
	// A manifest's rules are named by their line in it; the markers' by
	// the marker's.
	declared := func(rule string, keys []string, i int) string {
		if s.manifest != nil {
			return s.manifest.Pos(s.manifest.SchemaPath(s.Version, append(slices.Clip(keys), "x-kubernetes-validations", strconv.Itoa(i), "rule")...)...)
		}
		return declaredAt(api, s, rule)
	}
	var walk func(n *structuralschema.Structural, path string, keys []string, root bool)
	walk = func(n *structuralschema.Structural, path string, keys []string, root bool) {
		if n == nil {
			return
		}
		if len(n.XValidations) > 0 {
			results, err := cel.Compile(n, model.SchemaDeclType(n, root), celconfig.PerCallLimit, envSet, cel.NewExpressionsEnvLoader())
			if err != nil {
				at := s.Kind
				if s.manifest != nil {
					at = s.manifest.Pos(s.manifest.SchemaPath(s.Version, append(slices.Clip(keys), "x-kubernetes-validations")...)...) + ": " + s.Kind
				}
				errs = append(errs, fmt.Sprintf("%s at %s: %v", at, where(path), err))
			}
			for i, r := range results {
				rule := n.XValidations[i]
				if r.Error != nil {
					errs = append(errs, fmt.Sprintf("%s: CEL rule %q of %s (%s): %s", declared(rule.Rule, keys, i), rule.Rule, s.Kind, where(path), r.Error.Detail))
				}
				if r.MessageExpressionError != nil {
					errs = append(errs, fmt.Sprintf("%s: messageExpression %q of %s (%s): %s", declared(rule.Rule, keys, i), rule.MessageExpression, s.Kind, where(path), r.MessageExpressionError.Detail))
				}
			}
		}
		names := make([]string, 0, len(n.Properties))
		for name := range n.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			p := n.Properties[name]
			walk(&p, strings.TrimPrefix(path+"."+name, "."), append(slices.Clip(keys), "properties", name), p.XEmbeddedResource)
		}
		walk(n.Items, path+"[*]", append(slices.Clip(keys), "items"), n.Items != nil && n.Items.XEmbeddedResource)
		if n.AdditionalProperties != nil && n.AdditionalProperties.Structural != nil {
			walk(n.AdditionalProperties.Structural, path+"[*]", append(slices.Clip(keys), "additionalProperties"), n.AdditionalProperties.Structural.XEmbeddedResource)
		}
	}
	walk(structural, "", nil, true)
	return errs
}

// declaredAt finds the marker line that declares a rule in the kind's
// version package, for the error to name it; the version's folder if none
// is found.
func declaredAt(api *apimodel.API, s Schema, rule string) string {
	quoted := strconv.Quote(rule)
	for _, g := range api.Groups {
		if g.FullName != s.Group {
			continue
		}
		for _, v := range g.Versions {
			if v.Name != s.Version {
				continue
			}
			for _, f := range v.Files {
				for _, cg := range f.Comments {
					for _, c := range cg.List {
						if strings.Contains(c.Text, "XValidation") && (strings.Contains(c.Text, rule) || strings.Contains(c.Text, quoted)) {
							return v.Fset.Position(c.Pos()).String()
						}
					}
				}
			}
			return v.Dir
		}
	}
	return s.Key()
}

// where names a schema path for messages: "spec.items[*]", or "the object".
func where(path string) string {
	if path == "" {
		return "the object"
	}
	return path
}
