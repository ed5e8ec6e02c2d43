package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// failsNamingAll runs generate in dir, wants it to fail with every one of
// wants in its message, and nothing written.
func failsNamingAll(t *testing.T, dir, what string, wants ...string) {
	t.Helper()
	before := tree(t, dir)
	out, err := run(t, dir, "generate")
	msg := out
	if err != nil {
		msg += err.Error()
	}
	if err == nil {
		t.Errorf("%s: generate succeeded, want an error\n%s", what, out)
		return
	}
	for _, want := range wants {
		if !strings.Contains(msg, want) {
			t.Errorf("%s: want an error containing %q, got:\n%s", what, want, msg)
		}
	}
	after := tree(t, dir)
	for path, content := range before {
		if after[path] != content {
			t.Errorf("%s: %s changed by a failed generate", what, path)
		}
	}
	for path := range after {
		if _, ok := before[path]; !ok {
			t.Errorf("%s: %s written by a failed generate", what, path)
		}
	}
}

// editSpec adds lines at the top of CronTabSpec and returns a function
// restoring the file.
func editSpec(t *testing.T, dir, fields string, imports ...string) func() {
	t.Helper()
	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	src, err := os.ReadFile(types)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), "type CronTabSpec struct {\n", "type CronTabSpec struct {\n"+fields, 1)
	for _, imp := range imports {
		edited = strings.Replace(edited, "import (\n", "import (\n\t"+imp+"\n", 1)
	}
	if edited == string(src) {
		t.Fatal("no CronTabSpec to edit")
	}
	os.WriteFile(types, []byte(edited), 0o644)
	return func() { os.WriteFile(types, src, 0o644) }
}

// TestGenerateRefuses: what would fail the build or the apiserver later is
// a generate error at its file:line, with nothing written. The cases share
// one project (each scaffold costs seconds) and restore what they edit.
func TestGenerateRefuses(t *testing.T) {
	dir := newProject(t)
	for _, tc := range []struct {
		name string
		run  func(*testing.T, string)
	}{
		{"reserved names", reservedNames},
		{"interface fields", interfaceFields},
		{"hook signatures", hookSignatures},
		{"hooks must compile", hooksMustCompile}, // last: removes the generated files
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, dir) })
	}
}

// reservedNames: a field named like a method the generated code
// declares on its type (DeepCopy, by deepcopy-gen; OpenAPIModelName), or a
// hand-written method of that name, would fail the build inside a
// zz_generated file: generate refuses it at the field's line, saying which
// file declares what and what to do. The protobuf methods (Size, Reset...)
// are not reserved: a struct with such a field gets methods of other names
// (TestFieldsNamedLikeProtobufMethods).
func reservedNames(t *testing.T, dir string) {
	for _, tc := range []struct {
		fields string
		wants  []string
	}{
		{"\t// +optional\n\tDeepCopy int32 `json:\"deepCopy,omitempty\"`\n", []string{
			"crontab_types.go:39:2: field CronTabSpec.DeepCopy: zz_generated.deepcopy.go (deepcopy-gen) declares method DeepCopy on CronTabSpec",
			"rename the Go field and keep its json tag `json:\"deepCopy\"`: the wire name is unchanged",
		}},
		{"\t// +optional\n\tOpenAPIModelName string `json:\"modelName,omitempty\"`\n\t// +optional\n\tReset bool `json:\"reset,omitempty\"`\n", []string{
			"crontab_types.go:39:2: field CronTabSpec.OpenAPIModelName: zz_generated.model_name.go",
		}},
	} {
		restore := editSpec(t, dir, tc.fields)
		failsNamingAll(t, dir, tc.fields, tc.wants...)
		restore()
	}

	// A field of a kind hiding a method its embedded TypeMeta gives it.
	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	src, _ := os.ReadFile(types)
	os.WriteFile(types, []byte(strings.Replace(string(src), "\tSpec   CronTabSpec   `json:\"spec,omitempty\"`\n", "\tSpec   CronTabSpec   `json:\"spec,omitempty\"`\n\t// +optional\n\tGetObjectKind string `json:\"objectKind,omitempty\"`\n", 1)), 0o644)
	failsNamingAll(t, dir, "field GetObjectKind", "pkg/apis/stable/v1/crontab_types.go:34:2: field CronTab.GetObjectKind hides the method GetObjectKind that CronTab gets from its embedded metav1.TypeMeta")
	os.WriteFile(types, src, 0o644)

	// A hand-written method the generated code declares too.
	extra := filepath.Join(dir, "pkg", "apis", "stable", "v1", "modelname.go")
	os.WriteFile(extra, []byte("package v1\n\n// OpenAPIModelName names the spec.\nfunc (s CronTabSpec) OpenAPIModelName() string { return \"spec\" }\n"), 0o644)
	failsNamingAll(t, dir, "method OpenAPIModelName", "pkg/apis/stable/v1/modelname.go:4:22: method CronTabSpec.OpenAPIModelName is declared by zz_generated.model_name.go")
	os.Remove(extra)

	// Renamed, with the json tag kept, it generates.
	restore := editSpec(t, dir, "\t// +optional\n\tCopy int32 `json:\"deepCopy,omitempty\"`\n")
	mustRun(t, dir, "generate")
	restore()
}

