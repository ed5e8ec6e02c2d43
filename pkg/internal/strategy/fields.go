package strategy

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// The helpers below work on any generated type by reflection: a kind is a
// struct with embedded TypeMeta, an ObjectMeta and, usually, Spec and Status.

func isMetaOrStatus(f reflect.StructField) bool {
	return f.Name == "TypeMeta" || f.Name == "ObjectMeta" || f.Name == "ListMeta" || f.Name == "Status"
}

func structOf(obj runtime.Object) (reflect.Value, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	return v.Elem(), true
}

func clearStatus(obj runtime.Object) {
	if v, ok := structOf(obj); ok {
		if f := v.FieldByName("Status"); f.IsValid() && f.CanSet() {
			f.Set(reflect.Zero(f.Type()))
		}
	}
}

func copyStatus(dst, src runtime.Object) {
	d, ok1 := structOf(dst)
	s, ok2 := structOf(src)
	if !ok1 || !ok2 {
		return
	}
	if f := d.FieldByName("Status"); f.IsValid() && f.CanSet() {
		f.Set(s.FieldByName("Status"))
	}
}

func copyAllButMetaAndStatus(dst, src runtime.Object) {
	d, ok1 := structOf(dst)
	s, ok2 := structOf(src)
	if !ok1 || !ok2 {
		return
	}
	for i := 0; i < d.NumField(); i++ {
		if f := d.Type().Field(i); !isMetaOrStatus(f) && f.IsExported() {
			d.Field(i).Set(s.Field(i))
		}
	}
}

// specChanged reports whether anything but metadata and status differs.
func specChanged(a, b runtime.Object) bool {
	x, ok1 := structOf(a)
	y, ok2 := structOf(b)
	if !ok1 || !ok2 {
		return false
	}
	for i := 0; i < x.NumField(); i++ {
		if f := x.Type().Field(i); !isMetaOrStatus(f) && f.IsExported() &&
			!equality.Semantic.DeepEqual(x.Field(i).Interface(), y.Field(i).Interface()) {
			return true
		}
	}
	return false
}

func bumpGeneration(obj, old runtime.Object) {
	newMeta, err1 := meta.Accessor(obj)
	oldMeta, err2 := meta.Accessor(old)
	if err1 != nil || err2 != nil {
		return
	}
	gen := oldMeta.GetGeneration()
	if specChanged(obj, old) {
		gen++
	}
	newMeta.SetGeneration(gen)
}

// topLevelFields lists the JSON names of a kind's fields other than metadata and status.
func topLevelFields(t reflect.Type) []string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if isMetaOrStatus(f) || !f.IsExported() {
			continue
		}
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		out = append(out, name)
	}
	return out
}
