package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sizeFieldsTest is a test of the generated project: a CronTab whose spec
// and nested structs have fields named like protobuf methods is encoded in
// protobuf, and created and read back through the REST storage (the
// conformance tests, with this object) with every value kept.
const sizeFieldsTest = `package apis_test

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"example.com/crontab/pkg/apis/stable"
	stablev1 "example.com/crontab/pkg/apis/stable/v1"
)

func sized(ns string) *stablev1.CronTab {
	return &stablev1.CronTab{
		ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: ns},
		Spec: stablev1.CronTabSpec{
			Replicas: 2, Size: 3, Reset: true, String: "s",
			Shapes: []stablev1.Shape{{Size: 4, Marshal: "m", Unmarshal: "u", MarshalTo: 5, MarshalToSizedBuffer: 6, ProtoMessage: "p", Descriptor: "d"}},
			ByName: map[string]*stablev1.Shape{"a": {Size: 7}},
			Main:   &stablev1.Shape{Size: 8},
		},
	}
}

// The conformance tests create and get this object (of the internal type)
// through the REST storage, which stores it in protobuf.
func init() {
	validObjects["stable.example.com/crontabs"] = func(ns string) runtime.Object {
		return &stable.CronTab{
			ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: ns},
			Spec: stable.CronTabSpec{
				Replicas: 2, Size: 3, Reset: true, String: "s",
				Shapes: []stable.Shape{{Size: 4, Marshal: "m", Unmarshal: "u", MarshalTo: 5, MarshalToSizedBuffer: 6, ProtoMessage: "p", Descriptor: "d"}},
				ByName: map[string]*stable.Shape{"a": {Size: 7}},
				Main:   &stable.Shape{Size: 8},
			},
		}
	}
}

func TestSizeFieldsProtobuf(t *testing.T) {
	in := sized("ns")
	b, err := in.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	out := &stablev1.CronTab{}
	if err := out.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in.Spec, out.Spec) {
		t.Fatalf("protobuf lost values:\n got %+v\nwant %+v", out.Spec, in.Spec)
	}
}
`

// TestFieldsNamedLikeProtobufMethods: fields named like the methods of the
// protobuf encoding (Size, Reset, Marshal...) are served as they are
// declared: a struct a kind holds gets encoding methods of its own names, so
// the kind keeps protobuf, and the generated project builds, encodes them and
// creates and reads them back. On the kind itself, where the serializer calls
// those methods, the kind is served as JSON with one warning naming it.
func TestFieldsNamedLikeProtobufMethods(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a generated project")
	}
	dir := newProject(t)
	editSpec(t, dir, "\t// +optional\n\tSize int32 `json:\"size,omitempty\"`\n"+
		"\t// +optional\n\tReset bool `json:\"reset,omitempty\"`\n"+
		"\t// +optional\n\tString string `json:\"string,omitempty\"`\n"+
		"\t// +optional\n\tShapes []Shape `json:\"shapes,omitempty\"`\n"+
		"\t// +optional\n\tByName map[string]*Shape `json:\"byName,omitempty\"`\n"+
		"\t// +optional\n\tMain *Shape `json:\"main,omitempty\"`\n")
	v1 := filepath.Join(dir, "pkg", "apis", "stable", "v1")
	os.WriteFile(filepath.Join(v1, "shape_types.go"), []byte("package v1\n\n// Shape has fields named like every protobuf method.\ntype Shape struct {\n"+
		"\t// +optional\n\tSize int32 `json:\"size,omitempty\"`\n"+
		"\t// +optional\n\tMarshal string `json:\"marshal,omitempty\"`\n"+
		"\t// +optional\n\tUnmarshal string `json:\"unmarshal,omitempty\"`\n"+
		"\t// +optional\n\tMarshalTo int32 `json:\"marshalTo,omitempty\"`\n"+
		"\t// +optional\n\tMarshalToSizedBuffer int64 `json:\"marshalToSizedBuffer,omitempty\"`\n"+
		"\t// +optional\n\tProtoMessage string `json:\"protoMessage,omitempty\"`\n"+
		"\t// +optional\n\tDescriptor string `json:\"descriptor,omitempty\"`\n}\n"), 0o644)

	// A kind with a method Size of its own (a field could not be: it would
	// hide ObjectMeta's, which generate refuses), where the serializer calls
	// Size: a kind generated before keeps protobuf, so generate stops
	// (stored objects must stay readable)...
	mustRun(t, dir, "create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "Box")
	sizeMethod := filepath.Join(v1, "size.go")
	os.WriteFile(sizeMethod, []byte("package v1\n\n// Size is the length of the name.\nfunc (b *Box) Size() int { return len(b.Name) }\n"), 0o644)
	failsNamingAll(t, dir, "method Box.Size", "pkg/apis/stable/v1/size.go:4: method Box.Size is named like the protobuf method Size that the apiserver's protobuf serializer calls on the object Box",
		"stable/v1.Box cannot keep its protobuf encoding", "Rename the method")
	// ...and a new kind is served as JSON, with one warning.
	os.WriteFile(filepath.Join(v1, "crate_types.go"), []byte(`package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +resource:path=crates
type Crate struct {
	metav1.TypeMeta   `+"`json:\",inline\"`"+`
	metav1.ObjectMeta `+"`json:\"metadata,omitempty\"`"+`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type CrateList struct {
	metav1.TypeMeta `+"`json:\",inline\"`"+`
	metav1.ListMeta `+"`json:\"metadata,omitempty\"`"+`
	Items           []Crate `+"`json:\"items\"`"+`
}
`), 0o644)
	os.WriteFile(sizeMethod, []byte("package v1\n\n// Size is the length of the name.\nfunc (c *Crate) Size() int { return len(c.Name) }\n"), 0o644)

	out := mustRun(t, dir, "generate")
	if n := strings.Count(out, "served without protobuf"); n != 1 ||
		!strings.Contains(out, "stable/v1.Crate is served without protobuf: pkg/apis/stable/v1/size.go:4: method Crate.Size is named like the protobuf method Size that the apiserver's protobuf serializer calls on the object Crate") {
		t.Errorf("want one warning naming Crate.Size, got:\n%s", out)
	}
	if strings.Contains(out, "CronTab is served without protobuf") {
		t.Errorf("CronTab lost protobuf:\n%s", out)
	}
	pb, _ := os.ReadFile(filepath.Join(v1, "zz_generated.protobuf.go"))
	for _, want := range []string{"func (m *CronTabSpec) zzProtoSize() (n int)", "func (m *Shape) zzProtoUnmarshal(b []byte) error", "func (m *CronTab) Marshal() ([]byte, error)", "m.Spec.zzProtoMarshalToSizedBuffer(dAtA[:i])"} {
		if !strings.Contains(string(pb), want) {
			t.Errorf("zz_generated.protobuf.go lacks %q", want)
		}
	}
	if strings.Contains(string(pb), "func (m *Crate)") || strings.Contains(string(pb), "func (m *Shape) Reset()") {
		t.Errorf("zz_generated.protobuf.go declares methods it must not:\n%s", pb)
	}
	os.WriteFile(filepath.Join(dir, "pkg", "apis", "sizes_test.go"), []byte(sizeFieldsTest), 0o644)
	goIn(t, dir, "build", "./...")
	goIn(t, dir, "vet", "./...")
	goIn(t, dir, "test", "-count=1", "-run", "SizeFields|Conformance_stable_CronTab|RoundTrip", "./pkg/apis/")
}