// interfaceFields: interface{} and any fields, anywhere in an API type,
// are refused at their line, naming the field and what to use instead.
func interfaceFields(t *testing.T, dir string) {
	restore := editSpec(t, dir, "\t// +optional\n\tItems []map[string]any `json:\"items,omitempty\"`\n"+
		"\t// +optional\n\tNested *Nested `json:\"nested,omitempty\"`\n"+
		"\t// +optional\n\tInline struct {\n\t\tValue *interface{} `json:\"value\"`\n\t} `json:\"inline,omitempty\"`\n")
	nested := filepath.Join(dir, "pkg", "apis", "stable", "v1", "nested_types.go")
	os.WriteFile(nested, []byte("package v1\n\n// Payload is anything.\ntype Payload interface{}\n\n// Nested holds a payload.\ntype Nested struct {\n\tPayloads map[string]Payload `json:\"payloads\"`\n}\n"), 0o644)
	failsNamingAll(t, dir, "interface fields",
		"pkg/apis/stable/v1/crontab_types.go:39:2: field CronTabSpec.Items has type []map[string]any",
		"crontab_types.go:44:3: field CronTabSpec.Inline.Value has type *interface{}",
		"pkg/apis/stable/v1/nested_types.go:8:2: field Nested.Payloads has type map[string]Payload",
		"Use runtime.RawExtension (k8s.io/apimachinery/pkg/runtime) for any JSON object, apiextensionsv1.JSON (k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1) for any JSON value",
	)
	restore()
	os.Remove(nested)

	// What the message suggests generates; so does a type that is not an
	// API type (out of deepcopy and OpenAPI, and no kind refers to it).
	helper := filepath.Join(dir, "pkg", "apis", "stable", "v1", "helper.go")
	os.WriteFile(helper, []byte("package v1\n\n// Helper is not an API type.\n// +k8s:deepcopy-gen=false\n// +k8s:openapi-gen=false\ntype Helper struct {\n\tM map[string]any `json:\"m\"`\n}\n"), 0o644)
	defer os.Remove(helper)
	restore = editSpec(t, dir, "\t// +optional\n\tObject *runtime.RawExtension `json:\"object,omitempty\"`\n\t// +optional\n\tValue *apiextensionsv1.JSON `json:\"value,omitempty\"`\n",
		`apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"`, `"k8s.io/apimachinery/pkg/runtime"`)
	mustRun(t, dir, "generate")
	restore()
}

