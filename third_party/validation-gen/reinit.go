package validationgen

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"k8s.io/code-generator/cmd/validation-gen/validators"
	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/namer"
	"k8s.io/gengo/v2/types"
)

// listsGenerated is the validators' record of the list types whose
// validation was already generated (validators/list.go), a package-level
// map no registry field reaches: a second run must start without it, or it
// skips every list the first run saw.
//
//go:linkname listsGenerated k8s.io/code-generator/cmd/validation-gen/validators.listsGenerated
var listsGenerated map[string]bool

// registry is validation-gen's global validator registry, once initialised.
var registry validators.ValidationExtractor

// initValidators initialises the validator registry for this run's
// context. Upstream initialises it once per process and panics on a second
// init; generate may run more than once in a process (conversion stubs
// written, then generated again; tests). Before a second init, the registry
// is returned to what it was before the first: not initialised, no tag
// index, and the maps the tag validators share between the types of a run
// (unions, list metadata, modes) and the record of generated lists emptied. Init then gives every tag validator the
// new context, as the first time.
func initValidators(c *generator.Context, inputToCanonicalPkg map[string]string) validators.ValidationExtractor {
	if registry != nil {
		if err := reset(registry); err != nil {
			panic(fmt.Sprintf("validation-gen's validator registry cannot be initialised again: %v", err))
		}
	}
	registry = validators.InitGlobalValidator(c, inputToCanonicalPkg)
	return registry
}

// reset returns the registry behind ext to its state before init.
func reset(ext validators.ValidationExtractor) error {
	v := reflect.ValueOf(ext)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("registry is a %T, not a pointer to a struct", ext)
	}
	v = v.Elem()
	field := func(name string, kind reflect.Kind) (reflect.Value, error) {
		f := v.FieldByName(name)
		if !f.IsValid() || f.Kind() != kind {
			return reflect.Value{}, fmt.Errorf("%s has no %s field %q", v.Type(), kind, name)
		}
		return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem(), nil
	}
	initialized, err := field("initialized", reflect.Struct)
	if err != nil {
		return err
	}
	flag, ok := initialized.Addr().Interface().(*atomic.Bool)
	if !ok {
		return fmt.Errorf("%s.initialized is a %s, not an atomic.Bool", v.Type(), initialized.Type())
	}
	index, err := field("tagIndex", reflect.Slice)
	if err != nil {
		return err
	}
	tagValidators, err := field("tagValidators", reflect.Map)
	if err != nil {
		return err
	}
	iter := tagValidators.MapRange()
	for iter.Next() {
		clearSharedMaps(iter.Value())
	}
	clear(listsGenerated)
	index.Set(reflect.Zero(index.Type()))
	flag.Store(false)
	return nil
}

// clearSharedMaps empties the map fields of a tag validator (a struct or a
// pointer to one, behind the TagValidator interface).
func clearSharedMaps(tv reflect.Value) {
	for tv.Kind() == reflect.Interface || tv.Kind() == reflect.Pointer {
		if tv.IsNil() {
			return
		}
		tv = tv.Elem()
	}
	if tv.Kind() != reflect.Struct {
		return
	}
	for i := 0; i < tv.NumField(); i++ {
		if f := tv.Field(i); f.Kind() == reflect.Map && !f.IsNil() {
			f.Clear() // a map is a reference: this empties the validator's map
		}
	}
}

var (
	tagNamesOnce sync.Once
	tagNames     map[string]bool
)

// IsValidationTag tells whether name (without the "+", such as
// "k8s:minimum") is a tag validation-gen's validators read.
func IsValidationTag(name string) bool {
	tagNamesOnce.Do(func() {
		// The validators' documentation, as validation-gen --docs reads it:
		// an init over an empty context.
		c := &generator.Context{Namers: namer.NameSystems{}, Universe: types.Universe{}, FileTypes: map[string]generator.FileType{}}
		tagNames = map[string]bool{}
		for _, d := range initValidators(c, nil).Docs() {
			tagNames[strings.TrimPrefix(d.Tag, "+")] = true
		}
	})
	return tagNames[name]
}