// TestPatchStrategyMarkersNeverStopGenerate: +patchMergeKey and
// +patchStrategy comments repeated (as in types copied from Kubernetes', with
// +listType=map) or disagreeing with the struct tag never stop generate
// (openapi-gen stopped on them, naming no file): the struct tag wins, with a
// warning at the field's line only where they disagree.
func TestPatchStrategyMarkersNeverStopGenerate(t *testing.T) {
	dir := newProject(t)
	editSpec(t, dir, "\t// Conditions, with the markers of a Kubernetes type, twice.\n"+
		"\t// +patchMergeKey=type\n\t// +patchStrategy=merge\n\t// +patchMergeKey=type\n\t// +listType=map\n\t// +listMapKey=type\n\t// +optional\n"+
		"\tConditions []metav1.Condition `json:\"conditions,omitempty\" patchStrategy:\"merge\" patchMergeKey:\"type\"`\n"+
		"\t// Ports say another merge key in their comment.\n"+
		"\t// +patchMergeKey=name\n\t// +patchStrategy=merge\n\t// +listType=map\n\t// +listMapKey=port\n\t// +optional\n"+
		"\tPorts []CronPort `json:\"ports,omitempty\" patchStrategy:\"merge\" patchMergeKey:\"port\"`\n"+
		"\t// Hosts have a comment tag only.\n\t// +patchStrategy=merge\n\t// +optional\n"+
		"\tHosts []string `json:\"hosts,omitempty\"`\n")
	os.WriteFile(filepath.Join(dir, "pkg", "apis", "stable", "v1", "port_types.go"), []byte("package v1\n\n// CronPort is a port.\ntype CronPort struct {\n\tName string `json:\"name,omitempty\"`\n\tPort int32 `json:\"port\"`\n}\n"), 0o644)
	out := mustRun(t, dir, "generate")
	for _, want := range []string{
		"pkg/apis/stable/v1/crontab_types.go:52:2: field CronTabSpec.Ports: +patchMergeKey=name disagrees with its struct tag patchMergeKey:\"port\": the struct tag wins",
		"pkg/apis/stable/v1/crontab_types.go:56:2: field CronTabSpec.Hosts: +patchStrategy=merge disagrees with its struct tag, which has no patchStrategy: the struct tag wins",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want a warning %q, got:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "+patch"); n != 2 {
		t.Errorf("want 2 warnings about patch tags (none for tags that agree), got %d:\n%s", n, out)
	}
	// The published OpenAPI says what strategic merge patch does.
	b, _ := os.ReadFile(filepath.Join(dir, "pkg", "openapi", "zz_generated.openapi.go"))
	for _, want := range []string{`"x-kubernetes-patch-merge-key": "port"`, `"x-kubernetes-patch-merge-key": "type"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("zz_generated.openapi.go lacks %s", want)
		}
	}
}
