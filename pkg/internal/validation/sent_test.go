package validation

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cbordirect "k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/request"
	"sigs.k8s.io/yaml"
)

// shelf is shaped like the kubebuilder types of the issue: zero values on
// omitempty fields that the schema constrains.
type shelfSpec struct {
	Replicas int32         `json:"replicas,omitempty"` // +kubebuilder:validation:Minimum=1
	TLS      shelfTLS      `json:"tls,omitempty"`      // +optional, +kubebuilder:validation:MinProperties=1
	Selector shelfSelector `json:"selector,omitempty"` // +required
}
type shelfTLS struct {
	Mode string `json:"mode,omitempty"`
}
type shelfSelector struct {
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}
type shelfStatus struct {
	Ready    int32  `json:"ready,omitempty"`    // +kubebuilder:validation:Minimum=1
	Phase    string `json:"phase,omitempty"`    // +kubebuilder:default=Pending
	Interval int32  `json:"interval,omitempty"` // +kubebuilder:default=5, +kubebuilder:validation:Minimum=1
}
type shelf struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              shelfSpec   `json:"spec,omitzero"` // +kubebuilder:validation:MinProperties=1
	Status            shelfStatus `json:"status,omitempty"`
}

func (s *shelf) DeepCopyObject() runtime.Object {
	c := *s
	c.ObjectMeta = *s.ObjectMeta.DeepCopy()
	if s.Spec.Selector.MatchLabels != nil {
		c.Spec.Selector.MatchLabels = map[string]string{}
		for k, v := range s.Spec.Selector.MatchLabels {
			c.Spec.Selector.MatchLabels[k] = v
		}
	}
	return &c
}

const shelfSchema = `{"type":"object","required":["spec"],"properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","minProperties":1,"required":["selector"],"properties":{
    "replicas":{"type":"integer","format":"int32","minimum":1},
    "tls":{"type":"object","minProperties":1,"properties":{"mode":{"type":"string"}}},
    "selector":{"type":"object","properties":{"matchLabels":{"type":"object","additionalProperties":{"type":"string"}}}}}},
  "status":{"type":"object","properties":{"ready":{"type":"integer","format":"int32","minimum":1},"phase":{"type":"string","default":"Pending"},
    "interval":{"type":"integer","format":"int32","default":5,"minimum":1}}}}}`

