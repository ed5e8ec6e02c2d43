package jsoncontent

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	internaltimer "github.com/apiserver-boot/apiserver-boot/test/fixtures/timer"
	timerv1 "github.com/apiserver-boot/apiserver-boot/test/fixtures/timer/v1"
)

// timer is a kind whose interval is a duration with its own JSON encoding,
// as operators write them (the one the e2e tier serves in a generated
// project); internalTimer is its internal type as generate copies it,
// without the duration's JSON methods (test/fixtures/timer).
type (
	rawDuration   = timerv1.Duration
	timer         = timerv1.Timer
	internalTimer = internaltimer.Timer
)

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
