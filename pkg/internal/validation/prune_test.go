package validation

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// beacon is a kind whose Go types hold fields (spec.experimental,
// spec.lights[].extra) that its standard channel's manifest leaves out.
type beaconLight struct {
	Name  string `json:"name,omitempty"`
	Extra string `json:"extra,omitempty"`
}
type beaconSpec struct {
	Mode         string        `json:"mode,omitempty"`
	Experimental string        `json:"experimental,omitempty"`
	Lights       []beaconLight `json:"lights,omitempty"`
}
type beacon struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              beaconSpec `json:"spec,omitempty"`
}

func (b *beacon) DeepCopyObject() runtime.Object {
	c := *b
	b.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Spec.Lights = append([]beaconLight(nil), b.Spec.Lights...)
	return &c
}

// beaconManifest is the standard channel's schema: no experimental field,
// lights without extra, a default for mode.
const beaconManifest = `{"type":"object","properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","properties":{
    "mode":{"type":"string","default":"auto"},
    "lights":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}}}}}}}}`

// beaconMarkers is the schema the markers of the Go types give: every field
// the types have.
const beaconMarkers = `{"type":"object","properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","properties":{
    "mode":{"type":"string","default":"auto"},"experimental":{"type":"string"},
    "lights":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"extra":{"type":"string"}}}}}}}}`

var beaconGV = schema.GroupVersion{Group: "example.com", Version: "v1"}

// beaconScheme registers beacon, defaulted as generated defaulters do
// (builders.ApplySchemaDefaults), and its schema, from manifest (a CRD
// manifest's) or from the markers.
func beaconScheme(t *testing.T, manifest bool) *runtime.Scheme {
	t.Helper()
	scheme, _ := beaconValidator(t, manifest)
	return scheme
}

// beaconValidator is beaconScheme with the beacon's Validator.
func beaconValidator(t *testing.T, manifest bool) (*runtime.Scheme, *Validator) {
	t.Helper()
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(beaconGV.WithKind("Beacon"), &beacon{})
	scheme.AddKnownTypeWithName(schema.GroupVersion{Group: beaconGV.Group, Version: runtime.APIVersionInternal}.WithKind("Beacon"), &beacon{})
	scheme.AddTypeDefaultingFunc(&beacon{}, func(obj any) { builders.ApplySchemaDefaults(obj.(runtime.Object)) })
	s := builders.Schema{OpenAPIV3: beaconMarkers}
	if manifest {
		s = builders.Schema{OpenAPIV3: beaconManifest, Manifest: "config/crd/bases/example.com_beacons.yaml"}
	}
	v, err := New(scheme, beaconGV.Group, &builders.Resource{Kind: "Beacon", Plural: "beacons", Singular: "beacon",
		Versions: []string{"v1"}, StorageVersion: "v1", Schemas: map[string]builders.Schema{"v1": s}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		registerManifestSchema(beaconGV.WithKind("Beacon"), nil, false)
		schemaDefaults.Delete(reflect.TypeOf(&beacon{}))
	})
	return scheme, v
}

func fullBeacon() *beacon {
	return &beacon{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"team": "a"}},
		Spec: beaconSpec{Experimental: "x", Lights: []beaconLight{{Name: "one", Extra: "y"}}}}
}

// TestManifestSchemaPrunesDecoded: an object of a kind whose schema is a
// CRD manifest's is pruned of the fields the manifest does not declare
// each time it is decoded (the defaulter every decode calls, from a request
// or from storage), also where the Go type has them, and gets the manifest's
// defaults; the same types with the markers' schema keep them; a server
// started again with the markers' schema no longer prunes.
func TestManifestSchemaPrunesDecoded(t *testing.T) {
	scheme := beaconScheme(t, true)
	b := fullBeacon()
	scheme.Default(b)
	want := beaconSpec{Mode: "auto", Lights: []beaconLight{{Name: "one"}}}
	if !reflect.DeepEqual(b.Spec, want) || b.Name != "b" || b.Labels["team"] != "a" {
		t.Errorf("manifest kind, decoded: %+v %+v, want spec %+v and its metadata", b.ObjectMeta, b.Spec, want)
	}

	scheme = beaconScheme(t, false)
	b = fullBeacon()
	scheme.Default(b)
	want = fullBeacon().Spec
	want.Mode = "auto"
	if !reflect.DeepEqual(b.Spec, want) {
		t.Errorf("markers kind (and a manifest kind served again from markers), decoded: %+v, want %+v", b.Spec, want)
	}
}

const beaconJSON = `{"apiVersion":"example.com/v1","kind":"Beacon","metadata":{"name":"b"},
  "spec":{"experimental":"x","lights":[{"name":"one","extra":"y"}]}}`

