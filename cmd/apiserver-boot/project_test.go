package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/generators/protobuf"
)

// newProject scaffolds a project with one kind in a temporary folder.
func newProject(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("loads Go packages")
	}
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "repo", "--module", "example.com/crontab", "--domain", "example.com"},
		{"create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab"},
	} {
		if out, err := run(t, dir, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func TestCreateIsIdempotentAndKeepsEdits(t *testing.T) {
	dir := newProject(t)
	create := []string{"create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab"}
	out, err := run(t, dir, create...)
	if err != nil || !strings.Contains(out, "Nothing to do") {
		t.Fatalf("re-running create should be a no-op that says so: %v\n%s", err, out)
	}

	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	orig, _ := os.ReadFile(types)
	edited := append(append([]byte(nil), orig...), []byte("\n// edited by the user\n")...)
	os.WriteFile(types, edited, 0o644)
	out, err = run(t, dir, create...)
	if err != nil || !strings.Contains(out, "skipped pkg/apis/stable/v1/crontab_types.go") {
		t.Fatalf("an edited file should be reported as skipped: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(types); !bytes.Equal(b, edited) {
		t.Fatalf("edited file was overwritten without --force")
	}
	if _, err := run(t, dir, append(create, "--force")...); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(types); !bytes.Equal(b, orig) {
		t.Fatalf("--force did not restore the scaffolded file")
	}
}

// TestGenerateFailureLeavesFilesAsTheyWere: a failure after the source
// generators wrote their files (here: the package load) restores every file.
func TestGenerateFailureLeavesFilesAsTheyWere(t *testing.T) {
	dir := newProject(t)
	before := projectFiles(t, dir)

	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	src, _ := os.ReadFile(types)
	// A new kind (so the source generators have something to write) that
	// imports a package that does not exist (so loading fails afterwards).
	broken := strings.Replace(string(src), "import (", "import (\n\t_ \"example.com/crontab/pkg/doesnotexist\"\n", 1) +
		"\n// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object\n// +resource:path=extras\ntype Extra struct {\n\tmetav1.TypeMeta `json:\",inline\"`\n\tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n}\n"
	os.WriteFile(types, []byte(broken), 0o644)

	_, err := run(t, dir, "generate")
	if err == nil || !strings.Contains(err.Error(), "doesnotexist") {
		t.Fatalf("want a load error naming the missing package, got %v", err)
	}
	after := projectFiles(t, dir)
	for path, content := range before {
		if path == filepath.Join("pkg", "apis", "stable", "v1", "crontab_types.go") {
			continue
		}
		if !bytes.Equal(after[path], content) {
			t.Errorf("%s changed by a failed generate", path)
		}
	}
	if len(after) != len(before) {
		t.Errorf("a failed generate left files behind: %d files before, %d after", len(before), len(after))
	}
}

// TestConversionStubsNameTheFields: a field renamed in a second version gets
// a Convert_ stub naming it (never a silent drop, never a bare "undefined"),
// generate fails, naming both directions, while the stubs are unfilled, and
// passes once they are.
func TestConversionStubsNameTheFields(t *testing.T) {
	dir := newProject(t)
	if out, err := run(t, dir, "create", "version", "--group", "stable", "--version", "v2", "--kind", "CronTab", "--from", "v1"); err != nil {
		t.Fatalf("create version: %v\n%s", err, out)
	}
	v2 := filepath.Join(dir, "pkg", "apis", "stable", "v2")
	types := filepath.Join(v2, "crontab_types.go")
	src, _ := os.ReadFile(types)
	renamed := strings.Replace(string(src), "Replicas int32 `json:\"replicas,omitempty\"`\n}\n\n// CronTabStatus", "Count int32 `json:\"count,omitempty\"`\n}\n\n// CronTabStatus", 1)
	if renamed == string(src) {
		t.Fatal("scaffolded CronTabSpec changed: cannot rename its field")
	}
	os.WriteFile(types, []byte(renamed), 0o644)

	out, err := run(t, dir, "generate")
	if err == nil {
		t.Fatalf("generate passed with unfilled conversion stubs:\n%s", out)
	}
	for _, want := range []string{
		`crontab_conversion.go: wrote Convert_v2_CronTabSpec_To_stable_CronTabSpec for you to fill in: Count (json "count"): no field of that name in stable.CronTabSpec`,
		`crontab_conversion.go: wrote Convert_stable_CronTabSpec_To_v2_CronTabSpec for you to fill in: Replicas (json "replicas"): no field of that name in v2.CronTabSpec`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("generate output lacks %q:\n%s", want, out)
		}
	}
	unfilled := []string{
		"stable.example.com/v2 CronTab: spec.count (field Count int32 of v2.CronTabSpec) is not in the internal type stable.CronTabSpec",
		"stable.example.com/v2 CronTab: spec.replicas (field Replicas int32 of the internal type stable.CronTabSpec, from the storage version v1) is not in v2.CronTabSpec",
		"or convert it in Convert_stable_CronTabSpec_To_v2_CronTabSpec, the stub generate wrote at pkg/apis/stable/v2/crontab_conversion.go:",
	}
	for _, want := range unfilled {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("generate's error lacks %q:\n%v", want, err)
		}
	}
	stubs, _ := os.ReadFile(filepath.Join(v2, "crontab_conversion.go"))
	conv, _ := os.ReadFile(filepath.Join(v2, "zz_generated.conversion.go"))
	if !strings.Contains(string(stubs), `return builders.UnconvertedFields("Convert_v2_CronTabSpec_To_stable_CronTabSpec", "Count")`) ||
		!strings.Contains(string(conv), "return Convert_v2_CronTabSpec_To_stable_CronTabSpec(a.(*CronTabSpec), b.(*stable.CronTabSpec), scope)") {
		t.Fatalf("stub not written or not registered:\n%s", stubs)
	}

	out, err = run(t, dir, "generate")
	if err == nil || !strings.Contains(err.Error(), unfilled[0]) || strings.Contains(out, "wrote Convert_") {
		t.Fatalf("second generate should fail again on the unfilled stubs and write none: %v\n%s", err, out)
	}

	filled := strings.ReplaceAll(string(stubs), `return builders.UnconvertedFields("Convert_v2_CronTabSpec_To_stable_CronTabSpec", "Count")`, "out.Replicas = in.Count\n\treturn nil")
	filled = strings.ReplaceAll(filled, `return builders.UnconvertedFields("Convert_stable_CronTabSpec_To_v2_CronTabSpec", "Replicas")`, "out.Count = in.Replicas\n\treturn nil")
	// builders was imported for the stubs only: filled, they compile without it.
	filled = strings.Replace(filled, "\t\"github.com/apiserver-boot/apiserver-boot/pkg/builders\"\n", "", 1)
	os.WriteFile(filepath.Join(v2, "crontab_conversion.go"), []byte(filled), 0o644)
	out, err = run(t, dir, "generate")
	if err != nil || strings.Contains(out, "CronTabSpec") {
		t.Fatalf("filled conversions still reported: %v\n%s", err, out)
	}
}

// TestCreateResourceInAnotherVersion: create gvr with a kind the group
// already serves adds a version of it: the existing version becomes the
// storage version, no second controller or hooks file, and it generates.
func TestCreateResourceInAnotherVersion(t *testing.T) {
	dir := newProject(t)
	out, err := run(t, dir, "create", "group", "version", "resource", "--group", "stable", "--version", "v1beta1", "--kind", "CronTab")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "none added for v1beta1") {
		t.Errorf("should say no controller was added:\n%s", out)
	}
	v1, _ := os.ReadFile(filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go"))
	if !strings.Contains(string(v1), "// +storageversion\n") {
		t.Errorf("v1 should be marked +storageversion")
	}
	if _, err := os.Stat(filepath.Join(dir, "pkg", "apis", "stable", "v1beta1", "crontab_hooks.go")); err == nil {
		t.Errorf("the new version got a hooks file the server would not use")
	}
	if strings.Contains(out, "is not used") {
		t.Errorf("generate warns about unused hooks:\n%s", out)
	}
}

// TestGenerateSkipsWhenNothingChanged: the cache record makes a repeated
// generate stop at once, and any change to what it reads or writes (a types
// edit, a deleted or edited generated file) makes it run again.
func TestGenerateSkipsWhenNothingChanged(t *testing.T) {
	dir := newProject(t)
	upToDate := "generate: up to date"
	gen := func(args ...string) string {
		t.Helper()
		out, err := run(t, dir, append([]string{"generate"}, args...)...)
		if err != nil {
			t.Fatalf("generate: %v\n%s", err, out)
		}
		return out
	}
	if out := gen(); !strings.Contains(out, upToDate) {
		t.Fatalf("right after create, generate should be up to date:\n%s", out)
	}
	if out := gen("--force"); strings.Contains(out, upToDate) {
		t.Errorf("--force should run the generators:\n%s", out)
	}
	deepcopy := filepath.Join(dir, "pkg", "apis", "stable", "v1", "zz_generated.deepcopy.go")
	want, _ := os.ReadFile(deepcopy)
	for name, change := range map[string]func(){
		"edited generated file":  func() { os.WriteFile(deepcopy, append(want, "// edited\n"...), 0o644) },
		"deleted generated file": func() { os.Remove(deepcopy) },
		"edited types": func() {
			types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
			src, _ := os.ReadFile(types)
			os.WriteFile(types, append(src, "\n// A comment.\n"...), 0o644)
		},
	} {
		change()
		if out := gen(); strings.Contains(out, upToDate) {
			t.Errorf("%s: generate did not run:\n%s", name, out)
		}
		if got, _ := os.ReadFile(deepcopy); !bytes.Equal(got, want) {
			t.Errorf("%s: deepcopy not restored", name)
		}
		if out := gen(); !strings.Contains(out, upToDate) {
			t.Errorf("%s: the run after should be up to date:\n%s", name, out)
		}
	}
}

// TestGenerateWatchesPackagesTheTypesImport: a package of the project the
// types import (outside pkg/apis) is an input of generate too: editing it is
// never "up to date".
func TestGenerateWatchesPackagesTheTypesImport(t *testing.T) {
	dir := newProject(t)
	common := filepath.Join(dir, "pkg", "common")
	os.MkdirAll(common, 0o755)
	os.WriteFile(filepath.Join(common, "common.go"), []byte("package common\n\n// Zone is a time zone.\n// +enum\ntype Zone string\n\nconst (\n\tUTC Zone = \"UTC\"\n)\n"), 0o644)
	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	edit(t, types, "import (\n", "import (\n\t\"example.com/crontab/pkg/common\"\n")
	edit(t, types, "type CronTabSpec struct {\n", "type CronTabSpec struct {\n\tZone common.Zone `json:\"zone,omitempty\"`\n")
	mustRun(t, dir, "generate")
	if out := mustRun(t, dir, "generate"); !strings.Contains(out, "generate: up to date") {
		t.Fatalf("nothing changed, generate should be up to date:\n%s", out)
	}
	// A value added to the imported enum changes the generated OpenAPI.
	edit(t, filepath.Join(common, "common.go"), "\tUTC Zone", "\tParis Zone = \"Europe/Paris\"\n\tUTC Zone")
	out := mustRun(t, dir, "generate")
	if strings.Contains(out, "up to date") {
		t.Fatalf("an imported package of the project changed: generate must run:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pkg", "openapi", "zz_generated.openapi.go")); !bytes.Contains(b, []byte(`"Europe/Paris"`)) {
		t.Errorf("the OpenAPI of the field lacks the new enum value")
	}
}

// TestGenerateRemovesWhatItNoLongerProduces: a kind removed from the types
// takes its generated clients with it (the project keeps building); a
// generated file edited since is kept, with a warning.
func TestGenerateRemovesWhatItNoLongerProduces(t *testing.T) {
	dir := newProject(t)
	mustRun(t, dir, "create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "Calendar", "--controller=false")
	typed := filepath.Join(dir, "pkg", "client", "clientset", "versioned", "typed", "stable", "v1")
	client := filepath.Join(typed, "calendar.go")
	lister := filepath.Join(dir, "pkg", "client", "listers", "stable", "v1", "calendar.go")
	for _, f := range []string{client, lister} {
		if _, err := os.Stat(f); err != nil {
			t.Fatal(err)
		}
	}
	// The user edits the generated lister (against the rules), then removes the kind.
	b, _ := os.ReadFile(lister)
	os.WriteFile(lister, append(b, "\n// edited\n"...), 0o644)
	v1 := filepath.Join(dir, "pkg", "apis", "stable", "v1")
	for _, f := range []string{"calendar_types.go", "calendar_hooks.go", "calendar_types_test.go"} {
		os.Remove(filepath.Join(v1, f))
	}
	out := mustRun(t, dir, "generate")
	if _, err := os.Stat(client); !os.IsNotExist(err) || !strings.Contains(out, "removed pkg/client/clientset/versioned/typed/stable/v1/calendar.go (no longer generated)") {
		t.Errorf("the removed kind's client should be removed (and said): %v\n%s", err, out)
	}
	if _, err := os.Stat(lister); err != nil || !strings.Contains(out, "pkg/client/listers/stable/v1/calendar.go is no longer generated but was edited since: kept") {
		t.Errorf("an edited generated file should be kept, with a warning: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(typed, "crontab.go")); err != nil {
		t.Errorf("the other kind's client went too: %v", err)
	}
	if _, err := os.Stat(filepath.Join(v1, protobuf.FieldNumbersFile)); err != nil {
		t.Errorf("the field number record is history and stays: %v", err)
	}
}

// TestCreateVersionReadsMarkersAsGenerateDoes: +storageversion written the
// kubebuilder way (//+storageversion) is seen by create version too.
func TestCreateVersionReadsMarkersAsGenerateDoes(t *testing.T) {
	dir := newProject(t)
	mustRun(t, dir, "create", "version", "--group", "stable", "--version", "v2", "--kind", "CronTab", "--from", "v1")
	// The storage version moves to v2, marked without a space.
	edit(t, filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go"), "// +storageversion\n", "")
	edit(t, filepath.Join(dir, "pkg", "apis", "stable", "v2", "crontab_types.go"), "// +resource:", "//+storageversion\n// +resource:")
	mustRun(t, dir, "generate")
	// v3 from v1: v2 is already marked, so v1 must not be marked again.
	out, err := run(t, dir, "create", "version", "--group", "stable", "--version", "v3", "--kind", "CronTab", "--from", "v1")
	if err != nil {
		t.Fatalf("create version: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")); strings.Contains(string(b), "+storageversion") {
		t.Errorf("v1 was marked +storageversion although v2 carries //+storageversion")
	}
}

// TestMarkersAreTheRecord: the +resource marker, edited by hand, is what
// every command sees after generate, with no other edit: the controller
// wiring, build config's RBAC, create's clash check. PROJECT does not
// repeat it.
func TestMarkersAreTheRecord(t *testing.T) {
	dir := newProject(t)
	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	edit(t, types, "// +resource:path=crontabs,strategy=CronTabStrategy,scope=Namespaced", "// +resource:path=crons,strategy=CronTabStrategy,scope=Cluster,shortNames=ct,categories=all")
	mustRun(t, dir, "generate")
	if b, _ := os.ReadFile(filepath.Join(dir, "PROJECT")); strings.Contains(string(b), "plural:") || strings.Contains(string(b), "scope:") {
		t.Errorf("PROJECT repeats what the markers say:\n%s", b)
	}
	wiring, _ := os.ReadFile(filepath.Join(dir, "pkg", "controller", "crontab", "zz_generated.controller.go"))
	if !bytes.Contains(wiring, []byte("Crons(")) || bytes.Contains(wiring, []byte("CronTabs(")) {
		t.Errorf("the controller wiring does not follow the marker's plural:\n%s", wiring)
	}
	mustRun(t, dir, "build", "config", "--image", "registry.example.com/crontab:v0.1.0")
	rbac, _ := os.ReadFile(filepath.Join(dir, "config", "rbac.yaml"))
	if !bytes.Contains(rbac, []byte("- crons")) || bytes.Contains(rbac, []byte("crontabs")) {
		t.Errorf("build config's RBAC does not follow the marker's plural:\n%s", rbac)
	}
	_, err := run(t, dir, "create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "Cron")
	if err == nil || !strings.Contains(err.Error(), `its plural "crons" clashes with the plural of kind CronTab`) {
		t.Errorf("create's clash check should see the marker's plural, got %v", err)
	}
}

// TestCreateWithOtherFlagsIsAnError: create for an existing kind with flags
// that differ from its markers names each flag and how to change it, and
// writes nothing; the same flags stay a no-op.
func TestCreateWithOtherFlagsIsAnError(t *testing.T) {
	dir := newProject(t)
	create := []string{"create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab"}
	before := tree(t, dir)
	_, err := run(t, dir, append(create, "--non-namespaced", "--resource", "crons", "--with-scale-subresource", "--controller=true")...)
	if err == nil {
		t.Fatal("create with other flags for an existing kind succeeded")
	}
	for _, want := range []string{
		"stable/v1 CronTab exists, and create does not change it",
		"--non-namespaced true: stable/v1 CronTab has false; to change the scope, edit the +resource (or +kubebuilder:resource) marker in pkg/apis/stable/v1/crontab_types.go",
		"--resource crons: stable/v1 CronTab has crontabs; to rename the resource",
		"--with-scale-subresource true: stable/v1 CronTab has false; add or remove +subresource:scale",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "--controller") {
		t.Errorf("--controller=true is what the kind has, yet named:\n%v", err)
	}
	after := tree(t, dir)
	for path, content := range before {
		if after[path] != content {
			t.Errorf("%s changed by a refused create", path)
		}
	}
	if len(after) != len(before) {
		t.Errorf("a refused create wrote files")
	}
	if out, err := run(t, dir, append(create, "--with-status-subresource", "--controller")...); err != nil || !strings.Contains(out, "Nothing to do") {
		t.Errorf("the same flags: want a no-op, got %v\n%s", err, out)
	}
}

// TestStateDirIsPrivate: the project's .apiserver-boot/ is its owner's only.
func TestStateDirIsPrivate(t *testing.T) {
	dir := newProject(t)
	for path, want := range map[string]os.FileMode{".apiserver-boot": 0o700, ".apiserver-boot/generate-cache.json": 0o600} {
		if st, err := os.Stat(filepath.Join(dir, path)); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v, want mode %04o", path, err, want)
		}
	}
}

// TestQuietScaffolding: with --quiet, init and create print nothing when all
// goes well (no file list, no hints), and still say what they skipped.
func TestQuietScaffolding(t *testing.T) {
	dir := t.TempDir()
	create := []string{"create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab", "-q"}
	for _, args := range [][]string{
		{"init", "repo", "--module", "example.com/crontab", "--domain", "example.com", "--quiet"},
		create,
	} {
		out, err := run(t, dir, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if out != "" {
			t.Errorf("%v printed with --quiet:\n%s", args, out)
		}
	}
	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	orig, _ := os.ReadFile(types)
	os.WriteFile(types, append(orig, "\n// edited by the user\n"...), 0o644)
	out, err := run(t, dir, create...)
	if err != nil || !strings.Contains(out, "skipped pkg/apis/stable/v1/crontab_types.go") || strings.Contains(out, "wrote ") {
		t.Fatalf("a quiet create should still say what it skipped, and only that: %v\n%s", err, out)
	}
}
