package server

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// A custom resource has no status until one is written: kube-apiserver
// drops the status of a create when /status is served, and a client that
// sends none stores none. The Go object always has one, and encoding/json
// writes it even when it is the zero value (`status: {}`, or zero counters
// such as `ready: 0` for fields without omitempty). So the server's JSON and
// YAML answers (reads, lists, watch events, the object a write returns)
// leave out a status that is the Go zero value, and its printer columns show
// nothing there (table.go), as a CRD's do before a controller has written
// its status. The stored object is not touched, and protobuf and CBOR, which
// typed clients read into the same zero value either way, are answered as
// they are.

// statusForms says, per versioned Go type of the served kinds, where its
// status is and how a zero one is written.
type statusForms struct {
	objects map[reflect.Type]statusForm // *Kind
	lists   map[reflect.Type]listForm   // *KindList
}

// statusForm is the status field of a kind's Go type: its index, and the
// end of the type's JSON when it holds the zero status, which is the last
// field written (`,"status":{}}`).
type statusForm struct {
	index  []int
	suffix []byte
}

// listForm is the items field of a list type, whose items are of form item.
type listForm struct {
	index []int
	item  statusForm
}

// add registers the Go types of a kind and of its list (obj, list: new
// objects of each); a type whose status is not the last field written, or
// that has none, is left as it is.
func (f *statusForms) add(obj, list runtime.Object) {
	t := reflect.TypeOf(obj)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return
	}
	last, index := lastJSONField(t.Elem())
	if last != "status" {
		return
	}
	zero, err := json.Marshal(reflect.Zero(t.Elem().FieldByIndex(index).Type).Interface())
	if err != nil {
		return
	}
	form := statusForm{index: index, suffix: append(append([]byte(`,"status":`), zero...), '}')}
	if f.objects == nil {
		f.objects, f.lists = map[reflect.Type]statusForm{}, map[reflect.Type]listForm{}
	}
	f.objects[t] = form
	lt := reflect.TypeOf(list)
	if list == nil || lt.Kind() != reflect.Pointer || lt.Elem().Kind() != reflect.Struct {
		return
	}
	if last, index := lastJSONField(lt.Elem()); last == "items" {
		if ft := lt.Elem().FieldByIndex(index).Type; ft.Kind() == reflect.Slice && ft.Elem() == t.Elem() {
			f.lists[lt] = listForm{index: index, item: form}
		}
	}
}

