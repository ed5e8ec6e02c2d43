package conformance

import (
	"math/rand"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/apigroup"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/server"
)

// RoundTrip fuzzes every kind of group and checks that nothing is lost
// converting each version through the internal type and the internal type
// through each version, naming each field that is (checkLostFields); then
// that internal -> each version -> internal loses nothing through JSON and
// protobuf (k8s.io/apimachinery's roundtrip tester), and through CBOR. Fuzzed objects get their
// version's defaults first, as decoding applies them. Kinds that generate
// could not give a protobuf encoding (it warned) are round-tripped in JSON.
func RoundTrip(t *testing.T, groups []*builders.APIGroup, group string) {
	var g *builders.APIGroup
	for _, x := range groups {
		if x.Name == group {
			g = x
		}
	}
	if g == nil {
		t.Fatalf("no group %s", group)
	}
	scheme, err := server.NewScheme([]*builders.APIGroup{g})
	if err != nil {
		t.Fatal(err)
	}
	var funcs []interface{}
	for _, r := range g.Resources {
		for _, obj := range []runtime.Object{r.New(), r.NewList()} {
			funcs = append(funcs, defaultingFiller(scheme, reflect.TypeOf(obj), apigroup.StorageVersion(g, r)))
		}
	}
	codecs := runtimeserializer.NewCodecFactory(scheme)
	f := fuzzer.FuzzerFor(fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, func(runtimeserializer.CodecFactory) []interface{} { return funcs }),
		rand.NewSource(rand.Int63()), codecs)
	// First, each field by name: what a version's client sends, or the
	// internal type holds, must come back from the other side.
	lost := map[string]bool{}
	for _, r := range g.Resources {
		versions := r.Versions
		if len(versions) == 0 {
			versions = g.Versions
		}
		if checkLostFields(t, scheme, f.Fill, schema.GroupKind{Group: g.Name, Kind: r.Kind}, versions) {
			lost[r.Kind], lost[r.Kind+"List"] = true, true
		}
	}
	internal := schema.GroupVersion{Group: g.Name, Version: runtime.APIVersionInternal}
	for kind := range scheme.KnownTypes(internal) {
		if roundtrip.GlobalNonRoundTrippableTypes().Has(kind) {
			continue // WatchEvent and the options kinds every group version registers
		}
		if lost[kind] {
			t.Logf("%s loses fields (above): not round-tripped through the codecs", kind)
			continue
		}
		gvk := internal.WithKind(kind)
		storage := schema.GroupVersion{Group: g.Name, Version: g.StorageVersion}
		for _, r := range g.Resources {
			if kind == r.Kind || kind == r.Kind+"List" {
				storage = apigroup.StorageVersion(g, r)
			}
		}
		external, err := scheme.New(storage.WithKind(kind))
		if _, protobuf := external.(interface{ Marshal() ([]byte, error) }); err == nil && !protobuf {
			// generate warned that this kind has no protobuf encoding: JSON only.
			t.Logf("%s has no protobuf encoding: round-tripping JSON only", kind)
			roundtrip.RoundTripSpecificKindWithoutProtobuf(t, gvk, scheme, codecs, f, nil)
			continue
		}
		roundtrip.RoundTripSpecificKind(t, gvk, scheme, codecs, f, nil)
	}
	// CBOR (KEP-4222), which the server speaks with CBORServingAndStorage on.
	for kind := range scheme.KnownTypes(internal) {
		if roundtrip.GlobalNonRoundTrippableTypes().Has(kind) || lost[kind] {
			continue
		}
		roundTripCBOR(t, scheme, f.Fill, internal.WithKind(kind), *roundtrip.FuzzIters)
	}
}

var continueType = reflect.TypeOf(randfill.Continue{})

// defaultingFiller returns a randfill custom function for typ (a pointer to
// an internal type) that fills the object and then applies the defaults of
// version gv to it.
func defaultingFiller(scheme *runtime.Scheme, typ reflect.Type, gv schema.GroupVersion) interface{} {
	fnType := reflect.FuncOf([]reflect.Type{typ, continueType}, nil, false)
	return reflect.MakeFunc(fnType, func(args []reflect.Value) []reflect.Value {
		obj := args[0].Interface()
		c := args[1].Interface().(randfill.Continue)
		c.FillNoCustom(obj)
		internal := obj.(runtime.Object)
		external, err := scheme.ConvertToVersion(internal.DeepCopyObject(), gv)
		if err != nil {
			panic(err)
		}
		scheme.Default(external)
		if err := scheme.Convert(external, internal, nil); err != nil {
			panic(err)
		}
		return nil
	}).Interface()
}