// hookSignatures: a hook declared with another signature than the one
// the framework calls is a generate error at its line, with what was found
// and the signature expected spelled out.
func hookSignatures(t *testing.T, dir string) {
	hooks := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_hooks.go")
	src, _ := os.ReadFile(hooks)

	// Validate taking the versioned type.
	edited := strings.Replace(string(src), "Validate(ctx context.Context, obj *stable.CronTab) field.ErrorList", "Validate(ctx context.Context, obj *CronTab) field.ErrorList", 1)
	edited = strings.Replace(edited, "return s.Validate(ctx, obj)", "return nil", 1)
	if edited == string(src) {
		t.Fatal("no Validate hook to edit")
	}
	os.WriteFile(hooks, []byte(edited), 0o644)
	failsNamingAll(t, dir, "versioned Validate",
		"pkg/apis/stable/v1/crontab_hooks.go:29:1: CronTabStrategy.Validate has the wrong signature for the Validate hook",
		"found:    func (*CronTabStrategy) Validate(ctx context.Context, obj *v1.CronTab) field.ErrorList",
		"expected: func (*CronTabStrategy) Validate(ctx context.Context, obj *stable.CronTab) field.ErrorList",
		`take the internal type *stable.CronTab (import "example.com/crontab/pkg/apis/stable") or runtime.Object`)
	os.WriteFile(hooks, src, 0o644)

	// ValidateUpdate with a result of its own, and PrepareForUpdate mixing types.
	extra := filepath.Join(dir, "pkg", "apis", "stable", "v1", "more_hooks.go")
	os.WriteFile(extra, []byte("package v1\n\nimport (\n\t\"context\"\n\n\t\"k8s.io/apimachinery/pkg/runtime\"\n\n\t\"example.com/crontab/pkg/apis/stable\"\n)\n\n"+
		"func (CronTabStrategy) PrepareForUpdate(ctx context.Context, obj *stable.CronTab, old runtime.Object) {}\n\n"+
		"func (*CronTabStrategy) Canonicalize(obj runtime.Object) {}\n"), 0o644)
	failsNamingAll(t, dir, "mixed PrepareForUpdate",
		"more_hooks.go:11:1: CronTabStrategy.PrepareForUpdate has the wrong signature",
		"found:    func (CronTabStrategy) PrepareForUpdate(ctx context.Context, obj *stable.CronTab, old runtime.Object)",
		"expected: func (CronTabStrategy) PrepareForUpdate(ctx context.Context, obj, old *stable.CronTab)")
	os.Remove(extra)

	// DefaultingFunction taking the internal type (called with the versioned one).
	os.WriteFile(extra, []byte("package v1\n\nimport \"example.com/crontab/pkg/apis/stable\"\n\nfunc (CronTabSchemeFns) DefaultingFunction(obj *stable.CronTab) {}\n"), 0o644)
	failsNamingAll(t, dir, "internal DefaultingFunction",
		"pkg/apis/stable/v1/more_hooks.go:5:1: CronTabSchemeFns.DefaultingFunction has the wrong signature",
		"found:    func (CronTabSchemeFns) DefaultingFunction(obj *stable.CronTab)",
		"expected: func (CronTabSchemeFns) DefaultingFunction(obj *CronTab)")

	// The accepted forms generate: runtime.Object, interface{}, the versioned type.
	for _, hooks := range []string{
		"import \"k8s.io/apimachinery/pkg/runtime\"\n\nfunc (CronTabSchemeFns) DefaultingFunction(o interface{}) {}\n\nfunc (*CronTabStrategy) Canonicalize(obj runtime.Object) {}\n",
		"import (\n\t\"context\"\n\n\t\"k8s.io/apimachinery/pkg/runtime\"\n)\n\nfunc (*CronTabSchemeFns) DefaultingFunction(obj *CronTab) {}\n\nfunc (CronTabStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {}\n",
	} {
		os.WriteFile(extra, []byte("package v1\n\n"+hooks), 0o644)
		mustRun(t, dir, "generate")
	}
	os.Remove(extra)

	// The handler of a custom subresource takes the internal object and
	// request (or runtime.Object), as the registration asserts them: taking
	// the versioned object would build and then panic on the first request.
	mustRun(t, dir, "create", "subresource", "--subresource", "restart", "--group", "stable", "--version", "v1", "--kind", "CronTab")
	rest := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_restart_rest.go")
	src, _ = os.ReadFile(rest)
	for _, tc := range []struct{ from, to, found, why string }{
		{"obj *stable.CronTab, req", "obj *CronTab, req", "found:    func (*CronTabStrategy) Restart(ctx context.Context, obj *v1.CronTab, req *stable.CronTabRestart) (runtime.Object, error)",
			`the handler takes the internal types *stable.CronTab and *stable.CronTabRestart (import "example.com/crontab/pkg/apis/stable"), or runtime.Object for either, not the versioned *v1.CronTab and *v1.CronTabRestart`},
		{"(runtime.Object, error) {\n\treturn obj, nil", "*stable.CronTab {\n\treturn obj", "found:    func (*CronTabStrategy) Restart(ctx context.Context, obj *stable.CronTab, req *stable.CronTabRestart) *stable.CronTab", ""},
	} {
		edited := strings.Replace(string(src), tc.from, tc.to, 1)
		if edited == string(src) {
			t.Fatalf("no %q in the handler", tc.from)
		}
		os.WriteFile(rest, []byte(edited), 0o644)
		failsNamingAll(t, dir, "handler "+tc.to,
			"pkg/apis/stable/v1/crontab_restart_rest.go:33:1: CronTabStrategy.Restart has the wrong signature for the handler of the restart subresource of CronTab",
			tc.found,
			"expected: func (*CronTabStrategy) Restart(ctx context.Context, obj *stable.CronTab, req *stable.CronTabRestart) (runtime.Object, error)",
			tc.why)
	}
	// runtime.Object generates.
	os.WriteFile(rest, []byte(strings.Replace(string(src), "obj *stable.CronTab, req", "obj runtime.Object, req", 1)), 0o644)
	mustRun(t, dir, "generate")
	os.WriteFile(rest, src, 0o644)
}