// lastJSONField is the JSON name and index of the last field encoding/json
// writes of struct type t (inlined structs are looked into).
func lastJSONField(t reflect.Type) (string, []int) {
	for i := t.NumField() - 1; i >= 0; i-- {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			if f.Type.Kind() != reflect.Struct {
				return "", nil
			}
			if n, index := lastJSONField(f.Type); n != "" {
				return n, append([]int{i}, index...)
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		return name, []int{i}
	}
	return "", nil
}

// zeroStatus tells whether obj, of a registered kind, holds the zero status.
func (f *statusForms) zeroStatus(obj runtime.Object) (statusForm, bool) {
	form, ok := f.objects[reflect.TypeOf(obj)]
	if !ok {
		return form, false
	}
	return form, reflect.ValueOf(obj).Elem().FieldByIndex(form.index).IsZero()
}

// withoutZeroStatus is ns with JSON and YAML serializers that leave out the
// zero status of the kinds of forms.
func withoutZeroStatus(ns runtime.NegotiatedSerializer, forms *statusForms) runtime.NegotiatedSerializer {
	if len(forms.objects) == 0 {
		return ns
	}
	infos := slices.Clone(ns.SupportedMediaTypes())
	for i := range infos {
		switch infos[i].MediaType {
		case runtime.ContentTypeJSON:
			if infos[i].Serializer != nil {
				infos[i].Serializer = statusEncoder{Serializer: infos[i].Serializer, forms: forms}
			}
			if infos[i].PrettySerializer != nil {
				infos[i].PrettySerializer = statusEncoder{Serializer: infos[i].PrettySerializer, forms: forms, pretty: true}
			}
		case runtime.ContentTypeYAML:
			if infos[i].Serializer != nil {
				infos[i].Serializer = statusEncoder{Serializer: infos[i].Serializer, forms: forms, yaml: true}
			}
		}
	}
	return mediaTypes{NegotiatedSerializer: ns, infos: infos}
}

// mediaTypes is a NegotiatedSerializer with other serializers.
type mediaTypes struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

func (m mediaTypes) SupportedMediaTypes() []runtime.SerializerInfo { return m.infos }

// statusEncoder is a JSON (or pretty JSON, or YAML) serializer whose Encode
// leaves out the zero status of the objects of forms' kinds, and of the
// items of their lists; everything else it encodes as its Serializer does.
type statusEncoder struct {
	runtime.Serializer
	forms        *statusForms
	pretty, yaml bool
}

var statusIdentifiers sync.Map // runtime.Identifier -> runtime.Identifier

// Identifier is the serializer's, marked: objects whose encodings are cached
// (the watch cache's) keep the two apart.
func (e statusEncoder) Identifier() runtime.Identifier {
	id := e.Serializer.Identifier()
	if marked, ok := statusIdentifiers.Load(id); ok {
		return marked.(runtime.Identifier)
	}
	marked := runtime.Identifier(`{"absentStatus":` + string(id) + `}`)
	statusIdentifiers.Store(id, marked)
	return marked
}

func (e statusEncoder) Encode(obj runtime.Object, w io.Writer) error {
	if co, ok := obj.(runtime.CacheableObject); ok {
		return co.CacheEncode(e.Identifier(), e.encode, w)
	}
	return e.encode(obj, w)
}

func (e statusEncoder) encode(obj runtime.Object, w io.Writer) error {
	if form, zero := e.forms.zeroStatus(obj); zero {
		b, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		return e.write(withoutSuffix(b, form.suffix), w)
	}
	if l, ok := e.forms.lists[reflect.TypeOf(obj)]; ok {
		if b, ok, err := e.list(obj, l); ok || err != nil {
			if err != nil {
				return err
			}
			return e.write(b, w)
		}
	}
	return e.Serializer.Encode(obj, w)
}

// list is the JSON of a list some of whose items hold the zero status (ok
// false when none does): the list without its items, then each item.
func (e statusEncoder) list(obj runtime.Object, l listForm) ([]byte, bool, error) {
	items := reflect.ValueOf(obj).Elem().FieldByIndex(l.index)
	zeros := false
	for i := 0; i < items.Len() && !zeros; i++ {
		zeros = items.Index(i).FieldByIndex(l.item.index).IsZero()
	}
	if !zeros {
		return nil, false, nil
	}
	empty := reflect.New(reflect.TypeOf(obj).Elem())
	empty.Elem().Set(reflect.ValueOf(obj).Elem())
	empty.Elem().FieldByIndex(l.index).Set(reflect.MakeSlice(items.Type(), 0, 0))
	head, err := json.Marshal(empty.Interface())
	if err != nil {
		return nil, true, err
	}
	if !bytes.HasSuffix(head, []byte(`[]}`)) {
		b, err := json.Marshal(obj)
		return b, true, err
	}
	out := bytes.NewBuffer(head[:len(head)-2])
	for i := 0; i < items.Len(); i++ {
		if i > 0 {
			out.WriteByte(',')
		}
		item := items.Index(i).Addr().Interface()
		b, err := json.Marshal(item)
		if err != nil {
			return nil, true, err
		}
		if items.Index(i).FieldByIndex(l.item.index).IsZero() {
			b = withoutSuffix(b, l.item.suffix)
		}
		out.Write(b)
	}
	out.WriteString("]}")
	return out.Bytes(), true, nil
}

// withoutSuffix is the JSON b of an object with its last field, the zero
// status written as suffix, left out; b when it does not end so.
func withoutSuffix(b, suffix []byte) []byte {
	if !bytes.HasSuffix(b, suffix) {
		return b
	}
	return append(b[:len(b)-len(suffix)], '}')
}

// write writes the compact JSON b as the serializer writes its objects: a
// line of JSON, indented JSON, or YAML.
func (e statusEncoder) write(b []byte, w io.Writer) error {
	switch {
	case e.yaml:
		y, err := yaml.JSONToYAML(b)
		if err != nil {
			return err
		}
		_, err = w.Write(y)
		return err
	case e.pretty:
		var out bytes.Buffer
		if err := json.Indent(&out, b, "", "  "); err != nil {
			return err
		}
		_, err := w.Write(out.Bytes())
		return err
	}
	_, err := w.Write(append(b, '\n'))
	return err
}

// statusIndexes caches statusIndex by type.
var statusIndexes sync.Map // reflect.Type -> []int

// statusIndex is the index of the top-level field written as "status" of
// struct type t (inlined structs are looked into), or nil.
func statusIndex(t reflect.Type) []int {
	if index, ok := statusIndexes.Load(t); ok {
		return index.([]int)
	}
	var find func(t reflect.Type) []int
	find = func(t reflect.Type) []int {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case !f.IsExported() || name == "-":
			case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
				if index := find(f.Type); index != nil {
					return append([]int{i}, index...)
				}
			case name == "status":
				return []int{i}
			}
		}
		return nil
	}
	index := find(t)
	statusIndexes.Store(t, index)
	return index
}

// zeroStatusOf tells whether obj, an object of any version (the internal
// one too), has a status field holding its zero value.
func zeroStatusOf(obj runtime.Object) bool {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return false
	}
	index := statusIndex(v.Elem().Type())
	return index != nil && v.Elem().FieldByIndex(index).IsZero()
}