func shelfValidation(t testing.TB) *Validator {
	t.Helper()
	scheme := runtime.NewScheme()
	gk := schema.GroupKind{Group: "example.com", Kind: "Shelf"}
	scheme.AddKnownTypeWithName(gk.WithVersion("v1"), &shelf{})
	scheme.AddKnownTypeWithName(gk.WithVersion(runtime.APIVersionInternal), &shelf{})
	v, err := New(scheme, "example.com", &builders.Resource{Kind: "Shelf", Plural: "shelves", Singular: "shelf", Namespaced: true,
		StatusSubresource: true, Scale: &builders.Scale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.ready"},
		Versions: []string{"v1"}, StorageVersion: "v1", Schemas: map[string]builders.Schema{"v1": {OpenAPIV3: shelfSchema}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// sentRequest is the context of a write of a shelf through the API.
func sentRequest(verb, subresource, name, contentType string, body []byte) context.Context {
	ctx := request.WithRequestInfo(context.Background(), &request.RequestInfo{IsResourceRequest: true, Verb: verb,
		APIGroup: "example.com", APIVersion: "v1", Resource: "shelves", Subresource: subresource, Name: name})
	return withRecord(request.WithNamespace(ctx, "default"), contentType, body)
}

// decodeShelf decodes a shelf as the handler does, from JSON, with the
// schema's defaults (a kind with any default goes through its unstructured
// form on decode, where an empty map is dropped).
func decodeShelf(t *testing.T, data []byte) *shelf {
	t.Helper()
	s := &shelf{}
	if err := json.Unmarshal(data, s); err != nil {
		t.Fatal(err)
	}
	builders.ApplySchemaDefaults(s)
	return s
}

const storedShelf = `{"apiVersion":"example.com/v1","kind":"Shelf","metadata":{"name":"s","namespace":"default","resourceVersion":"1"},
  "spec":{"replicas":2,"selector":{"matchLabels":{"a":"b"}}},"status":{"ready":2}}`

// TestValidatesWhatWasSent: each shape of issue 24 gets the decision and
// the message a CRD gets, for every kind of write: the schema sees the zero
// values the client sent on omitempty fields, which the Go object drops.
func TestValidatesWhatWasSent(t *testing.T) {
	v := shelfValidation(t)
	shapes := []struct {
		name string
		spec string // the spec as sent
		// merge is a merge patch of the stored shelf giving spec; jsonPatch
		// a JSON patch doing the same.
		merge, jsonPatch string
		want             []string // errors, "" for accepted
		not              string   // an error a CRD does not give
		// applied: the errors of the apply to the stored shelf, when
		// they differ from want.
		applied []string
	}{
		{"minimum on a zero int32", `{"replicas":0,"selector":{"matchLabels":{"a":"b"}}}`,
			`{"spec":{"replicas":0}}`, `[{"op":"replace","path":"/spec/replicas","value":0}]`,
			[]string{"spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"}, "", nil},
		{"minProperties on an empty optional struct", `{"replicas":2,"tls":{},"selector":{"matchLabels":{"a":"b"}}}`,
			`{"spec":{"tls":{}}}`, `[{"op":"add","path":"/spec/tls","value":{}}]`,
			[]string{"spec.tls: Invalid value: 0: spec.tls in body should have at least 1 properties"}, "", nil},
		{"a required struct holding an empty map", `{"replicas":2,"selector":{"matchLabels":{}}}`,
			`{"spec":{"selector":{"matchLabels":{"a":null}}}}`, `[{"op":"replace","path":"/spec/selector/matchLabels","value":{}}]`,
			nil, "Required value", nil},
		{"minProperties on an empty spec", `{}`,
			`{"spec":{"replicas":null,"selector":null}}`, `[{"op":"replace","path":"/spec","value":{}}]`,
			[]string{"spec: Invalid value: 0: spec in body should have at least 1 properties", "spec.selector: Required value"}, "spec: Required value",
			// Applied by the manager of all the stored spec held:
			// server-side apply removes it all and leaves null.
			[]string{`spec: Invalid value: "null": spec in body must be of type object: "null"`}},
	}
	check := func(t *testing.T, errs field.ErrorList, want []string, not string) {
		t.Helper()
		var got []string
		for _, e := range errs {
			got = append(got, e.Error())
		}
		text := strings.Join(got, "\n")
		if len(want) == 0 && len(errs) > 0 {
			t.Errorf("want accepted, as by the CRD; got\n%s", text)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("want %q, as from the CRD; got\n%s", w, text)
			}
		}
		if not != "" && strings.Contains(text, not) {
			t.Errorf("a CRD does not answer %q; got\n%s", not, text)
		}
	}
	old := decodeShelf(t, []byte(storedShelf))
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			object := `{"apiVersion":"example.com/v1","kind":"Shelf","metadata":{"name":"s","namespace":"default"},"spec":` + s.spec + `}`
			t.Run("create", func(t *testing.T) {
				ctx := sentRequest("create", "", "", "application/json", []byte(object))
				check(t, v.Validate(ctx, decodeShelf(t, []byte(object))), s.want, s.not)
			})
			t.Run("create from YAML", func(t *testing.T) {
				y, _ := yaml.JSONToYAML([]byte(object))
				ctx := sentRequest("create", "", "", "application/yaml", y)
				check(t, v.Validate(ctx, decodeShelf(t, []byte(object))), s.want, s.not)
			})
			t.Run("create from CBOR", func(t *testing.T) {
				var m map[string]any
				if err := json.Unmarshal([]byte(object), &m); err != nil {
					t.Fatal(err)
				}
				c, err := cbordirect.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				ctx := sentRequest("create", "", "", "application/cbor", c)
				check(t, v.Validate(ctx, decodeShelf(t, []byte(object))), s.want, s.not)
			})
			t.Run("update", func(t *testing.T) {
				object := strings.Replace(object, `"namespace":"default"`, `"namespace":"default","resourceVersion":"1"`, 1)
				ctx := sentRequest("update", "", "s", "application/json", []byte(object))
				check(t, v.ValidateUpdate(ctx, decodeShelf(t, []byte(object)), old), s.want, s.not)
			})
			t.Run("merge patch", func(t *testing.T) {
				patched, err := jsonpatch.MergePatch([]byte(storedShelf), []byte(s.merge))
				if err != nil {
					t.Fatal(err)
				}
				ctx := sentRequest("patch", "", "s", "application/merge-patch+json", []byte(s.merge))
				check(t, v.ValidateUpdate(ctx, decodeShelf(t, patched), old), s.want, s.not)
			})
			t.Run("JSON patch", func(t *testing.T) {
				p, err := jsonpatch.DecodePatch([]byte(s.jsonPatch))
				if err != nil {
					t.Fatal(err)
				}
				patched, err := p.Apply([]byte(storedShelf))
				if err != nil {
					t.Fatal(err)
				}
				ctx := sentRequest("patch", "", "s", "application/json-patch+json", []byte(s.jsonPatch))
				check(t, v.ValidateUpdate(ctx, decodeShelf(t, patched), old), s.want, s.not)
			})
			t.Run("apply", func(t *testing.T) {
				// The applied configuration owns the whole spec: the
				// result's spec is the configuration's.
				config, _ := yaml.JSONToYAML([]byte(object))
				applied := decodeShelf(t, []byte(storedShelf))
				applied.Spec = decodeShelf(t, []byte(object)).Spec
				ctx := sentRequest("patch", "", "s", "application/apply-patch+yaml", config)
				want := s.want
				if s.applied != nil {
					want = s.applied
				}
				check(t, v.ValidateUpdate(ctx, applied, old), want, s.not)
				// Applied to a missing object: a create.
				applied.ResourceVersion, applied.Status = "", shelfStatus{}
				check(t, v.Validate(ctx, applied), s.want, s.not)
			})
		})
	}

	t.Run("status", func(t *testing.T) {
		body := `{"apiVersion":"example.com/v1","kind":"Shelf","metadata":{"name":"s","namespace":"default","resourceVersion":"1"},"spec":{"replicas":2,"selector":{"matchLabels":{"a":"b"}}},"status":{"ready":0}}`
		// The status schema is checked on its own, as kube-apiserver's
		// status strategy does: hence "ready in body".
		want := []string{"status.ready: Invalid value: 0: ready in body should be greater than or equal to 1"}
		ctx := sentRequest("update", "status", "s", "application/json", []byte(body))
		check(t, v.ValidateStatusUpdate(ctx, decodeShelf(t, []byte(body)), old), want, "")
		patch := `{"status":{"ready":0}}`
		patched, _ := jsonpatch.MergePatch([]byte(storedShelf), []byte(patch))
		ctx = sentRequest("patch", "status", "s", "application/merge-patch+json", []byte(patch))
		// Its status decodes to the Go zero value, which decoding takes
		// for absent: the defaulting of what was sent comes first (step 4).
		obj := decodeShelf(t, patched)
		v.DefaultAbsentStatus(ctx, obj, old)
		check(t, v.ValidateStatusUpdate(ctx, obj, old), want, "")
		// Through /status, the spec sent is not the object's: not validated.
		bad := strings.Replace(body, `"replicas":2`, `"replicas":0`, 1)
		ctx = sentRequest("update", "status", "s", "application/json", []byte(bad))
		check(t, v.ValidateStatusUpdate(ctx, decodeShelf(t, []byte(bad)), old), want, "spec.replicas")
		// Through the main resource, the status sent is not the object's.
		ctx = sentRequest("update", "", "s", "application/json", []byte(body))
		check(t, v.ValidateUpdate(ctx, decodeShelf(t, []byte(body)), old), nil, "")
	})

	t.Run("a zero the decoding defaulted", func(t *testing.T) {
		// interval 0 is dropped by the Go field and defaulted to 5 on
		// decode; the CRD keeps the 0 and refuses it.
		body := `{"apiVersion":"example.com/v1","kind":"Shelf","metadata":{"name":"s","namespace":"default","resourceVersion":"1"},"status":{"ready":2,"interval":0}}`
		obj := decodeShelf(t, []byte(body))
		if obj.Status.Interval != 5 {
			t.Fatalf("decoded interval %d, want the default 5", obj.Status.Interval)
		}
		ctx := sentRequest("update", "status", "s", "application/json", []byte(body))
		check(t, v.ValidateStatusUpdate(ctx, obj, old), []string{"status.interval: Invalid value: 0: interval in body should be greater than or equal to 1"}, "")
		// Left out, it is defaulted alike on both.
		body = strings.Replace(body, `,"interval":0`, "", 1)
		ctx = sentRequest("update", "status", "s", "application/json", []byte(body))
		check(t, v.ValidateStatusUpdate(ctx, decodeShelf(t, []byte(body)), old), nil, "")
	})

	t.Run("scale", func(t *testing.T) {
		ctx := sentRequest("update", "scale", "s", "application/json", []byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","spec":{"replicas":0}}`))
		RecordFrom(ctx).scale = map[string]any{"spec": map[string]any{"replicas": int64(0)}}
		scaled := decodeShelf(t, []byte(storedShelf))
		scaled.Spec.Replicas = 0
		check(t, v.ValidateUpdate(ctx, scaled, old), []string{"spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"}, "")
	})

	t.Run("not this request's object", func(t *testing.T) {
		// A write a hook makes within another request, or a body the
		// server cannot read: the Go object's encoding, as before.
		object := `{"apiVersion":"example.com/v1","kind":"Shelf","metadata":{"name":"s","namespace":"default"},"spec":{"replicas":0,"selector":{"matchLabels":{"a":"b"}}}}`
		for name, ctx := range map[string]context.Context{
			"other resource":     withRecord(request.WithRequestInfo(context.Background(), &request.RequestInfo{APIGroup: "example.com", APIVersion: "v1", Resource: "others"}), "application/json", []byte(object)),
			"custom subresource": sentRequest("create", "publish", "s", "application/json", []byte(object)),
			"other name":         sentRequest("update", "", "t", "application/json", []byte(object)),
			"protobuf":           sentRequest("create", "", "", "application/vnd.kubernetes.protobuf", []byte(object)),
		} {
			if errs := v.Validate(ctx, decodeShelf(t, []byte(object))); len(errs) != 0 {
				t.Errorf("%s: %v", name, errs.ToAggregate())
			}
		}
	})

	t.Run("a hook's change stays", func(t *testing.T) {
		// The client sent replicas 0 and tls {}; a hook set both.
		object := `{"apiVersion":"example.com/v1","kind":"Shelf","metadata":{"name":"s","namespace":"default"},"spec":{"replicas":0,"tls":{},"selector":{"matchLabels":{"a":"b"}}}}`
		obj := decodeShelf(t, []byte(object))
		obj.Spec.Replicas, obj.Spec.TLS.Mode = 3, "Terminate"
		check(t, v.Validate(sentRequest("create", "", "", "application/json", []byte(object)), obj), nil, "")
	})
}

// TestSentBodiesKept: the body of a write is kept as the handler reads it,
// up to maxSentBody.
func TestSentBodiesKept(t *testing.T) {
	var got *Record
	h := RecordWrites(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, err := io.ReadAll(req.Body); err != nil {
			t.Fatal(err)
		}
		got = RecordFrom(req.Context())
	}))
	body := `{"spec":{"replicas":0}}`
	req := httptest.NewRequest(http.MethodPost, "/apis/example.com/v1/namespaces/default/shelves", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got == nil || string(got.buf) != body || got.contentType != "application/json" {
		t.Fatalf("kept %+v", got)
	}
	got = nil
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/apis/example.com/v1/namespaces/default/shelves", nil))
	if got != nil {
		t.Errorf("a read keeps nothing: %+v", got)
	}
	big := strings.Repeat(" ", maxSentBody) + body
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPut, "/apis/example.com/v1/namespaces/default/shelves/s", strings.NewReader(big)))
	if got == nil || !got.overflow || got.buf != nil {
		t.Errorf("a body over the limit is not kept: overflow %v, %d bytes", got.overflow, len(got.buf))
	}
}

