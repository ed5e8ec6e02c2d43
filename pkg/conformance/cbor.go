package conformance

import (
	"fmt"

	"github.com/google/go-cmp/cmp"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
)

// CBOR (KEP-4222): with k8s.io/apiserver's CBORServingAndStorage gate on,
// the server encodes and decodes objects with k8s.io/apimachinery's CBOR
// serializer (application/cbor). These checks hold a project's kinds to it:
// RoundTrip sends fuzzed objects through it, Compatibility the fixtures.

// cborRoundTrip encodes obj in version gv with k8s.io/apimachinery's CBOR
// serializer and decodes the bytes back to obj's own version (internal or
// external, as scheme registers it). It returns what differs, or the
// encoding or decoding error; "" and nil when obj came back equal.
func cborRoundTrip(scheme *runtime.Scheme, obj runtime.Object, gv schema.GroupVersion) (string, error) {
	kinds, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		return "", err
	}
	var decodeTo runtime.GroupVersioner = runtime.InternalGroupVersioner
	if kinds[0].Version != runtime.APIVersionInternal {
		decodeTo = kinds[0].GroupVersion()
	}
	s := cbor.NewSerializer(scheme, scheme)
	codec := runtimeserializer.NewCodecFactory(scheme).CodecForVersions(s, s, gv, decodeTo)
	original := obj.DeepCopyObject()
	data, err := runtime.Encode(codec, obj.DeepCopyObject())
	if err != nil {
		return "", fmt.Errorf("encoding %s as CBOR: %w", gv, err)
	}
	back, err := runtime.Decode(codec, data)
	if err != nil {
		diag, _ := direct.Diagnose(data)
		return "", fmt.Errorf("decoding the CBOR of %s: %w\n%s", gv, err, diag)
	}
	// Compared without apiVersion and kind, which decoding sets.
	back.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	original.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if !apiequality.Semantic.DeepEqual(original, back) {
		return cmp.Diff(original, back), nil
	}
	return "", nil
}

// roundTripCBOR fills an object of the internal kind gvk with f, iters
// times, and sends it through CBOR in every external version of its kind.
func roundTripCBOR(t errorer, scheme *runtime.Scheme, fill func(any), gvk schema.GroupVersionKind, iters int) {
	var versions []schema.GroupVersion
	for k := range scheme.AllKnownTypes() {
		if k.GroupKind() == gvk.GroupKind() && k.Version != runtime.APIVersionInternal {
			versions = append(versions, k.GroupVersion())
		}
	}
	for range iters {
		obj, err := scheme.New(gvk)
		if err != nil {
			t.Errorf("%s: %v", gvk, err)
			return
		}
		fill(obj)
		for _, gv := range versions {
			diff, err := cborRoundTrip(scheme, obj, gv)
			if err != nil {
				t.Errorf("%s through CBOR in %s: %v", gvk.Kind, gv, err)
				return
			}
			if diff != "" {
				t.Errorf("%s through CBOR in %s comes back different (-sent +read):\n%s", gvk.Kind, gv, diff)
				return
			}
		}
	}
}

type errorer interface {
	Errorf(format string, args ...any)
}
