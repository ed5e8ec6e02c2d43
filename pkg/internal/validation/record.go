package validation

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxSentBody bounds the body kept for validation (kube-apiserver's default
// request body limit).
const maxSentBody = 3 << 20

// Record is what one write request to an API group tells its validation:
// the body as the handler read it, the replicas a /scale write sets, a
// failed defaulting. RecordWrites creates it; each later step writes its
// own field, in the order the package documentation gives (step 1 to 5).
type Record struct {
	// contentType is the body's Content-Type (step 1, RecordWrites); buf
	// the body, written as the handler reads it (step 2), unless it is
	// over maxSentBody (overflow, then buf is nil).
	contentType string
	buf         []byte
	overflow    bool
	// fieldValidation is the request's fieldValidation parameter (step
	// 1): how fields a kind's manifest does not declare are reported.
	fieldValidation string
	// scale is what a /scale write sets: the object's fields at the spec
	// replicas path (step 3, Scaled).
	scale map[string]any
	// defaultErr is a failed DefaultAbsent (step 4, defaulted), which the
	// validation reports (step 5, validating).
	defaultErr error
	// step is the last step that read or wrote the Record.
	step step
}

// step is a step of a write that reads or writes its Record.
type step int

const (
	stepRecorded  step = iota // 1 and 2: created by RecordWrites, the body written as the handler reads it
	stepScaled                // 3: /scale's replicas written
	stepDefaulted             // 4: body and scale read by DefaultAbsent, its error written
	stepValidated             // 5: all read by the validation
)

var stepNames = [...]string{"the body", "the /scale replicas", "the defaulting", "the validation"}

func (s step) String() string { return stepNames[s] }

type recordKey struct{}

// RecordFrom is the Record of the write ctx is the request of, or nil (not
// a write to an API group through the API).
func RecordFrom(ctx context.Context) *Record {
	r, _ := ctx.Value(recordKey{}).(*Record)
	return r
}

// withRecord returns ctx carrying the Record of a body sent with
// contentType.
func withRecord(ctx context.Context, contentType string, body []byte) context.Context {
	return context.WithValue(ctx, recordKey{}, &Record{contentType: contentType, buf: body})
}

// RecordWrites creates the Record of each write to an API group (step 1),
// which keeps the body as the handler reads it (step 2), up to maxSentBody.
func RecordWrites(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
		default:
			h.ServeHTTP(w, req)
			return
		}
		if req.Body == nil || !strings.HasPrefix(req.URL.Path, "/apis/") {
			h.ServeHTTP(w, req)
			return
		}
		r := &Record{contentType: req.Header.Get("Content-Type"), fieldValidation: req.URL.Query().Get("fieldValidation")}
		if req.ContentLength > 0 && req.ContentLength <= maxSentBody {
			r.buf = make([]byte, 0, req.ContentLength)
		}
		req.Body = &recordingBody{ReadCloser: req.Body, r: r}
		h.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), recordKey{}, r)))
	})
}

// recordingBody writes what the handler reads into its Record (step 2).
type recordingBody struct {
	io.ReadCloser
	r *Record
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && !b.r.overflow {
		if len(b.r.buf)+n > maxSentBody {
			b.r.overflow, b.r.buf = true, nil
		} else {
			b.r.buf = append(b.r.buf, p[:n]...)
		}
	}
	return n, err
}

// Scaled records what a /scale write sets (step 3): fields holds the
// replicas at the kind's spec replicas path, which the schema validation
// sees as a CRD's does, even where the Go field drops a zero. It is an
// error once the defaulting has read the Record and the validation has not
// yet: that defaulting ran without the replicas.
func (r *Record) Scaled(fields map[string]any) error {
	if err := r.enter(stepScaled); err != nil {
		return err
	}
	r.scale = fields
	return nil
}

// defaulted records the end of DefaultAbsent (step 4): err, when it failed,
// for the validation to report. A nil Record (no write through the API)
// records nothing.
func (r *Record) defaulted(err error) {
	if r == nil {
		return
	}
	r.step = stepDefaulted // never out of order: only the validation comes after it, and any step may follow that
	if err != nil {
		r.defaultErr = err
	}
}

// validating records the start of the validation (step 5), never out of
// order, and returns the defaulting's failure as its errors. A nil Record
// (no write through the API) has none.
func (r *Record) validating() field.ErrorList {
	if r == nil {
		return nil
	}
	r.step = stepValidated
	if r.defaultErr != nil {
		return field.ErrorList{field.InternalError(nil, r.defaultErr)}
	}
	return nil
}

// enter moves r to step s: after a validation any step (a store retrying
// the update runs steps 3 to 5 again); otherwise no step before the last.
func (r *Record) enter(s step) error {
	if s < r.step && r.step != stepValidated {
		return fmt.Errorf("%s recorded after %s read the request: the order is the body, the /scale replicas, the defaulting, the validation", s, r.step)
	}
	r.step = s
	return nil
}
