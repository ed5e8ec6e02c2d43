package conformance

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/randfill"
)

// The internal CronTab (from the storage version v1) and v2's, which has a
// schedule the internal type lacks.
type internalCronTab struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              internalSpec `json:"spec,omitempty"`
}

type internalSpec struct {
	Replicas int32  `json:"replicas,omitempty"`
	Image    string `json:"image,omitempty"`
}

type v2CronTab struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              v2Spec `json:"spec,omitempty"`
}

type v2Spec struct {
	Replicas int32  `json:"replicas,omitempty"`
	Image    string `json:"image,omitempty"`
	Schedule string `json:"schedule,omitempty"`
}

func (in *internalCronTab) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

func (in *v2CronTab) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

type collected []string

func (*collected) Helper() {}
func (c *collected) Errorf(format string, args ...any) {
	*c = append(*c, fmt.Sprintf(format, args...))
}

// cronTabScheme registers both types with conversions: dropping v2's
// schedule (as a stub filled in without it would), or keeping it in an
// annotation of the internal object (a conversion that loses nothing).
func cronTabScheme(t *testing.T, keepSchedule bool, dropImage bool) *runtime.Scheme {
	scheme := runtime.NewScheme()
	gv := schema.GroupVersion{Group: "stable.example.com", Version: "v2"}
	scheme.AddKnownTypeWithName(gv.WithKind("CronTab"), &v2CronTab{})
	scheme.AddKnownTypeWithName(schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal}.WithKind("CronTab"), &internalCronTab{})
	const annotation = "v2.stable.example.com/schedule"
	err := scheme.AddConversionFunc((*v2CronTab)(nil), (*internalCronTab)(nil), func(a, b any, _ conversion.Scope) error {
		in, out := a.(*v2CronTab), b.(*internalCronTab)
		out.ObjectMeta = in.ObjectMeta
		out.Spec = internalSpec{Replicas: in.Spec.Replicas, Image: in.Spec.Image}
		if keepSchedule && in.Spec.Schedule != "" {
			out.Annotations = map[string]string{annotation: in.Spec.Schedule}
			for k, v := range in.Annotations {
				out.Annotations[k] = v
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = scheme.AddConversionFunc((*internalCronTab)(nil), (*v2CronTab)(nil), func(a, b any, _ conversion.Scope) error {
		in, out := a.(*internalCronTab), b.(*v2CronTab)
		out.ObjectMeta = *in.ObjectMeta.DeepCopy()
		out.Spec = v2Spec{Replicas: in.Spec.Replicas, Image: in.Spec.Image}
		if dropImage {
			out.Spec.Image = ""
		}
		if s, ok := out.Annotations[annotation]; ok && keepSchedule {
			out.Spec.Schedule = s
			delete(out.Annotations, annotation)
			if len(out.Annotations) == 0 {
				out.Annotations = nil
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return scheme
}

// TestLostFieldsNamed: a field that only v2 has and that its conversion
// drops is named with its JSON path, as is a field of the internal type
// that converting through v2 drops; a conversion that keeps everything
// passes.
func TestLostFieldsNamed(t *testing.T) {
	filler := randfill.New().NilChance(0).NumElements(1, 1).RandSource(rand.NewSource(1)).Funcs(
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			m.Name = c.String(10)
			m.Annotations = nil
		},
		func(m *metav1.TypeMeta, c randfill.Continue) {},
	)
	gk := schema.GroupKind{Group: "stable.example.com", Kind: "CronTab"}
	for _, tc := range []struct {
		name               string
		keep, dropImage    bool
		want               []string
		wantNoneContaining string
	}{
		{name: "v2 only field dropped", want: []string{"v2 CronTab: spec.schedule is lost converting through the internal type (sent \""}},
		{name: "internal field dropped", keep: true, dropImage: true, want: []string{
			"v2 CronTab: spec.image is lost converting through the internal type",
			"v2 CronTab: spec.image of the internal type is lost converting through v2"}},
		{name: "kept in an annotation", keep: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got collected
			lost := checkLostFields(&got, cronTabScheme(t, tc.keep, tc.dropImage), filler.Fill, gk, []string{"v2"})
			if lost != (len(tc.want) > 0) {
				t.Errorf("lost = %v, want %v: %q", lost, len(tc.want) > 0, got)
			}
			for _, w := range tc.want {
				found := false
				for _, g := range got {
					found = found || strings.Contains(g, w)
				}
				if !found {
					t.Errorf("no report contains %q:\n%s", w, strings.Join(got, "\n"))
				}
			}
			if len(tc.want) == 0 && len(got) > 0 {
				t.Errorf("reported:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}
