package generators

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
	"k8s.io/gengo/v2"
	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/namer"
	"k8s.io/gengo/v2/parser"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// jsonTestTypes are kinds of every shape absentFieldsOf tells apart.
const jsonTestTypes = `package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names the generated file must not take.
var reflect = "taken"

type plainTank struct{}

type Tank struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Spec   TankSpec   ` + "`json:\"spec,omitempty\"`" + `
	Status TankStatus ` + "`json:\"status,omitempty\"`" + `
}

type TankSpec struct {
	Levels []string ` + "`json:\"levels\"`" + `
	Data   []byte   ` + "`json:\"data,omitempty\"`" + `
}

type TankStatus struct {
	Ready int32 ` + "`json:\"ready\"`" + `
}

type TankList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `
	Items           []Tank ` + "`json:\"items\"`" + `
}

// Own encodes itself: left as it is.
type Own struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec              TankSpec ` + "`json:\"spec,omitempty\"`" + `
}

func (o *Own) MarshalJSON() ([]byte, error) { return []byte("{}"), nil }

// Decodes decodes itself: left as it is too.
type Decodes struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec              TankSpec ` + "`json:\"spec,omitempty\"`" + `
}

func (d *Decodes) UnmarshalJSON(b []byte) error { return nil }

// Coded brings its MarshalJSON to the kinds that embed it.
type Coded struct{ X int }

func (Coded) MarshalJSON() ([]byte, error) { return []byte("1"), nil }

type Embeds struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	Coded
	Spec TankSpec ` + "`json:\"spec,omitempty\"`" + `
}

// Mixed: a pointer spec, a status without omitempty, and omitzero: nothing to do.
type Mixed struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec              *TankSpec  ` + "`json:\"spec,omitempty\"`" + `
	Status            TankStatus ` + "`json:\"status\"`" + `
	Other             TankStatus ` + "`json:\"other,omitempty\"`" + `
}

type Zeroed struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec              TankSpec ` + "`json:\"spec,omitempty,omitzero\"`" + `
}

// Phase encodes itself as text: a status of that type is left as it is.
type Phase struct{ Name string }

func (p Phase) MarshalText() ([]byte, error) { return []byte(p.Name), nil }

type Partial struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec              TankSpec ` + "`json:\"spec,omitempty\"`" + `
	Status            Phase    ` + "`json:\"status,omitempty\"`" + `
}

// Foreign's status is another package's type.
type Foreign struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Status            metav1.Condition ` + "`json:\"status,omitempty\"`" + `
}
`

// jsonTestBehaviour runs in the package of jsonTestTypes with the generated
// file: what the encodings write, and that what older builds stored reads
// the same.
const jsonTestBehaviour = `package v1_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"

	v1 "example.com/tanks/pkg/apis/tanks/v1"
)

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEncodings(t *testing.T) {
	empty := &v1.Tank{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	if got := marshal(t, empty); got != ` + "`" + `{"metadata":{"name":"a"}}` + "`" + ` {
		t.Errorf("a Tank without spec and status: %s", got)
	}
	full := &v1.Tank{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: v1.TankSpec{Levels: []string{"x"}, Data: []byte{1, 250}}, Status: v1.TankStatus{Ready: 2}}
	if got := marshal(t, full); got != ` + "`" + `{"metadata":{"name":"a"},"spec":{"levels":["x"],"data":"Afo="},"status":{"ready":2}}` + "`" + ` {
		t.Errorf("a Tank with both: %s", got)
	}
	if got := marshal(t, &v1.Tank{Status: v1.TankStatus{Ready: 1}}); got != ` + "`" + `{"metadata":{},"status":{"ready":1}}` + "`" + ` {
		t.Errorf("a Tank with a status only: %s", got)
	}
	if got := marshal(t, &v1.TankList{Items: []v1.Tank{*empty, *full}}); !strings.Contains(got, ` + "`" + `"items":[{"metadata":{"name":"a"}},{"metadata"` + "`" + `) {
		t.Errorf("items of a list: %s", got)
	}
	if got := marshal(t, &v1.Partial{}); got != ` + "`" + `{"metadata":{},"status":""}` + "`" + ` {
		t.Errorf("a Partial leaves its spec out and writes its status as Phase does: %s", got)
	}
	if got := marshal(t, &v1.Foreign{}); got != ` + "`" + `{"metadata":{}}` + "`" + ` {
		t.Errorf("a Foreign: %s", got)
	}
	if got := marshal(t, &v1.Mixed{}); got != ` + "`" + `{"metadata":{},"status":{"ready":0},"other":{"ready":0}}` + "`" + ` {
		t.Errorf("a Mixed is encoded as before: %s", got)
	}

	// apimachinery's converter (printer columns, validation, server-side apply).
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&v1.Tank{Spec: v1.TankSpec{Levels: []string{}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := u["status"]; ok || u["spec"] == nil {
		t.Errorf("unstructured: %v", u)
	}

	// CBOR: absent too, []byte as the serializer writes it (a byte string).
	for obj, want := range map[*v1.Tank]string{empty: "{'metadata': {'name': 'a'}}", full: "{'spec': {'data': 22(h'01fa'), 'levels': ['x']}, 'status': {'ready': 2}, 'metadata': {'name': 'a'}}"} {
		b, err := direct.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		var back v1.Tank
		if err := direct.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(&back, obj) {
			t.Errorf("CBOR round trip: %v %+v", err, back)
		}
		if d, _ := direct.Diagnose(b); d != want {
			t.Errorf("CBOR: %s, want %s", d, want)
		}
	}

	// What an older build stored, spec and status written at their zero
	// value, reads as what this one stores.
	var old, now v1.Tank
	if err := json.Unmarshal([]byte(` + "`" + `{"apiVersion":"x.example.com/v1","kind":"Tank","metadata":{"name":"a"},"spec":{},"status":{}}` + "`" + `), &old); err != nil {
		t.Fatal(err)
	}
	stored := marshal(t, &old)
	if stored != ` + "`" + `{"kind":"Tank","apiVersion":"x.example.com/v1","metadata":{"name":"a"}}` + "`" + ` {
		t.Errorf("stored again: %s", stored)
	}
	if err := json.Unmarshal([]byte(stored), &now); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(old, now) {
		t.Errorf("read back differently: %+v, %+v", old, now)
	}
}
`

