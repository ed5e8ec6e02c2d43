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

	"github.com/apiserver-boot/apiserver-boot/pkg/internal/jsoncontent"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/validation"
)

// A custom resource has a spec or a status only when one was sent:
// kube-apiserver creates one without spec when the client sends none, and
// drops the status of a create when /status is served. The Go object always
// has both, and encoding/json writes them even when they are the zero value
// (`status: {}`, or zero counters such as `ready: 0` for fields without
// omitempty). So the server's JSON and YAML answers (reads, lists, watch
// events, the object a write returns) leave out a spec or status that is the
// Go zero value (jsoncontent.Absent), and its printer columns show nothing
// there (table.go). The stored object is not touched, and protobuf and CBOR,
// which typed clients read into the same zero value either way, are answered
// as they are.

// absentForms says, per versioned Go type of the served kinds, how its
// absent fields are written.
type absentForms struct {
	objects map[reflect.Type]absentForm // *Kind
	lists   map[reflect.Type]listForm   // *KindList
}

// absentForm is the fields a kind's Go type writes last, in order, that are
// absent when zero (spec, status) or left out when empty (a status that is
// a pointer, or omitzero): each one's index, name and JSON when zero.
type absentForm []trailingField

type trailingField struct {
	index []int
	name  string
	zero  []byte
	// omittable: encoding/json leaves it out when empty (a nil pointer,
	// omitzero), so it is not taken for absent, only looked past.
	omittable bool
}

// listForm is the items field of a list type, whose items are of form item.
type listForm struct {
	index []int
	item  absentForm
}

// add registers the Go types of a kind and of its list (obj, list: new
// objects of each); a type that does not write spec or status last is left
// as it is.
func (f *absentForms) add(obj, list runtime.Object) {
	t := reflect.TypeOf(obj)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return
	}
	var form absentForm
	for _, field := range writtenFields(t.Elem()) {
		if !slices.Contains(jsoncontent.AbsentFields, field.name) {
			form = nil // only those written after the last other field
			continue
		}
		ft := t.Elem().FieldByIndex(field.index).Type
		switch {
		case ft.Kind() == reflect.Struct && !field.omitZero:
			// Through a pointer, as the field of an object encoded
			// through one is: a MarshalJSON of the pointer is called.
			zero, err := json.Marshal(reflect.New(ft).Interface())
			if err != nil {
				return
			}
			form = append(form, trailingField{index: field.index, name: field.name, zero: zero})
		case field.omitZero || field.omitEmpty && (ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Map || ft.Kind() == reflect.Interface):
			form = append(form, trailingField{index: field.index, name: field.name, omittable: true})
		default:
			form = nil
		}
	}
	if !slices.ContainsFunc(form, func(f trailingField) bool { return !f.omittable }) {
		return
	}
	if f.objects == nil {
		f.objects, f.lists = map[reflect.Type]absentForm{}, map[reflect.Type]listForm{}
	}
	f.objects[t] = form
	lt := reflect.TypeOf(list)
	if list == nil || lt.Kind() != reflect.Pointer || lt.Elem().Kind() != reflect.Struct {
		return
	}
	if fields := writtenFields(lt.Elem()); len(fields) > 0 {
		items := fields[len(fields)-1]
		if ft := lt.Elem().FieldByIndex(items.index).Type; items.name == "items" && !items.omitEmpty && ft.Kind() == reflect.Slice && ft.Elem() == t.Elem() {
			f.lists[lt] = listForm{index: items.index, item: form}
		}
	}
}

// writtenField is a field encoding/json writes of a struct.
type writtenField struct {
	name                string
	index               []int
	omitEmpty, omitZero bool
}

// writtenFields are the fields encoding/json writes of struct type t, in
// order (inlined structs are looked into); nil when t inlines what is not
// a struct.
func writtenFields(t reflect.Type) []writtenField {
	var fields []writtenField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() && !f.Anonymous || tag == "-":
		case f.Anonymous && tag == "":
			if f.Type.Kind() != reflect.Struct {
				return nil
			}
			for _, inner := range writtenFields(f.Type) {
				inner.index = append([]int{i}, inner.index...)
				fields = append(fields, inner)
			}
		default:
			if tag == "" {
				tag = f.Name
			}
			o := "," + opts + ","
			fields = append(fields, writtenField{name: tag, index: []int{i}, omitEmpty: strings.Contains(o, ",omitempty,"), omitZero: strings.Contains(o, ",omitzero,")})
		}
	}
	return fields
}

// absent tells whether a value of form holds one of its fields absent.
func (form absentForm) absent(v reflect.Value) bool {
	for _, f := range form {
		if !f.omittable && jsoncontent.AbsentIn(v, f.name) {
			return true
		}
	}
	return false
}

// omitted tells whether encoding/json leaves field f of v out.
func (f trailingField) omitted(v reflect.Value) bool {
	fv := v.FieldByIndex(f.index)
	return f.omittable && (fv.IsZero() || fv.Kind() == reflect.Map && fv.Len() == 0)
}