// TestPruningSerializer: the JSON and YAML decoders of the API groups prune
// a manifest kind's body before it is decoded into the Go types, and the
// strict ones report what they pruned as kube-apiserver's CRD handler does
// (a strict decoding error, `unknown field "spec.x"`, beside the object),
// with the Go type's own unknown fields; the lenient ones say nothing. A
// markers kind's body is decoded as before.
func TestPruningSerializer(t *testing.T) {
	yamlBody := "apiVersion: example.com/v1\nkind: Beacon\nmetadata:\n  name: b\nspec:\n  experimental: x\n  lights:\n  - name: one\n    extra: \"y\"\n"
	for _, tc := range []struct {
		mediaType, body string
	}{{runtime.ContentTypeJSON, beaconJSON}, {runtime.ContentTypeYAML, yamlBody}} {
		scheme := beaconScheme(t, true)
		ns := PruningSerializer(serializer.NewCodecFactory(scheme))
		info, ok := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), tc.mediaType)
		if !ok {
			t.Fatalf("no %s serializer", tc.mediaType)
		}
		decode := func(strict bool, body string) (*beacon, error) {
			s := info.Serializer
			if strict {
				s = info.StrictSerializer
			}
			obj, _, err := ns.DecoderToVersion(s, beaconGV).Decode([]byte(body), nil, nil)
			b, _ := obj.(*beacon)
			return b, err
		}

		b, err := decode(true, tc.body)
		strictErr, isStrict := runtime.AsStrictDecodingError(err)
		if !isStrict || b == nil {
			t.Fatalf("%s, strict: %v, want a strict decoding error beside the object", tc.mediaType, err)
		}
		if got, want := errorText(strictErr.Errors()), "unknown field \"spec.experimental\"\nunknown field \"spec.lights[0].extra\""; got != want {
			t.Errorf("%s, strict: reported\n%s\nwant\n%s", tc.mediaType, got, want)
		}
		if want := (beaconSpec{Mode: "auto", Lights: []beaconLight{{Name: "one"}}}); !reflect.DeepEqual(b.Spec, want) {
			t.Errorf("%s, strict: decoded %+v, want %+v", tc.mediaType, b.Spec, want)
		}
		// A field neither the manifest nor the Go type has is reported once.
		withUnknown := strings.Replace(beaconJSON, `"experimental":"x"`, `"experimental":"x","bogus":1`, 1)
		if _, err := decode(true, withUnknown); err == nil || !strings.Contains(err.Error(), `unknown field "spec.bogus"`) || strings.Count(err.Error(), "spec.bogus") != 1 {
			t.Errorf("%s, strict, a field the Go type lacks too: %v", tc.mediaType, err)
		}

		// A duplicate field the pruned body no longer shows is reported,
		// first, as the strict decoder reports it in the body as sent.
		if tc.mediaType == runtime.ContentTypeJSON {
			dup := strings.Replace(beaconJSON, `"experimental":"x"`, `"experimental":"x","mode":"a","mode":"b"`, 1)
			_, err := decode(true, dup)
			strictErr, _ := runtime.AsStrictDecodingError(err)
			if strictErr == nil || len(strictErr.Errors()) != 3 || strictErr.Errors()[0].Error() != `duplicate field "spec.mode"` {
				t.Errorf("%s, strict, a duplicate field: %v", tc.mediaType, err)
			}
		}

		b, err = decode(false, tc.body)
		if err != nil || b == nil || b.Spec.Experimental != "" || b.Spec.Lights[0].Extra != "" {
			t.Errorf("%s, lenient: %v, %+v, want no error and the object pruned", tc.mediaType, err, b)
		}

		scheme = beaconScheme(t, false)
		ns = PruningSerializer(serializer.NewCodecFactory(scheme))
		info, _ = runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), tc.mediaType)
		b, err = decode(true, tc.body)
		if err != nil || b.Spec.Experimental != "x" || b.Spec.Lights[0].Extra != "y" {
			t.Errorf("%s, markers kind, strict: %v, %+v, want it decoded as sent", tc.mediaType, err, b)
		}
	}
}