// TestJSONEncodingGenerated: zz_generated.json.go declares MarshalJSON and
// MarshalCBOR on the kinds whose spec or status encoding/json writes at its
// zero value, for those fields only; a kind with its own encoding (declared
// or embedded), pointer or omitzero fields, and a status type that encodes
// itself are left as they are; the names it declares and imports avoid the
// package's. The file compiles with the types, and the kinds then encode
// without a zero spec and status, through encoding/json, apimachinery's
// converter and CBOR, while what an older build stored reads the same.
func TestJSONEncodingGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("loads and builds Go packages")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "pkg", "apis", "tanks", "v1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join("..", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for path, content := range map[string]string{
		filepath.Join(root, "go.mod"):       "module example.com/tanks\n\ngo 1.26\n\nrequire k8s.io/apimachinery v0.37.2\n",
		filepath.Join(root, "go.sum"):       string(sum),
		filepath.Join(dir, "types.go"):      jsonTestTypes,
		filepath.Join(dir, "types_test.go"): jsonTestBehaviour,
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off")
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir, tidy.Env = root, env
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}

	pkgPath := "example.com/tanks/pkg/apis/tanks/v1"
	p := parser.NewWithOptions(parser.Options{BuildTags: []string{gengo.StdBuildTag}})
	if err := p.LoadPackagesWithConfigForTesting(&packages.Config{Dir: root, Env: env}, pkgPath); err != nil {
		t.Fatal(err)
	}
	c, err := generator.NewContext(p, namer.NameSystems{}, "")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []*model.Kind
	for _, k := range []string{"Tank", "Own", "Decodes", "Embeds", "Mixed", "Zeroed", "Partial", "Foreign"} {
		kinds = append(kinds, &model.Kind{KindDescriptor: project.KindDescriptor{Kind: k}})
	}
	api := &State{API: &model.API{Root: root, Header: "// Header.\n", Groups: []*model.Group{{Name: "tanks", Versions: []*model.Version{
		{Name: "v1", Package: pkgPath, Dir: dir, Kinds: kinds},
	}}}}}
	out, err := jsonEncodings{}.Generate(api, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Path != filepath.Join(dir, "zz_generated.json.go") {
		t.Fatalf("want zz_generated.json.go in %s, got %d files", dir, len(out))
	}
	if err := formatAll(out); err != nil {
		t.Fatal(err)
	}
	src := string(out[0].Content)
	methods := regexp.MustCompile(`func \(in \*(\w+)\) (Marshal\w+)\(`).FindAllStringSubmatch(src, -1)
	var got []string
	for _, m := range methods {
		got = append(got, m[1]+"."+m[2])
	}
	if want := "Tank.MarshalJSON Tank.MarshalCBOR Partial.MarshalJSON Partial.MarshalCBOR Foreign.MarshalJSON Foreign.MarshalCBOR"; strings.Join(got, " ") != want {
		t.Errorf("methods %v, want %s:\n%s", got, want, src)
	}
	for _, want := range []string{
		"//go:build !ignore_autogenerated\n", "// Code generated by apiserver-boot. DO NOT EDIT.\n",
		"\treflect2 \"reflect\"\n", "\tmetav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n",
		"type plainTank2 Tank\n", "Status *metav1.Condition `json:\"status,omitempty\"`",
		"\t\t*plainPartial\n\t\tSpec *TankSpec `json:\"spec,omitempty\"`\n\t}{",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("the file lacks %q:\n%s", want, src)
		}
	}
	if err := os.WriteFile(out[0].Path, out[0].Content, 0o644); err != nil {
		t.Fatal(err)
	}
	test := exec.Command("go", "test", "-count=1", "./pkg/apis/tanks/v1")
	test.Dir, test.Env = root, env
	if b, err := test.CombinedOutput(); err != nil {
		t.Fatalf("go test in the package with the generated file: %v\n%s\n%s", err, b, src)
	}

	// Generated again with the file in place (the universe load leaves
	// generated files out): the same content.
	p = parser.NewWithOptions(parser.Options{BuildTags: []string{gengo.StdBuildTag}})
	if err := p.LoadPackagesWithConfigForTesting(&packages.Config{Dir: root, Env: env}, pkgPath); err != nil {
		t.Fatal(err)
	}
	if c, err = generator.NewContext(p, namer.NameSystems{}, ""); err != nil {
		t.Fatal(err)
	}
	again, err := jsonEncodings{}.Generate(api, c)
	if err != nil {
		t.Fatal(err)
	}
	if formatAll(again); len(again) != 1 || string(again[0].Content) != src {
		t.Errorf("a second run differs:\n%v", again)
	}
}