// BenchmarkSchemaValidationCreate is the schema validation of one create:
// "encoded" from the Go object only (before), "sent" with the body kept and
// its dropped values put back (after); "absent-fields" the same for a kind
// with fields the encoding writes when left out (crate: every body is read,
// and a default is put into the Go object, DefaultAbsent). make bench
// (item 9) reports the ratios.
func BenchmarkSchemaValidationCreate(b *testing.B) {
	v := shelfValidation(b)
	body := []byte(`{"apiVersion":"example.com/v1","kind":"Shelf","metadata":{"name":"s","namespace":"default","labels":{"app":"shelf","tier":"backend"}},
	  "spec":{"replicas":3,"tls":{"mode":"Terminate"},"selector":{"matchLabels":{"app":"shelf","tier":"backend"}}}}`)
	obj := &shelf{}
	if err := json.Unmarshal(body, obj); err != nil {
		b.Fatal(err)
	}
	plain := request.WithNamespace(request.WithRequestInfo(context.Background(), &request.RequestInfo{APIGroup: "example.com", APIVersion: "v1", Resource: "shelves", Verb: "create"}), "default")
	b.Run("encoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if errs := v.Validate(plain, obj); len(errs) != 0 {
				b.Fatal(errs)
			}
		}
	})
	zero := bytes.Replace(body, []byte(`"mode":"Terminate"`), []byte(`"mode":""`), 1)
	for name, body := range map[string][]byte{"sent": body, "sent with a zero value": zero} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := &Record{contentType: "application/json", buf: make([]byte, 0, len(body))}
				if _, err := io.Copy(io.Discard, &recordingBody{ReadCloser: io.NopCloser(bytes.NewReader(body)), r: s}); err != nil {
					b.Fatal(err)
				}
				if errs := v.Validate(context.WithValue(plain, recordKey{}, s), obj); len(errs) != 0 {
					b.Fatal(errs)
				}
			}
		})
	}

	cv := crateValidation(b)
	cbody := []byte(`{"apiVersion":"example.com/v1","kind":"Crate","metadata":{"name":"c","namespace":"default","labels":{"app":"crate","tier":"backend"}},
	  "spec":{"name":"n","ref":{"name":"r"},"items":[{"size":2}],"ports":[{"name":"a","port":1},{"name":"b","port":2}]}}`)
	cobj := &crate{}
	if err := json.Unmarshal(cbody, cobj); err != nil {
		b.Fatal(err)
	}
	cplain := request.WithNamespace(request.WithRequestInfo(context.Background(), &request.RequestInfo{APIGroup: "example.com", APIVersion: "v1", Resource: "crates", Verb: "create"}), "default")
	b.Run("absent-fields encoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			cobj.Spec.Count = 0
			cv.DefaultAbsent(cplain, cobj, nil)
			if errs := cv.Validate(cplain, cobj); len(errs) != 0 {
				b.Fatal(errs)
			}
		}
	})
	b.Run("absent-fields sent", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s := &Record{contentType: "application/json", buf: make([]byte, 0, len(cbody))}
			if _, err := io.Copy(io.Discard, &recordingBody{ReadCloser: io.NopCloser(bytes.NewReader(cbody)), r: s}); err != nil {
				b.Fatal(err)
			}
			ctx := context.WithValue(cplain, recordKey{}, s)
			cobj.Spec.Count = 0
			cv.DefaultAbsent(ctx, cobj, nil)
			if cobj.Spec.Count != 3 {
				b.Fatalf("count %d, want the default", cobj.Spec.Count)
			}
			if errs := cv.Validate(ctx, cobj); len(errs) != 0 {
				b.Fatal(errs)
			}
		}
	})
}

