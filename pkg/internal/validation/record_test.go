package validation

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestRecordOrder: each step of a write comes after those before it
// (doc.go's order); /scale's replicas recorded once the defaulting has read
// the Record are an error, which a store retrying the update after a
// validation does not meet.
func TestRecordOrder(t *testing.T) {
	replicas := map[string]any{"spec": map[string]any{"replicas": int64(0)}}
	r := RecordFrom(withRecord(context.Background(), "application/json", []byte(`{}`)))
	if err := r.Scaled(replicas); err != nil {
		t.Fatalf("the replicas after the body: %v", err)
	}
	r.defaulted(nil)
	err := r.Scaled(replicas)
	if err == nil || !strings.Contains(err.Error(), "the /scale replicas recorded after the defaulting") {
		t.Fatalf("the replicas after the defaulting: %v, want an error naming both steps", err)
	}
	if errs := r.validating(); errs != nil {
		t.Fatalf("the validation after the defaulting: %v", errs)
	}
	// A retry of the update: the steps again, in their order.
	if err := r.Scaled(replicas); err != nil {
		t.Fatalf("the replicas after a validation (a retry): %v", err)
	}
	failed := errors.New("cannot write the defaults")
	r.defaulted(failed)
	if errs := r.validating(); len(errs) != 1 || !strings.Contains(errs[0].Error(), failed.Error()) {
		t.Errorf("the validation after a failed defaulting: %v, want its error", errs)
	}

	// The Validator's own steps: DefaultAbsent is the defaulting, Validate
	// the validation.
	v := shelfValidation(t)
	ctx := sentRequest("update", "scale", "s", "application/json", []byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","spec":{"replicas":2}}`))
	old := decodeShelf(t, []byte(storedShelf))
	v.DefaultAbsent(ctx, old.DeepCopyObject(), old)
	if err := RecordFrom(ctx).Scaled(replicas); err == nil {
		t.Error("the replicas after DefaultAbsent: no error")
	}
	v.ValidateUpdate(ctx, old.DeepCopyObject(), old)
	if err := RecordFrom(ctx).Scaled(replicas); err != nil {
		t.Errorf("the replicas after ValidateUpdate (a retry): %v", err)
	}

	// No Record (a write within the server): nothing recorded, nothing read.
	var none *Record
	none.defaulted(failed)
	if errs := none.validating(); errs != nil {
		t.Errorf("no Record: %v", errs)
	}
}
