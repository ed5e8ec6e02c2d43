package strategy

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

type widgetSpec struct {
	Size int `json:"size"`
}
type widgetStatus struct {
	Ready bool `json:"ready"`
}
type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              widgetSpec   `json:"spec"`
	Status            widgetStatus `json:"status"`
}

func (w *widget) DeepCopyObject() runtime.Object { c := *w; return &c }

// typedHooks overrides Validate with the internal type and PrepareForCreate with runtime.Object.
type typedHooks struct{}

func (*typedHooks) Validate(ctx context.Context, w *widget) field.ErrorList {
	if w.Spec.Size < 0 {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "size"), w.Spec.Size, "must be non-negative")}
	}
	return nil
}

func (*typedHooks) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	obj.(*widget).Labels = map[string]string{"prepared": "yes"}
}

type badHooks struct{}

func (badHooks) Validate(ctx context.Context, w *widget) error { return nil }

func newTestStrategy(t *testing.T, hooks any) *Strategy {
	t.Helper()
	s, err := New[*widget](runtime.NewScheme(), schemaGR, true, true, []string{"v1"}, hooks)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHooksWithTypedAndGenericSignatures(t *testing.T) {
	s := newTestStrategy(t, &typedHooks{})
	w := &widget{Spec: widgetSpec{Size: -1}, Status: widgetStatus{Ready: true}}
	s.PrepareForCreate(context.Background(), w)
	if w.Labels["prepared"] != "yes" {
		t.Errorf("runtime.Object PrepareForCreate hook not called")
	}
	if w.Status.Ready {
		t.Errorf("status not cleared on create")
	}
	if w.Generation != 1 {
		t.Errorf("generation = %d, want 1", w.Generation)
	}
	errs := s.Validate(context.Background(), w)
	if len(errs) != 1 || errs[0].Field != "spec.size" {
		t.Fatalf("typed Validate hook: got %v", errs)
	}
}

func TestDefaultsApplyWithoutHooks(t *testing.T) {
	s := newTestStrategy(t, nil)
	if errs := s.Validate(context.Background(), &widget{Spec: widgetSpec{Size: -1}}); len(errs) != 0 {
		t.Errorf("default Validate returned %v", errs)
	}
}

func TestBadHookSignatureIsAnError(t *testing.T) {
	_, err := New[*widget](runtime.NewScheme(), schemaGR, true, true, []string{"v1"}, badHooks{})
	if err == nil || !strings.Contains(err.Error(), "Validate") || !strings.Contains(err.Error(), "field.ErrorList") {
		t.Fatalf("want an error naming Validate and the wanted signature, got %v", err)
	}
	// The signature found is spelled whole, without the receiver.
	if want := "strategy.badHooks.Validate has signature func(context.Context, *strategy.widget) error; want func(context.Context, *strategy.widget) field.ErrorList"; !strings.Contains(err.Error(), want) {
		t.Errorf("want %q, got %v", want, err)
	}
}

func TestUpdateKeepsStatusAndCountsSpecChanges(t *testing.T) {
	s := newTestStrategy(t, nil)
	old := &widget{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: widgetSpec{Size: 1}, Status: widgetStatus{Ready: true}}

	sameSpec := &widget{ObjectMeta: metav1.ObjectMeta{Generation: 3, Labels: map[string]string{"a": "b"}}, Spec: widgetSpec{Size: 1}}
	s.PrepareForUpdate(context.Background(), sameSpec, old)
	if !sameSpec.Status.Ready {
		t.Errorf("update through the main resource changed status")
	}
	if sameSpec.Generation != 3 {
		t.Errorf("metadata-only change: generation = %d, want 3", sameSpec.Generation)
	}

	newSpec := &widget{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: widgetSpec{Size: 2}}
	s.PrepareForUpdate(context.Background(), newSpec, old)
	if newSpec.Generation != 4 {
		t.Errorf("spec change: generation = %d, want 4", newSpec.Generation)
	}
}

func TestStatusUpdateKeepsSpec(t *testing.T) {
	s := NewStatusStrategy(newTestStrategy(t, nil))
	old := &widget{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: widgetSpec{Size: 1}}
	upd := &widget{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: widgetSpec{Size: 9}, Status: widgetStatus{Ready: true}}
	s.PrepareForUpdate(context.Background(), upd, old)
	if upd.Spec.Size != 1 || !upd.Status.Ready || upd.Generation != 2 {
		t.Errorf("status update: got spec %v status %v generation %d", upd.Spec, upd.Status, upd.Generation)
	}
	if got := s.GetResetFields()["example.com/v1"]; got == nil || !got.Has(mustPath("spec")) {
		t.Errorf("status reset fields should hold spec: %v", s.GetResetFields())
	}
}