// leaveOut is b, the JSON of v (a value of form), without the fields of
// form that v holds zero; b when its end is not what form says.
func (form absentForm) leaveOut(b []byte, v reflect.Value) []byte {
	if len(b) == 0 || b[len(b)-1] != '}' {
		return b
	}
	end := len(b) - 1 // the closing brace
	var kept [][]byte
	for i := len(form) - 1; i >= 0; i-- {
		f := form[i]
		if f.omitted(v) {
			continue
		}
		zero := !f.omittable && jsoncontent.AbsentIn(v, f.name)
		if !zero && !form[:i].absent(v) {
			break // nothing before it is left out
		}
		value := f.zero
		if !zero {
			var err error
			if value, err = json.Marshal(addressOf(v.FieldByIndex(f.index))); err != nil {
				return b
			}
		}
		field := append([]byte(`,"`+f.name+`":`), value...)
		if !bytes.HasSuffix(b[:end], field) {
			return b
		}
		end -= len(field)
		if !zero {
			kept = append([][]byte{field}, kept...)
		}
	}
	out := append([]byte(nil), b[:end]...)
	for _, k := range kept {
		out = append(out, k...)
	}
	return append(out, '}')
}

// withoutAbsent is ns with JSON and YAML serializers that leave out the
// zero spec and status of the kinds of forms.
func withoutAbsent(ns runtime.NegotiatedSerializer, forms *absentForms) runtime.NegotiatedSerializer {
	if len(forms.objects) == 0 {
		return ns
	}
	return validation.WithSerializers(ns, func(info *runtime.SerializerInfo) {
		switch info.MediaType {
		case runtime.ContentTypeJSON:
			if info.Serializer != nil {
				info.Serializer = absentEncoder{Serializer: info.Serializer, forms: forms}
			}
			if info.PrettySerializer != nil {
				info.PrettySerializer = absentEncoder{Serializer: info.PrettySerializer, forms: forms, pretty: true}
			}
		case runtime.ContentTypeYAML:
			if info.Serializer != nil {
				info.Serializer = absentEncoder{Serializer: info.Serializer, forms: forms, yaml: true}
			}
		}
	})
}

// absentEncoder is a JSON (or pretty JSON, or YAML) serializer whose Encode
// leaves out the zero status of the objects of forms' kinds, and of the
// items of their lists; everything else it encodes as its Serializer does.
type absentEncoder struct {
	runtime.Serializer
	forms        *absentForms
	pretty, yaml bool
}

var absentIdentifiers sync.Map // runtime.Identifier -> runtime.Identifier

// Identifier is the serializer's, marked: objects whose encodings are cached
// (the watch cache's) keep the two apart.
func (e absentEncoder) Identifier() runtime.Identifier {
	id := e.Serializer.Identifier()
	if marked, ok := absentIdentifiers.Load(id); ok {
		return marked.(runtime.Identifier)
	}
	marked := runtime.Identifier(`{"absentFields":` + string(id) + `}`)
	absentIdentifiers.Store(id, marked)
	return marked
}

func (e absentEncoder) Encode(obj runtime.Object, w io.Writer) error {
	if co, ok := obj.(runtime.CacheableObject); ok {
		return co.CacheEncode(e.Identifier(), e.encode, w)
	}
	return e.encode(obj, w)
}

func (e absentEncoder) encode(obj runtime.Object, w io.Writer) error {
	if form, ok := e.forms.objects[reflect.TypeOf(obj)]; ok && form.absent(reflect.ValueOf(obj).Elem()) {
		b, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		return e.write(form.leaveOut(b, reflect.ValueOf(obj).Elem()), w)
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

// list is the JSON of a list some of whose items hold a zero spec or status
// (ok false when none does): the list without its items, then each item.
func (e absentEncoder) list(obj runtime.Object, l listForm) ([]byte, bool, error) {
	items := reflect.ValueOf(obj).Elem().FieldByIndex(l.index)
	zeros := false
	for i := 0; i < items.Len() && !zeros; i++ {
		zeros = l.item.absent(items.Index(i))
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
	if !bytes.HasSuffix(head, []byte(`,"items":[]}`)) {
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
		if l.item.absent(items.Index(i)) {
			b = l.item.leaveOut(b, items.Index(i))
		}
		out.Write(b)
	}
	out.WriteString("]}")
	return out.Bytes(), true, nil
}

// write writes the compact JSON b as the serializer writes its objects: a
// line of JSON, indented JSON, or YAML.
func (e absentEncoder) write(b []byte, w io.Writer) error {
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

// addressOf is a pointer to fv where it can be taken (a MarshalJSON of the
// pointer is then called, as encoding/json calls it on an addressable
// field), or fv's value.
func addressOf(fv reflect.Value) any {
	if fv.CanAddr() {
		return fv.Addr().Interface()
	}
	return fv.Interface()
}