func TestMayHoldZero(t *testing.T) {
	for doc, want := range map[string]bool{
		`{"a":1,"b":"x","c":[1,2],"d":{"e":true},"f":null,"g":-12.5e-3}`: false,
		`{"s":"with 0 and false and {} inside \" \\"}`:                   false,
		`{"a":0}`: true, `{"a":-0.0}`: true, `{"a":0e5}`: true, `{"a":10}`: false, `{"a":1.05}`: false,
		`{"a":""}`: true, `{"a":false}`: true, `{"a":{ }}`: true, `{"a":[]}`: true, `{"a":{"b":[ ]}}`: true,
	} {
		if got := mayHoldZero([]byte(doc)); got != want {
			t.Errorf("%s: %v, want %v", doc, got, want)
		}
	}
}

// TestRestoreSentApplyLists: an applied configuration's zero values inside
// lists are put back as a CRD's apply keeps them: an atomic list is the
// result's as applied, a map list's items are found by their keys (a key
// the encoding dropped matches a zero sent); a set is not walked.
func TestRestoreSentApplyLists(t *testing.T) {
	var props apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{
	  "rules":{"type":"array","items":{"type":"object","properties":{"maxAge":{"type":"integer","default":5}}}},
	  "listeners":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
	    "items":{"type":"object","properties":{"name":{"type":"string"},"port":{"type":"integer"}}}},
	  "tags":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"object","properties":{"n":{"type":"integer"}}}}}}}}`), &props); err != nil {
		t.Fatal(err)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&props, &internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatal(err)
	}
	parse := func(js string) map[string]any {
		var m map[string]any
		if err := utiljson.Unmarshal([]byte(js), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	all := func(string) bool { return true }
	for _, c := range []struct{ name, encoded, applied, want string }{
		{"atomic list: a zero dropped and defaulted", `{"spec":{"rules":[{"maxAge":5}]}}`, `{"spec":{"rules":[{"maxAge":0}]}}`, `{"spec":{"rules":[{"maxAge":0}]}}`},
		{"map list: a zero port, its item by key", `{"spec":{"listeners":[{"name":"b","port":1},{"name":"a"}]}}`, `{"spec":{"listeners":[{"name":"a","port":0}]}}`, `{"spec":{"listeners":[{"name":"b","port":1},{"name":"a","port":0}]}}`},
		{"map list: an empty key", `{"spec":{"listeners":[{"name":"b","port":1},{"port":2}]}}`, `{"spec":{"listeners":[{"name":"","port":2}]}}`, `{"spec":{"listeners":[{"name":"b","port":1},{"name":"","port":2}]}}`},
		{"set: not walked", `{"spec":{"tags":[{}]}}`, `{"spec":{"tags":[{"n":0}]}}`, `{"spec":{"tags":[{}]}}`},
	} {
		u := parse(c.encoded)
		restoreSent(u, parse(c.applied), sentApply, false, nil, s, nil, all)
		if got := mustJSON(t, u); got != mustJSON(t, parse(c.want)) {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// crate has fields the encoding writes when left out (no omitempty), a
// required nullable pointer, and lists a strategic merge patch replaces
// (no patch strategy) or merges by key.
type crateSpec struct {
	Count int32       `json:"count"` // +kubebuilder:default=3
	Name  string      `json:"name"`  // +required, MinLength=1
	Ref   *crateRef   `json:"ref,omitempty"`
	Items []crateItem `json:"items,omitempty"`
	Ports []cratePort `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
}
type crateRef struct {
	Name string `json:"name,omitempty"`
}
type crateItem struct {
	Size int32 `json:"size,omitempty"` // Minimum=1
}
type cratePort struct {
	Name string `json:"name"`
	Port int32  `json:"port,omitempty"` // Minimum=1
}
type crate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              crateSpec `json:"spec"`
}

