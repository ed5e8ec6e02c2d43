package server

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/jsoncontent"
)

// fieldLabel is how a selectable field is named in a field selector: its
// JSON path without the leading dot (".spec.cronSpec" -> "spec.cronSpec").
func fieldLabel(path string) string { return strings.TrimPrefix(path, ".") }

// attrFunc returns the labels and selectable fields of objects of r.
func attrFunc(r *builders.Resource, kc jsoncontent.Kind) storage.AttrFunc {
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, nil, err
		}
		fs := fields.Set{"metadata.name": m.GetName()}
		if r.Namespaced {
			fs["metadata.namespace"] = m.GetNamespace()
		}
		if len(r.SelectableFields) > 0 {
			content, err := kc.ToMap(obj)
			if err != nil {
				return nil, nil, err
			}
			for _, p := range r.SelectableFields {
				v, _, _ := unstructured.NestedFieldNoCopy(content, jsonPath(p)...)
				if v == nil {
					fs[fieldLabel(p)] = ""
				} else {
					fs[fieldLabel(p)] = fmt.Sprint(v)
				}
			}
		}
		return labels.Set(m.GetLabels()), fs, nil
	}
}

// addFieldLabelConversions lets field selectors name the resource's selectable
// fields in every version it is served in.
func addFieldLabelConversions(scheme *runtime.Scheme, group string, r *builders.Resource) error {
	allowed := map[string]bool{"metadata.name": true, "metadata.namespace": r.Namespaced}
	for _, p := range r.SelectableFields {
		allowed[fieldLabel(p)] = true
	}
	for _, v := range r.Versions {
		gvk := schema.GroupVersionKind{Group: group, Version: v, Kind: r.Kind}
		err := scheme.AddFieldLabelConversionFunc(gvk, func(label, value string) (string, string, error) {
			if allowed[label] {
				return label, value, nil
			}
			return "", "", fmt.Errorf("field label %q is not supported for %s: use metadata.name%s", label, gvk.Kind, selectableHint(r))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func selectableHint(r *builders.Resource) string {
	var out string
	if r.Namespaced {
		out += ", metadata.namespace"
	}
	for _, p := range r.SelectableFields {
		out += ", " + fieldLabel(p)
	}
	return out
}
