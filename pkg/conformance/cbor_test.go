package conformance

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
)

// lossyCBORCronTab writes its spec in CBOR without the image (a type's own
// MarshalCBOR that forgets a field); its JSON is whole.
type lossyCBORCronTab struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              lossyCBORSpec `json:"spec,omitempty"`
}

type lossyCBORSpec struct {
	Replicas int32  `json:"replicas,omitempty"`
	Image    string `json:"image,omitempty"`
}

func (s lossyCBORSpec) MarshalCBOR() ([]byte, error) {
	return direct.Marshal(map[string]any{"replicas": s.Replicas})
}

func (in *lossyCBORCronTab) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// TestCBORRoundTrip: an object that CBOR carries whole passes, in each
// version of its kind from the internal type; one whose CBOR loses a field
// fails, naming it.
func TestCBORRoundTrip(t *testing.T) {
	fill := func(o any) {
		c := o.(*internalCronTab)
		c.Name, c.Namespace, c.Labels = "a", "default", map[string]string{"k": "v"}
		c.Spec = internalSpec{Replicas: 3, Image: "busybox"}
	}
	var errs collected
	internal := schema.GroupVersionKind{Group: "stable.example.com", Version: runtime.APIVersionInternal, Kind: "CronTab"}
	roundTripCBOR(&errs, cronTabScheme(t, true, false), fill, internal, 3)
	if len(errs) > 0 {
		t.Errorf("a kind CBOR carries whole: %q", errs)
	}

	scheme := runtime.NewScheme()
	gv := schema.GroupVersion{Group: "stable.example.com", Version: "v1"}
	scheme.AddKnownTypeWithName(gv.WithKind("CronTab"), &lossyCBORCronTab{})
	obj := &lossyCBORCronTab{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: lossyCBORSpec{Replicas: 3, Image: "busybox"}}
	diff, err := cborRoundTrip(scheme, obj, gv)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(diff, `Image`) || !strings.Contains(diff, `"busybox"`) {
		t.Errorf("a CBOR encoding that loses spec.image: diff %q", diff)
	}
}