func (c *crate) DeepCopyObject() runtime.Object {
	out := &crate{}
	b, _ := json.Marshal(c)
	json.Unmarshal(b, out)
	return out
}

const crateSchema = `{"type":"object","properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","required":["name","ref"],"properties":{
    "count":{"type":"integer","format":"int32","default":3},
    "name":{"type":"string","minLength":1},
    "ref":{"type":"object","nullable":true,"properties":{"name":{"type":"string"}}},
    "items":{"type":"array","items":{"type":"object","properties":{"size":{"type":"integer","format":"int32","minimum":1}}}},
    "ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
      "items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"port":{"type":"integer","format":"int32","minimum":1}}}}}}}}`

func crateValidation(t testing.TB) *Validator {
	t.Helper()
	scheme := runtime.NewScheme()
	gk := schema.GroupKind{Group: "example.com", Kind: "Crate"}
	scheme.AddKnownTypeWithName(gk.WithVersion("v1"), &crate{})
	scheme.AddKnownTypeWithName(gk.WithVersion(runtime.APIVersionInternal), &crate{})
	v, err := New(scheme, "example.com", &builders.Resource{Kind: "Crate", Plural: "crates", Singular: "crate", Namespaced: true,
		Versions: []string{"v1"}, StorageVersion: "v1", Schemas: map[string]builders.Schema{"v1": {OpenAPIV3: crateSchema}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func crateRequest(verb, name, contentType string, body []byte) context.Context {
	ctx := request.WithRequestInfo(context.Background(), &request.RequestInfo{IsResourceRequest: true, Verb: verb,
		APIGroup: "example.com", APIVersion: "v1", Resource: "crates", Name: name})
	return withRecord(request.WithNamespace(ctx, "default"), contentType, body)
}

func decodeCrate(t *testing.T, data []byte) *crate {
	t.Helper()
	c := &crate{}
	if err := json.Unmarshal(data, c); err != nil {
		t.Fatal(err)
	}
	builders.ApplySchemaDefaults(c)
	return c
}

const storedCrate = `{"apiVersion":"example.com/v1","kind":"Crate","metadata":{"name":"c","namespace":"default","resourceVersion":"1"},
  "spec":{"count":7,"name":"n","ref":{"name":"r"},"items":[{"size":2}],"ports":[{"name":"a","port":1},{"name":"b","port":2}]}}`

func fieldErrors(errs field.ErrorList) string {
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	return strings.Join(got, "\n")
}

// TestAbsentFields: a field without omitempty that the client left out is
// absent to validation ("Required value") and gets its schema default in
// the Go object (DefaultAbsent), for every kind of write, as on a CRD; a
// zero sent stays.
func TestAbsentFields(t *testing.T) {
	v := crateValidation(t)
	old := decodeCrate(t, []byte(storedCrate))
	object := func(spec string) string {
		return `{"apiVersion":"example.com/v1","kind":"Crate","metadata":{"name":"c","namespace":"default","resourceVersion":"1"},"spec":` + spec + `}`
	}
	type write struct {
		name        string
		ctx         context.Context
		obj         *crate
		old         runtime.Object
		contentType string
	}
	writes := func(spec, merge, jsonPatch, smp string) []write {
		body := object(spec)
		patched, err := jsonpatch.MergePatch([]byte(storedCrate), []byte(merge))
		if err != nil {
			t.Fatal(err)
		}
		p, err := jsonpatch.DecodePatch([]byte(jsonPatch))
		if err != nil {
			t.Fatal(err)
		}
		jpatched, err := p.Apply([]byte(storedCrate))
		if err != nil {
			t.Fatal(err)
		}
		config, _ := yaml.JSONToYAML([]byte(body))
		smpPatched, _ := jsonpatch.MergePatch([]byte(storedCrate), []byte(smp))
		return []write{
			{"create", crateRequest("create", "", "application/json", []byte(body)), decodeCrate(t, []byte(body)), nil, ""},
			{"update", crateRequest("update", "c", "application/json", []byte(body)), decodeCrate(t, []byte(body)), old, ""},
			{"merge patch", crateRequest("patch", "c", "application/merge-patch+json", []byte(merge)), decodeCrate(t, patched), old, ""},
			{"JSON patch", crateRequest("patch", "c", "application/json-patch+json", []byte(jsonPatch)), decodeCrate(t, jpatched), old, ""},
			{"strategic merge patch", crateRequest("patch", "c", "application/strategic-merge-patch+json", []byte(smp)), decodeCrate(t, smpPatched), old, ""},
			// Applied by the manager of the stored spec: what it no
			// longer applies is removed.
			{"apply", crateRequest("patch", "c", "application/apply-patch+yaml", config), decodeCrate(t, []byte(body)), old, ""},
			{"apply, creating", crateRequest("patch", "c", "application/apply-patch+yaml", config), decodeCrate(t, []byte(body)), nil, ""},
		}
	}
	validate := func(w write) field.ErrorList {
		if w.old == nil {
			return v.Validate(w.ctx, w.obj)
		}
		return v.ValidateUpdate(w.ctx, w.obj, w.old)
	}

	t.Run("a default", func(t *testing.T) {
		for _, w := range writes(`{"name":"n","ref":{"name":"r"},"items":[{"size":2}],"ports":[{"name":"a","port":1},{"name":"b","port":2}]}`,
			`{"spec":{"count":null}}`, `[{"op":"remove","path":"/spec/count"}]`, `{"spec":{"count":null}}`) {
			if w.obj.Spec.Count != 0 {
				t.Fatalf("%s: decoded count %d: the test expects the Go zero value", w.name, w.obj.Spec.Count)
			}
			v.DefaultAbsent(w.ctx, w.obj, w.old)
			if w.obj.Spec.Count != 3 {
				t.Errorf("%s: count %d stored, want the schema's default 3 (as a CRD stores it)", w.name, w.obj.Spec.Count)
			}
			if errs := validate(w); len(errs) > 0 {
				t.Errorf("%s: %s", w.name, fieldErrors(errs))
			}
		}
		// A zero sent is kept.
		for _, w := range writes(`{"count":0,"name":"n","ref":{"name":"r"},"items":[{"size":2}],"ports":[{"name":"a","port":1},{"name":"b","port":2}]}`,
			`{"spec":{"count":0}}`, `[{"op":"replace","path":"/spec/count","value":0}]`, `{"spec":{"count":0}}`) {
			v.DefaultAbsent(w.ctx, w.obj, w.old)
			if w.obj.Spec.Count != 0 {
				t.Errorf("%s: count %d stored, want the 0 sent", w.name, w.obj.Spec.Count)
			}
		}
	})

	t.Run("required", func(t *testing.T) {
		for _, w := range writes(`{"count":7,"ref":{"name":"r"},"items":[{"size":2}],"ports":[{"name":"a","port":1},{"name":"b","port":2}]}`,
			`{"spec":{"name":null}}`, `[{"op":"remove","path":"/spec/name"}]`, `{"spec":{"name":null}}`) {
			text := fieldErrors(validate(w))
			if !strings.Contains(text, "spec.name: Required value") || strings.Contains(text, "chars long") {
				t.Errorf("%s: want only spec.name: Required value, as from the CRD; got\n%s", w.name, text)
			}
		}
		// "" sent: the CRD's MinLength message.
		w := writes(`{"count":7,"name":"","ref":{"name":"r"}}`, `{}`, `[]`, `{}`)[0]
		if text := fieldErrors(validate(w)); !strings.Contains(text, "spec.name: Invalid value: \"\": spec.name in body should be at least 1 chars long") {
			t.Errorf("\"\" sent: %s", text)
		}
	})

	t.Run("null on a nullable field", func(t *testing.T) {
		// ref is required and nullable: a null sent is there.
		body := object(`{"name":"n","ref":null}`)
		for name, ctx := range map[string]context.Context{
			"create":     crateRequest("create", "", "application/json", []byte(body)),
			"JSON patch": crateRequest("patch", "c", "application/json-patch+json", []byte(`[{"op":"replace","path":"/spec/ref","value":null}]`)),
		} {
			obj := decodeCrate(t, []byte(body))
			var errs field.ErrorList
			if name == "create" {
				errs = v.Validate(ctx, obj)
			} else {
				errs = v.ValidateUpdate(ctx, obj, old)
			}
			if len(errs) > 0 {
				t.Errorf("%s: want accepted, as by the CRD; got\n%s", name, fieldErrors(errs))
			}
		}
		// A merge patch's null deletes.
		patched, _ := jsonpatch.MergePatch([]byte(storedCrate), []byte(`{"spec":{"ref":null}}`))
		ctx := crateRequest("patch", "c", "application/merge-patch+json", []byte(`{"spec":{"ref":null}}`))
		if text := fieldErrors(v.ValidateUpdate(ctx, decodeCrate(t, patched), old)); !strings.Contains(text, "spec.ref: Required value") {
			t.Errorf("merge patch deleting ref: %s", text)
		}
	})

	t.Run("apply emptying spec", func(t *testing.T) {
		// The manager of all of spec applies spec: {}: server-side apply
		// leaves null, which the CRD rejects as not an object.
		config, _ := yaml.JSONToYAML([]byte(object(`{}`)))
		ctx := crateRequest("patch", "c", "application/apply-patch+yaml", config)
		text := fieldErrors(v.ValidateUpdate(ctx, decodeCrate(t, []byte(object(`{}`))), old))
		if !strings.Contains(text, `spec: Invalid value: "null": spec in body must be of type object: "null"`) || strings.Contains(text, "Required value") {
			t.Errorf("got\n%s", text)
		}
	})

	t.Run("strategic merge patch lists", func(t *testing.T) {
		// items has no patch strategy: the list sent replaces the stored
		// one; ports merges by name.
		for _, c := range []struct{ name, patch, want string }{
			{"replaced list", `{"spec":{"items":[{"size":0}]}}`, "spec.items[0].size: Invalid value: 0: spec.items[0].size in body should be greater than or equal to 1"},
			{"merged list", `{"spec":{"ports":[{"name":"b","port":0}]}}`, "spec.ports[1].port: Invalid value: 0: spec.ports[1].port in body should be greater than or equal to 1"},
		} {
			obj := decodeCrate(t, []byte(storedCrate))
			if c.name == "replaced list" {
				obj.Spec.Items = []crateItem{{}}
			} else {
				obj.Spec.Ports[1].Port = 0
			}
			ctx := crateRequest("patch", "c", "application/strategic-merge-patch+json", []byte(c.patch))
			if text := fieldErrors(v.ValidateUpdate(ctx, obj, old)); !strings.Contains(text, c.want) {
				t.Errorf("%s: want %q; got\n%s", c.name, c.want, text)
			}
		}
	})
}

// pallet has a status subresource whose phase has a default and no
// omitempty.
type palletStatus struct {
	Phase string `json:"phase"` // +kubebuilder:default=Pending
	Count int32  `json:"count,omitempty"`
}
type pallet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              crateRef     `json:"spec"`
	Status            palletStatus `json:"status"`
}

func (p *pallet) DeepCopyObject() runtime.Object { c := *p; return &c }

// TestAbsentStatusFields: a write to /status that leaves out a status
// field the Go types write as its zero value stores the schema's default,
// as the status of a CRD does; a phase sent is kept, and the spec is not
// touched.
func TestAbsentStatusFields(t *testing.T) {
	scheme := runtime.NewScheme()
	gk := schema.GroupKind{Group: "example.com", Kind: "Pallet"}
	scheme.AddKnownTypeWithName(gk.WithVersion("v1"), &pallet{})
	scheme.AddKnownTypeWithName(gk.WithVersion(runtime.APIVersionInternal), &pallet{})
	const palletSchema = `{"type":"object","properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","properties":{"name":{"type":"string"}}},
  "status":{"type":"object","properties":{"phase":{"type":"string","default":"Pending","enum":["Pending","Ready"]},"count":{"type":"integer","format":"int32"}}}}}`
	v, err := New(scheme, "example.com", &builders.Resource{Kind: "Pallet", Plural: "pallets", Singular: "pallet", Namespaced: true, StatusSubresource: true,
		Versions: []string{"v1"}, StorageVersion: "v1", Schemas: map[string]builders.Schema{"v1": {OpenAPIV3: palletSchema}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	write := func(body string) (context.Context, *pallet) {
		ctx := request.WithRequestInfo(context.Background(), &request.RequestInfo{IsResourceRequest: true, Verb: "update",
			APIGroup: "example.com", APIVersion: "v1", Resource: "pallets", Subresource: "status", Name: "p"})
		p := &pallet{}
		if err := json.Unmarshal([]byte(body), p); err != nil {
			t.Fatal(err)
		}
		return withRecord(request.WithNamespace(ctx, "default"), "application/json", []byte(body)), p
	}
	old := &pallet{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", ResourceVersion: "1"}, Spec: crateRef{Name: "s"}, Status: palletStatus{Phase: "Ready", Count: 1}}
	ctx, p := write(`{"apiVersion":"example.com/v1","kind":"Pallet","metadata":{"name":"p","namespace":"default","resourceVersion":"1"},"spec":{"name":"s"},"status":{"count":2}}`)
	v.DefaultAbsentStatus(ctx, p, old)
	if p.Status.Phase != "Pending" || p.Status.Count != 2 || p.Spec.Name != "s" {
		t.Errorf("status left out of a /status write: got %+v %+v, want phase Pending (the default), count 2, spec kept", p.Status, p.Spec)
	}
	if errs := v.ValidateStatusUpdate(ctx, p, old); len(errs) > 0 {
		t.Errorf("/status write: %s", fieldErrors(errs))
	}
	ctx, p = write(`{"apiVersion":"example.com/v1","kind":"Pallet","metadata":{"name":"p","namespace":"default","resourceVersion":"1"},"spec":{"name":"s"},"status":{"phase":"Ready"}}`)
	v.DefaultAbsentStatus(ctx, p, old)
	if p.Status.Phase != "Ready" {
		t.Errorf("a phase sent was changed to %q", p.Status.Phase)
	}
}

// TestStoredZeroKept: an object an earlier build stored with the zero value
// of a defaulted field without omitempty (count 0: that build stored the
// zero where the client left the field out) keeps it when a later write
// does not name the field: the stored zero is not taken for absent.
func TestStoredZeroKept(t *testing.T) {
	v := crateValidation(t)
	const stored = `{"apiVersion":"example.com/v1","kind":"Crate","metadata":{"name":"c","namespace":"default","resourceVersion":"1"},
  "spec":{"count":0,"name":"n","ref":{"name":"r"}}}`
	old := decodeCrate(t, []byte(stored))
	merge := `{"spec":{"name":"m"}}`
	patched, err := jsonpatch.MergePatch([]byte(stored), []byte(merge))
	if err != nil {
		t.Fatal(err)
	}
	jsonPatch := `[{"op":"replace","path":"/spec/name","value":"m"}]`
	p, err := jsonpatch.DecodePatch([]byte(jsonPatch))
	if err != nil {
		t.Fatal(err)
	}
	jpatched, err := p.Apply([]byte(stored))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		name string
		ctx  context.Context
		obj  *crate
	}{
		{"merge patch", crateRequest("patch", "c", "application/merge-patch+json", []byte(merge)), decodeCrate(t, patched)},
		{"JSON patch", crateRequest("patch", "c", "application/json-patch+json", []byte(jsonPatch)), decodeCrate(t, jpatched)},
		{"update with the object read back", crateRequest("update", "c", "application/json", patched), decodeCrate(t, patched)},
	} {
		v.DefaultAbsent(w.ctx, w.obj, old)
		if w.obj.Spec.Count != 0 {
			t.Errorf("%s: count %d, want the stored 0 kept", w.name, w.obj.Spec.Count)
		}
		if errs := v.ValidateUpdate(w.ctx, w.obj, old); len(errs) > 0 {
			t.Errorf("%s: %s", w.name, fieldErrors(errs))
		}
	}
}
