package storage

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// plain is a kind without protobuf methods. Like every kind it embeds
// TypeMeta and ObjectMeta, whose protobuf methods then cancel out.
type plain struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	X                 string `json:"x"`
}

func (p *plain) DeepCopyObject() runtime.Object {
	c := *p
	p.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// TestCodec: protobuf where the type has it, JSON where not, and
// JSON written before still reads.
func TestCodec(t *testing.T) {
	internal := schema.GroupVersion{Group: "test.example.com", Version: runtime.APIVersionInternal}
	v1 := schema.GroupVersion{Group: "test.example.com", Version: "v1"}
	scheme := runtime.NewScheme()
	for _, gv := range []schema.GroupVersion{internal, v1} {
		// metav1.Status stands in for a kind with generated protobuf methods.
		scheme.AddKnownTypes(gv, &metav1.Status{}, &plain{})
	}
	codecs := serializer.NewCodecFactory(scheme)
	codec := Codec(codecs, v1)

	status := &metav1.Status{Status: "Failure", Message: "m", Code: 409}
	data, err := runtime.Encode(codec, status)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("k8s\x00")) {
		t.Fatalf("a kind with protobuf methods is stored as %q, want protobuf", data)
	}
	back, err := runtime.Decode(codec, data)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.(*metav1.Status); got.Message != "m" || got.Code != 409 {
		t.Errorf("protobuf round trip: %+v", got)
	}

	// Stored as JSON by an earlier release.
	old, _ := json.Marshal(map[string]any{"apiVersion": v1.String(), "kind": "Status", "status": "Failure", "message": "old", "code": 410})
	back, err = runtime.Decode(codec, old)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.(*metav1.Status); got.Message != "old" || got.Code != 410 {
		t.Errorf("JSON stored before: %+v", got)
	}

	p := &plain{X: "x"}
	data, err = runtime.Encode(codec, p)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil || fields["apiVersion"] != v1.String() || fields["x"] != "x" {
		t.Fatalf("a kind without protobuf is stored as %q, want JSON in %s", data, v1)
	}
	back, err = runtime.Decode(codec, data)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.(*plain); !reflect.DeepEqual(got.X, "x") {
		t.Errorf("JSON round trip: %+v", got)
	}
}