// TestPruneBeforeStorage: what a hook set that a manifest kind's manifest
// does not declare is removed before the object is stored (the strategy's
// Canonicalize calls Prune last); a markers kind keeps it.
func TestPruneBeforeStorage(t *testing.T) {
	for _, manifest := range []bool{true, false} {
		scheme := beaconScheme(t, manifest)
		s := builders.Schema{OpenAPIV3: beaconMarkers}
		if manifest {
			s = builders.Schema{OpenAPIV3: beaconManifest, Manifest: "config/crd/bases/example.com_beacons.yaml"}
		}
		v, err := New(scheme, beaconGV.Group, &builders.Resource{Kind: "Beacon", Plural: "beacons", Singular: "beacon",
			Versions: []string{"v1"}, StorageVersion: "v1", Schemas: map[string]builders.Schema{"v1": s}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b := fullBeacon()
		v.Prune(b)
		want := fullBeacon()
		if manifest {
			want.Spec = beaconSpec{Lights: []beaconLight{{Name: "one"}}}
		}
		if !reflect.DeepEqual(b.Spec, want.Spec) || !reflect.DeepEqual(b.Labels, want.Labels) || b.Name != want.Name {
			t.Errorf("manifest %v: %+v %+v, want %+v", manifest, b.ObjectMeta, b.Spec, want.Spec)
		}
	}
}

// TestApplyRefusesUndeclaredFields: server-side apply of a field a manifest
// kind's schema does not declare is refused whatever fieldValidation says,
// as kube-apiserver refuses it for a CRD (".spec.experimental: field not
// declared in schema"), when the object is created and when it is updated,
// also where the published models let it through (a Go type another kind
// shares); the same apply to a markers kind, and a JSON create (reported by
// PruningSerializer), are not refused here.
func TestApplyRefusesUndeclaredFields(t *testing.T) {
	applied := []byte("apiVersion: example.com/v1\nkind: Beacon\nmetadata:\n  name: b\nspec:\n  mode: on\n  experimental: x\n  lights:\n  - name: one\n    extra: y\n")
	sent := func(contentType string, body []byte) context.Context {
		ctx := request.WithRequestInfo(context.Background(), &request.RequestInfo{IsResourceRequest: true, Verb: "patch",
			APIGroup: "example.com", APIVersion: "v1", Resource: "beacons", Name: "b"})
		return withRecord(ctx, contentType, body)
	}
	validator := func(manifest bool) *Validator {
		_, v := beaconValidator(t, manifest)
		return v
	}
	obj := &beacon{TypeMeta: metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "Beacon"}, ObjectMeta: metav1.ObjectMeta{Name: "b"},
		Spec: beaconSpec{Mode: "on", Lights: []beaconLight{{Name: "one"}}}}
	old := obj.DeepCopyObject().(*beacon)
	old.Spec.Mode = "off"

	v := validator(true)
	for what, errs := range map[string]field.ErrorList{
		"create": v.Validate(sent("application/apply-patch+yaml", applied), obj),
		"update": v.ValidateUpdate(sent("application/apply-patch+yaml", applied), obj, old),
	} {
		msgs := errs.ToAggregate()
		if msgs == nil || !strings.Contains(msgs.Error(), ".spec.experimental: field not declared in schema") || !strings.Contains(msgs.Error(), ".spec.lights[0].extra: field not declared in schema") {
			t.Errorf("apply (%s) of undeclared fields: %v, want each refused: field not declared in schema", what, msgs)
		}
	}
	if errs := v.Validate(sent("application/json", []byte(`{"apiVersion":"example.com/v1","kind":"Beacon","metadata":{"name":"b"},"spec":{"experimental":"x"}}`)), obj); len(errs) != 0 {
		t.Errorf("JSON create: %v, want none here (the decoder reports it per fieldValidation)", errs)
	}
	if errs := validator(false).Validate(sent("application/apply-patch+yaml", applied), obj); len(errs) != 0 {
		t.Errorf("apply to a markers kind: %v, want none", errs)
	}
}

// TestStrictPatchTooLargeToCheck: a strategic merge patch of a manifest
// kind whose body was too large to keep cannot be checked for undeclared
// fields: under Strict it is refused, saying why; under Warn it goes on.
func TestStrictPatchTooLargeToCheck(t *testing.T) {
	_, v := beaconValidator(t, true)
	obj := &beacon{TypeMeta: metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "Beacon"}, ObjectMeta: metav1.ObjectMeta{Name: "b", ResourceVersion: "1"}, Spec: beaconSpec{Mode: "on"}}
	old := obj.DeepCopyObject().(*beacon)
	for fv, refused := range map[string]bool{"Strict": true, "Warn": false} {
		ctx := request.WithRequestInfo(context.Background(), &request.RequestInfo{IsResourceRequest: true, Verb: "patch",
			APIGroup: "example.com", APIVersion: "v1", Resource: "beacons", Name: "b"})
		ctx = context.WithValue(ctx, recordKey{}, &Record{contentType: "application/strategic-merge-patch+json", overflow: true, fieldValidation: fv})
		errs := v.ValidateUpdate(ctx, obj, old)
		if got := len(errs) > 0 && strings.Contains(errs.ToAggregate().Error(), "cannot be checked for fields the kind's CRD manifest does not declare"); got != refused {
			t.Errorf("fieldValidation=%s: %v, want refused=%v", fv, errs, refused)
		}
	}
}
