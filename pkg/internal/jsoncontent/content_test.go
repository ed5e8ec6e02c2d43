package jsoncontent

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	timerv1 "github.com/apiserver-boot/apiserver-boot/test/fixtures/timer/v1"
)

// rawDuration is a duration with its own JSON encoding, as operators write
// them (the one the e2e tier serves in a generated project).
type rawDuration = timerv1.Duration

type timerSpec struct {
	Interval rawDuration `json:"interval"`
	Count    int64       `json:"count,omitempty"`
}
type timer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              timerSpec `json:"spec"`
}

// The internal types, as generate copies them: declarations without methods.
type internalDuration struct {
	*time.Duration
	Raw []byte
}
type internalTimerSpec struct {
	Interval internalDuration `json:"interval"`
	Count    int64            `json:"count,omitempty"`
}
type internalTimer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              internalTimerSpec `json:"spec"`
}

// widget is a kind of Kubernetes' and the standard library's types only.
type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Size int      `json:"size"`
		Tags []string `json:"tags"`
	} `json:"spec"`
}

// TestEncodesItself: which types take the way through encoding/json.
func TestEncodesItself(t *testing.T) {
	type withTime struct {
		T metav1.Time     `json:"t"`
		D metav1.Duration `json:"d"`
		S []string        `json:"s"`
	}
	type embedsInt struct {
		*time.Duration
	}
	type ignored struct {
		D rawDuration `json:"-"`
	}
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{&timer{}, true}, {&internalTimer{}, true}, {&widget{}, false}, {&withTime{}, false},
		{&embedsInt{}, true}, {&ignored{}, false}, {&map[string][]rawDuration{}, true},
	} {
		if got := encodesItself(reflect.TypeOf(tc.v)); got != tc.want {
			t.Errorf("%T: %v, want %v", tc.v, got, tc.want)
		}
	}
}
