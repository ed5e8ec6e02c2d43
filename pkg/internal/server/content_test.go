package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/jsoncontent"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/validation"
	internaltimer "github.com/apiserver-boot/apiserver-boot/test/fixtures/timer"
	timerv1 "github.com/apiserver-boot/apiserver-boot/test/fixtures/timer/v1"
)

// timer is a kind whose interval is a duration with its own JSON encoding,
// as operators write them (the one the e2e tier serves in a generated
// project); internalTimer is its internal type as generate copies it,
// without the duration's JSON methods (test/fixtures/timer).
type (
	rawDuration       = timerv1.Duration
	timer             = timerv1.Timer
	internalDuration  = internaltimer.Duration
	internalTimer     = internaltimer.Timer
	internalTimerSpec = internaltimer.TimerSpec
)

// timerCRDSchema is what controller-gen writes for timer with
// +kubebuilder:validation:Type=string, Schemaless and a Pattern on interval,
// a default on count, and an immutable spec.
const timerCRDSchema = `{"type":"object","properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","required":["interval"],"properties":{
      "interval":{"type":"string","pattern":"^(([0-9]+(s|m|h))+|Never)$"},
      "count":{"type":"integer","default":3}},
    "x-kubernetes-validations":[{"rule":"self == oldSelf","message":"spec is immutable"}]}}}`

var timerResource = &builders.Resource{Kind: "Timer", Plural: "timers", Singular: "timer", Namespaced: true, Versions: []string{"v1"}, StorageVersion: "v1",
	Schemas:          map[string]builders.Schema{"v1": {OpenAPIV3: timerCRDSchema}},
	PrintColumns:     []builders.Column{{Name: "Interval", Type: "string", JSONPath: ".spec.interval"}},
	SelectableFields: []string{".spec.interval"},
}

func timerScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(schema.GroupVersion{Group: "example.com", Version: "v1"}.WithKind("Timer"), &timer{})
	scheme.AddKnownTypeWithName(schema.GroupVersion{Group: "example.com", Version: runtime.APIVersionInternal}.WithKind("Timer"), &internalTimer{})
	if err := scheme.AddConversionFunc((*timer)(nil), (*internalTimer)(nil), func(a, b interface{}, _ conversion.Scope) error {
		in, out := a.(*timer), b.(*internalTimer)
		out.ObjectMeta, out.Spec.Count = in.ObjectMeta, in.Spec.Count
		out.Spec.Interval = internalDuration{Duration: in.Spec.Interval.Duration, Raw: in.Spec.Interval.Raw}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := scheme.AddConversionFunc((*internalTimer)(nil), (*timer)(nil), func(a, b interface{}, _ conversion.Scope) error {
		in, out := a.(*internalTimer), b.(*timer)
		out.ObjectMeta, out.Spec.Count = in.ObjectMeta, in.Spec.Count
		out.Spec.Interval = rawDuration{Duration: in.Spec.Interval.Duration, Raw: in.Spec.Interval.Raw}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// newTimer is a timer as decoded from JSON (its interval keeps its bytes),
// in its internal form.
func newTimer(t *testing.T, name, interval string) *internalTimer {
	t.Helper()
	var v timer
	if err := json.Unmarshal([]byte(`{"metadata":{"name":"`+name+`","namespace":"default","resourceVersion":"1"},"spec":{"interval":"`+interval+`"}}`), &v); err != nil {
		t.Fatal(err)
	}
	return &internalTimer{ObjectMeta: v.ObjectMeta, Spec: internalTimerSpec{Interval: internalDuration{Duration: v.Spec.Interval.Duration, Raw: v.Spec.Interval.Raw}}}
}

// TestCustomJSONTypesAsCRDs: validation, CEL rules, printer columns,
// selectable fields and schema defaults read a field whose type has its
// own JSON encoding as that JSON, as kube-apiserver reads the custom
// resource: before, the table panicked on the internal copy of the type
// (reflect.Value.Set using unaddressable value), a rule comparing the spec
// saw the []byte its ToUnstructured returns ("invalid data, expected
// string, got []uint8"), and its pattern was not checked.
func TestCustomJSONTypesAsCRDs(t *testing.T) {
	scheme := timerScheme(t)
	v, err := validation.New(scheme, "example.com", timerResource, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := request.WithNamespace(request.WithRequestInfo(context.Background(),
		&request.RequestInfo{APIGroup: "example.com", APIVersion: "v1", Resource: "timers"}), "default")

	// The pattern, on create.
	if errs := v.Validate(ctx, newTimer(t, "ok", "5s")); len(errs) != 0 {
		t.Errorf("5s: %v", errs.ToAggregate())
	}
	if got := text(v.Validate(ctx, newTimer(t, "negative", "-1s"))); !strings.Contains(got, `spec.interval: Invalid value: "-1s": spec.interval in body should match`) {
		t.Errorf("-1s: %q, want the pattern's error", got)
	}

	// A metadata-only update of an immutable spec.
	old := newTimer(t, "t", "5s")
	labelled := newTimer(t, "t", "5s")
	labelled.Labels = map[string]string{"a": "b"}
	if errs := v.ValidateUpdate(ctx, labelled, old); len(errs) != 0 {
		t.Errorf("a metadata-only update: %v", errs.ToAggregate())
	}
	if got := text(v.ValidateUpdate(ctx, newTimer(t, "t", "6s"), old)); !strings.Contains(got, "spec is immutable") {
		t.Errorf("a change of interval: %q, want spec is immutable", got)
	}

	// The printer column.
	content := jsoncontent.ForKind(scheme, "example.com", timerResource)
	tc, err := newTableConvertor(timerResource, content)
	if err != nil {
		t.Fatal(err)
	}
	noPanic(t, "the table", func() {
		table, err := tc.ConvertToTable(ctx, newTimer(t, "t", "90s"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := table.Rows[0].Cells[1]; got != "90s" {
			t.Errorf("the Interval column shows %#v, want \"90s\" (the JSON)", got)
		}
	})

	// The selectable field.
	noPanic(t, "the selectable fields", func() {
		_, fs, err := attrFunc(timerResource, content)(newTimer(t, "t", "1m30s"))
		if err != nil {
			t.Fatal(err)
		}
		if !fields.SelectorFromSet(fields.Set{"spec.interval": "1m30s"}).Matches(fs) {
			t.Errorf("selectable fields %v, want spec.interval=1m30s", fs)
		}
	})

	// /scale's way: the content read, a field set, the object written back.
	noPanic(t, "a write through the content", func() {
		m, err := content.ToMap(newTimer(t, "t", "1m30s"))
		if err != nil {
			t.Fatal(err)
		}
		m["spec"].(map[string]any)["count"] = int64(2)
		var back internalTimer
		if err := content.FromMap(m, &back); err != nil {
			t.Fatal(err)
		}
		if back.Name != "t" || back.Spec.Count != 2 || string(back.Spec.Interval.Raw) != `"1m30s"` || *back.Spec.Interval.Duration != 90*time.Second {
			t.Errorf("written back: %+v, want the interval as read and count 2", back)
		}
	})

	// The schema's defaults keep the interval as it was read.
	var versioned timer
	if err := json.Unmarshal([]byte(`{"spec":{"interval":"1m30s"}}`), &versioned); err != nil {
		t.Fatal(err)
	}
	builders.ApplySchemaDefaults(&versioned)
	if b, _ := json.Marshal(versioned.Spec); string(b) != `{"interval":"1m30s","count":3}` {
		t.Errorf("defaulted spec %s, want the interval as read and count 3", b)
	}
}

func text(errs field.ErrorList) string {
	if agg := errs.ToAggregate(); agg != nil {
		return agg.Error()
	}
	return ""
}

func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: panic: %v", what, r)
		}
	}()
	f()
}

// TestConversionPanicIsAnError: apimachinery's converter panics on the
// internal copy of a type with its own encoding when nothing says the kind
// encodes itself; the table, field selector and validation get an error,
// and the process (a watch cache calls the attribute function) lives on.
func TestConversionPanicIsAnError(t *testing.T) {
	obj := newTimer(t, "t", "5s")
	var kc jsoncontent.Kind // no storage version to go through: the converter reads the internal type
	if _, err := kc.ToMap(obj); err == nil || !strings.Contains(err.Error(), "reading the content of *timer.Timer") {
		t.Errorf("ToMap: want the converter's panic as an error, got %v", err)
	}
	_, _, err := attrFunc(timerResource, kc)(obj)
	if err == nil {
		t.Error("the field selector's attribute function read the object without error")
	}
}