// hooksMustCompile: a hand-written file of the API packages that does not
// compile (a hooks file with a syntax or a type error) fails generate with
// the compiler's file:line message; generated code the hooks call (DeepCopy,
// the conversions, the protobuf methods) is not an error, even in a project
// whose generated files are all missing.
func hooksMustCompile(t *testing.T, dir string) {
	v1 := filepath.Join(dir, "pkg", "apis", "stable", "v1")
	extra := filepath.Join(v1, "more_hooks.go")

	os.WriteFile(extra, []byte("package v1\n\nfunc (*CronTabStrategy) Canonicalize(obj {\n}\n"), 0o644)
	failsNamingAll(t, dir, "syntax error", "more_hooks.go:3:42: missing ',' in parameter list")

	os.WriteFile(extra, []byte("package v1\n\nimport \"example.com/crontab/pkg/apis/stable\"\n\nfunc (*CronTabStrategy) Canonicalize(obj *stable.CronTab) {\n\tobj.Spec.Replicas = \"1\"\n}\n"), 0o644)
	failsNamingAll(t, dir, "type error",
		"the API packages do not compile",
		`pkg/apis/stable/v1/more_hooks.go:6:22: cannot use "1" (untyped string constant) as int32 value in assignment`)

	// Hooks calling what only the generated code declares, with every
	// generated file gone.
	os.WriteFile(extra, []byte(`package v1

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"example.com/crontab/pkg/apis/stable"
)

func (*CronTabStrategy) PrepareForUpdate(ctx context.Context, obj, old *stable.CronTab) {
	var versioned CronTab
	if err := Convert_stable_CronTab_To_v1_CronTab(old.DeepCopy(), &versioned, nil); err != nil {
		return
	}
	var o runtime.Object = &versioned
	_ = o.DeepCopyObject()
	_ = versioned.Size()
	SetObjectDefaults_CronTab(&versioned)
}
`), 0o644)
	filepath.WalkDir(filepath.Join(dir, "pkg"), func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "zz_generated") {
			os.Remove(path)
		}
		return nil
	})
	mustRun(t, dir, "generate")
	if _, err := os.Stat(filepath.Join(v1, "zz_generated.deepcopy.go")); err != nil {
		t.Errorf("no deepcopy generated: %v", err)
	}

	// The same type error is found in such a project too.
	b, _ := os.ReadFile(extra)
	os.WriteFile(extra, append(b, []byte("\nfunc helper() int { return \"x\" }\n")...), 0o644)
	filepath.WalkDir(filepath.Join(dir, "pkg"), func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "zz_generated") {
			os.Remove(path)
		}
		return nil
	})
	failsNamingAll(t, dir, "type error without generated files", `more_hooks.go:22:28: cannot use "x" (untyped string constant) as int value in return statement`)
}
