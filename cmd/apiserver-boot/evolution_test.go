package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/generators/protobuf"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// edit rewrites a project file, failing the test if old is not in it.
func edit(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := run(t, dir, args...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return out
}

// record reads the field numbers of a version package as "Type.key=n" lines
// and "Type.reserved=n(key)".
func record(t *testing.T, dir, version string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "pkg", "apis", "stable", version, protobuf.FieldNumbersFile))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	typ, section := "", ""
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "#") || l == "":
		case !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "-"):
			typ = unquote(t, strings.TrimSuffix(l, ":"))
		case strings.TrimSpace(l) == "fields:" || strings.TrimSpace(l) == "reserved:":
			section = strings.TrimSuffix(strings.TrimSpace(l), ":")
		case section == "fields":
			key, rest, _ := strings.Cut(strings.TrimSpace(l), ": ")
			num := strings.TrimSuffix(strings.SplitN(strings.TrimPrefix(rest, "{number: "), ",", 2)[0], "}")
			out[typ+"."+unquote(t, key)] = num
		case section == "reserved":
			f := strings.Fields(strings.NewReplacer("{", "", "}", "", ",", "").Replace(strings.TrimPrefix(strings.TrimSpace(l), "- ")))
			// number: N name: "K" wire: W
			out[typ+".reserved."+unquote(t, f[3])] = f[1]
		}
	}
	return out
}

func unquote(t *testing.T, s string) string {
	t.Helper()
	u, err := strconv.Unquote(s)
	if err != nil {
		t.Fatalf("record key %s is not quoted: %v", s, err)
	}
	return u
}

func wantNumbers(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: number %q, want %q (record: %v)", k, got[k], v, got)
		}
	}
}

// TestFieldNumbersSurviveEdits: whatever happens to the Go declarations, a
// field keeps its number; new fields get new numbers; removed ones stay
// reserved and are never given to another field.
func TestFieldNumbersSurviveEdits(t *testing.T) {
	dir := newProject(t)
	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	wantNumbers(t, record(t, dir, "v1"), map[string]string{
		"CronTab.metadata": "1", "CronTab.spec": "2", "CronTab.status": "3",
		"CronTabList.metadata": "1", "CronTabList.items": "2",
		"CronTabSpec.replicas":   "1",
		"CronTabStatus.replicas": "1", "CronTabStatus.observedGeneration": "2", "CronTabStatus.conditions": "3",
	})

	// Insert first in spec and status, rename a Go field under its JSON name,
	// and move the spec into a file of its own.
	edit(t, types, "type CronTabSpec struct {\n", "type CronTabSpec struct {\n\tImage string `json:\"image,omitempty\"`\n")
	edit(t, types, "type CronTabStatus struct {\n", "type CronTabStatus struct {\n\tPhase string `json:\"phase,omitempty\"`\n")
	edit(t, types, "\tReplicas int32 `json:\"replicas,omitempty\"`\n}\n\n// CronTabStatus", "\tDesired int32 `json:\"replicas,omitempty\"`\n}\n\n// CronTabStatus")
	b, _ := os.ReadFile(filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_hooks.go"))
	os.WriteFile(filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_hooks.go"), bytes.ReplaceAll(b, []byte("obj.Spec.Replicas"), []byte("obj.Spec.Desired")), 0o644)
	src, _ := os.ReadFile(types)
	start := strings.Index(string(src), "// CronTabSpec is")
	end := strings.Index(string(src), "// CronTabStatus is")
	spec := string(src[start:end])
	os.WriteFile(types, []byte(string(src[:start])+string(src[end:])), 0o644)
	os.WriteFile(filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontabspec_types.go"), []byte("package v1\n\n"+spec), 0o644)
	mustRun(t, dir, "generate")
	wantNumbers(t, record(t, dir, "v1"), map[string]string{
		"CronTabSpec.replicas": "1", "CronTabSpec.image": "2",
		"CronTabStatus.replicas": "1", "CronTabStatus.observedGeneration": "2", "CronTabStatus.conditions": "3", "CronTabStatus.phase": "4",
	})

	// Remove a field and add another: the new one does not get the removed
	// one's number, which stays reserved. Reordering changes nothing.
	edit(t, types, "\tObservedGeneration int64 `json:\"observedGeneration,omitempty\"`\n", "")
	edit(t, types, "type CronTabStatus struct {\n", "type CronTabStatus struct {\n\tMessage string `json:\"message,omitempty\"`\n")
	mustRun(t, dir, "generate")
	got := record(t, dir, "v1")
	wantNumbers(t, got, map[string]string{
		"CronTabStatus.replicas": "1", "CronTabStatus.reserved.observedGeneration": "2", "CronTabStatus.conditions": "3",
		"CronTabStatus.phase": "4", "CronTabStatus.message": "5",
	})
	if _, ok := got["CronTabStatus.observedGeneration"]; ok {
		t.Errorf("a removed field is still recorded as a field: %v", got)
	}

	// Declared again with the same encoding, it gets its number back: objects
	// stored before its removal hold it there.
	edit(t, types, "\tMessage string", "\tObservedGeneration int64 `json:\"observedGeneration,omitempty\"`\n\tMessage string")
	mustRun(t, dir, "generate")
	wantNumbers(t, record(t, dir, "v1"), map[string]string{"CronTabStatus.observedGeneration": "2", "CronTabStatus.message": "5"})

	// A renamed struct keeps its numbers.
	for _, f := range []string{types, filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontabspec_types.go")} {
		b, _ := os.ReadFile(f)
		os.WriteFile(f, bytes.ReplaceAll(b, []byte("CronTabSpec"), []byte("CronJobSpec")), 0o644)
	}
	mustRun(t, dir, "generate")
	wantNumbers(t, record(t, dir, "v1"), map[string]string{"CronJobSpec.replicas": "1", "CronJobSpec.image": "2", "CronTab.spec": "2"})

	// The generated code writes the recorded numbers.
	pb, _ := os.ReadFile(filepath.Join(dir, "pkg", "apis", "stable", "v1", "zz_generated.protobuf.go"))
	for _, want := range []string{"i = zzProtoPutTag(dAtA, i, 1, protowire.VarintType)", "i = zzProtoPutTag(dAtA, i, 5, protowire.BytesType)"} {
		if !bytes.Contains(pb, []byte(want)) {
			t.Errorf("zz_generated.protobuf.go lacks %q", want)
		}
	}
}

// TestFirstRunRecordsDeclarationOrder: a project generated before the record
// existed numbered fields by declaration order (or protobuf tags); its first
// run records those numbers as they are, and the encoding does not change.
func TestFirstRunRecordsDeclarationOrder(t *testing.T) {
	dir := newProject(t)
	v1 := filepath.Join(dir, "pkg", "apis", "stable", "v1")
	// Types with no record and no generated protobuf code yet.
	os.Remove(filepath.Join(v1, protobuf.FieldNumbersFile))
	os.Remove(filepath.Join(v1, "zz_generated.protobuf.go"))
	edit(t, filepath.Join(v1, "crontab_types.go"), "type CronTabSpec struct {\n", "type CronTabSpec struct {\n\tImage string `json:\"image,omitempty\"`\n\tCommand string `json:\"command,omitempty\" protobuf:\"bytes,7,opt,name=command\"`\n\tArgs []string `json:\"args,omitempty\"`\n")
	mustRun(t, dir, "generate", "--force")
	wantNumbers(t, record(t, dir, "v1"), map[string]string{"CronTabSpec.image": "1", "CronTabSpec.command": "7", "CronTabSpec.args": "8", "CronTabSpec.replicas": "9"})
	pbPath := filepath.Join(v1, "zz_generated.protobuf.go")
	before, _ := os.ReadFile(pbPath)
	// Numbered from the record now, the encoding is the same.
	mustRun(t, dir, "generate", "--force")
	if after, _ := os.ReadFile(pbPath); !bytes.Equal(before, after) {
		t.Errorf("numbering from the record changed the encoding")
	}
}

// TestFirstRunKeepsTheGeneratedNumbers: a project upgraded from before the
// record whose types were edited since its protobuf code was generated: the
// first run takes the numbers that code (which wrote the stored objects)
// uses, not the new declaration order.
func TestFirstRunKeepsTheGeneratedNumbers(t *testing.T) {
	dir := newProject(t)
	v1 := filepath.Join(dir, "pkg", "apis", "stable", "v1")
	os.Remove(filepath.Join(v1, protobuf.FieldNumbersFile))
	types := filepath.Join(v1, "crontab_types.go")
	edit(t, types, "type CronTabStatus struct {\n", "type CronTabStatus struct {\n\tMessage string `json:\"message,omitempty\"`\n")
	edit(t, types, "\tObservedGeneration int64 `json:\"observedGeneration,omitempty\"`\n", "")
	mustRun(t, dir, "generate")
	got := record(t, dir, "v1")
	wantNumbers(t, got, map[string]string{
		"CronTabStatus.replicas": "1", "CronTabStatus.conditions": "3", "CronTabStatus.message": "4", "CronTabStatus.reserved.ObservedGeneration": "2",
	})
}

// TestFieldNumberErrors: what would make stored objects unreadable, or put
// values in the wrong field, stops generate with the file:line and the way
// out, and writes nothing.
func TestFieldNumberErrors(t *testing.T) {
	dir := newProject(t)
	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	edit(t, types, "type CronTabSpec struct {\n", "type CronTabSpec struct {\n\tImage string `json:\"image,omitempty\"`\n\tOld string `json:\"old,omitempty\"`\n\tCommon `json:\",inline\"`\n")
	edit(t, types, "// CronTabStatus is", "type Common struct {\n\tZone string `json:\"zone,omitempty\"`\n}\n\n// CronTabStatus is")
	mustRun(t, dir, "generate")
	edit(t, types, "\tOld string `json:\"old,omitempty\"`\n", "")
	mustRun(t, dir, "generate") // old: 3, reserved
	orig, _ := os.ReadFile(types)
	before := projectFiles(t, dir)
	image := "\tImage string `json:\"image,omitempty\"`\n"
	for _, c := range []struct {
		name  string
		edits []string // old, new, ...
		want  []string
	}{
		{"tag differs from the record", []string{image, "\tImage string `json:\"image,omitempty\" protobuf:\"bytes,5,opt,name=image\"`\n"},
			[]string{"pkg/apis/stable/v1/crontab_types.go:38: CronTabSpec.Image has protobuf tag number 5", "records 2 for \"image\""}},
		{"tag takes a reserved number", []string{image, image + "\tNew string `json:\"new,omitempty\" protobuf:\"bytes,3,opt,name=new\"`\n"},
			[]string{"crontab_types.go:39: CronTabSpec.New has protobuf tag number 3", "reserved (was old)"}},
		{"two tags with one number", []string{image, image + "\tA string `json:\"a,omitempty\" protobuf:\"bytes,9,opt,name=a\"`\n\tB string `json:\"b,omitempty\" protobuf:\"bytes,9,opt,name=b\"`\n"},
			[]string{"crontab_types.go:40: fields CronTabSpec.B and CronTabSpec.A (pkg/apis/stable/v1/crontab_types.go:39) both have protobuf number 9"}},
		{"wire type changes", []string{image, "\tImage int64 `json:\"image,omitempty\"`\n"},
			[]string{"crontab_types.go:38: CronTabSpec.Image (JSON \"image\") is now encoded as varint", "hold its field 2 as bytes"}},
		{"moved into an inlined struct", []string{image, "", "type Common struct {\n", "type Common struct {\n" + image},
			[]string{"crontab_types.go:38: CronTabSpec.image moved into the embedded struct Common", "would lose its value"}},
		{"moved out of an inlined struct", []string{"\tZone string `json:\"zone,omitempty\"`\n", "", image, image + "\tZone string `json:\"zone,omitempty\"`\n"},
			[]string{"crontab_types.go:39: CronTabSpec.zone moved out of the embedded struct Common", "would lose its value"}},
		{"a field protobuf cannot carry", []string{image, image + "\tEnv map[string][]string `json:\"env,omitempty\"`\n"},
			[]string{"CronTab cannot keep its protobuf encoding", "CronTabSpec.Env has type map[string][]string", "stored as protobuf"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			writeEdited(t, types, orig, c.edits)
			defer os.WriteFile(types, orig, 0o644)
			out, err := run(t, dir, "generate")
			if err == nil {
				t.Fatalf("generate succeeded:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			after := projectFiles(t, dir)
			for path, content := range before {
				if !strings.HasSuffix(path, "crontab_types.go") && !bytes.Equal(after[path], content) {
					t.Errorf("%s changed by a failed generate", path)
				}
			}
		})
	}
}

// recordRelease writes the API description of release as `api snapshot`
// does (its fixtures need the project's test binary: the e2e tier runs it).
func recordRelease(t *testing.T, dir, release string) {
	t.Helper()
	p, err := project.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	api, err := loadModel(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	if api.Header, err = project.Boilerplate(dir); err != nil {
		t.Fatal(err)
	}
	snapshot := filepath.Join(dir, filepath.FromSlash(generators.SnapshotsDir), release)
	if _, err := generators.Run(api, generators.Options{SnapshotDir: snapshot}); err != nil {
		t.Fatal(err)
	}
}

// TestBreakingChangesAgainstRelease: generate compares the API with the
// latest recorded release and names every breaking change; an accept marker
// lets one through on purpose.
func TestBreakingChangesAgainstRelease(t *testing.T) {
	dir := newProject(t)
	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	edit(t, types, "type CronTabSpec struct {\n", "type CronTabSpec struct {\n\tImage string `json:\"image,omitempty\"`\n\tSchedule string `json:\"schedule,omitempty\"`\n")
	mustRun(t, dir, "generate")
	recordRelease(t, dir, "v0.1.0")
	if out, err := run(t, dir, "api", "snapshot", "v0.1.0"); err == nil || !strings.Contains(err.Error(), "already recorded") {
		t.Fatalf("a recorded release must not be overwritten: %v\n%s", err, out)
	}
	if out, err := run(t, dir, "api", "snapshot", "0.2"); err == nil || !strings.Contains(err.Error(), "semantic version") {
		t.Fatalf("a release name that is not a version: %v\n%s", err, out)
	}

	// Compatible: a new optional field, a Go rename, a new optional nested struct.
	edit(t, types, "\tSchedule string", "\tSuspend *bool `json:\"suspend,omitempty\"`\n\tTemplate *Template `json:\"template,omitempty\"`\n\tWhen string")
	edit(t, types, "// CronTabStatus is", "type Template struct {\n\tName string `json:\"name\"`\n}\n\n// CronTabStatus is")
	mustRun(t, dir, "generate")

	orig, _ := os.ReadFile(types)
	for _, c := range []struct{ name, old, new, want string }{
		{"removed", "\tImage string `json:\"image,omitempty\"`\n", "", "stable.example.com v1/CronTab.spec.image: JSON field removed or renamed"},
		{"renamed", "`json:\"image,omitempty\"`", "`json:\"picture,omitempty\"`", "v1/CronTab.spec.image: JSON field removed or renamed"},
		{"retyped", "Image string `json:\"image,omitempty\"`", "Image []string `json:\"image,omitempty\"`", "v1/CronTab.spec.image: type changed from string to []string"},
		{"required added", "\tImage string", "\tCommand string `json:\"command\"`\n\tImage string", "v1/CronTab.spec.command: required field added"},
		{"made required", "`json:\"image,omitempty\"`", "`json:\"image\"`", "v1/CronTab.spec.image: field made required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.WriteFile(types, []byte(strings.Replace(string(orig), c.old, c.new, 1)), 0o644)
			defer os.WriteFile(types, orig, 0o644)
			_, err := run(t, dir, "generate")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "v0.1.0") {
				t.Fatalf("want an error naming %q and the release, got %v", c.want, err)
			}
			if !strings.Contains(err.Error(), "add to pkg/apis/stable/doc.go: // +apiserver-boot:accept-breaking-change=") {
				t.Errorf("the error does not say how to accept the change: %v", err)
			}
		})
	}

	// Accepted on purpose: a warning naming the marker's line.
	edit(t, types, "\tImage string `json:\"image,omitempty\"`\n", "")
	doc := filepath.Join(dir, "pkg", "apis", "stable", "doc.go")
	d, _ := os.ReadFile(doc)
	os.WriteFile(doc, append(d, []byte("\n// Image moved to the pod template; no release stored it.\n// +apiserver-boot:accept-breaking-change=v1/CronTab.spec.image\n")...), 0o644)
	out := mustRun(t, dir, "generate")
	if !strings.Contains(out, "pkg/apis/stable/doc.go:") || !strings.Contains(out, "accepted breaking change since v0.1.0: stable.example.com v1/CronTab.spec.image") {
		t.Errorf("an accepted change should be a warning naming it:\n%s", out)
	}
	// A newer release makes the marker stale: generate says so.
	recordRelease(t, dir, "v0.2.0")
	out = mustRun(t, dir, "generate", "--force")
	if !strings.Contains(out, "accepts nothing against v0.2.0: remove it") {
		t.Errorf("a stale accept marker should be reported:\n%s", out)
	}
}

// TestDroppedStorageVersion: a version that may hold stored objects cannot
// be dropped silently.
func TestDroppedStorageVersion(t *testing.T) {
	dir := newProject(t)
	mustRun(t, dir, "create", "version", "--group", "stable", "--version", "v2", "--kind", "CronTab", "--from", "v1")
	recordRelease(t, dir, "v0.1.0")
	// The storage version moves to v2 and v1 is deleted.
	edit(t, filepath.Join(dir, "pkg", "apis", "stable", "v2", "crontab_types.go"), "// +resource:", "// +storageversion\n// +resource:")
	if err := os.RemoveAll(filepath.Join(dir, "pkg", "apis", "stable", "v1")); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, dir, "generate")
	if err == nil || !strings.Contains(err.Error(), "stable.example.com v1: version dropped, but etcd may still hold CronTab objects in it") {
		t.Fatalf("want an error naming the dropped storage version, got %v\n%s", err, out)
	}
}

// renameAll replaces every old with new in a file.
func renameAll(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, bytes.ReplaceAll(b, []byte(old), []byte(new)), 0o644)
}

// TestFieldNumbersOfStructsAcrossEdits: structs renamed (also an inlined one,
// also renamed back), and field names YAML would read as other things, keep
// their numbers; a field moved out of an inlined struct shared by two
// parents, or switched to another struct with another numbering, is refused.
func TestFieldNumbersOfStructsAcrossEdits(t *testing.T) {
	dir := newProject(t)
	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	edit(t, types, "type CronTabSpec struct {\n", "type CronTabSpec struct {\n\tCommon `json:\",inline\"`\n\tY int32 `json:\"y,omitempty\"`\n\tN int32 `json:\"N,omitempty\"`\n\tTemplate *A `json:\"template,omitempty\"`\n")
	edit(t, types, "type CronTabStatus struct {\n", "type CronTabStatus struct {\n\tCommon `json:\",inline\"`\n\tOther *B `json:\"other,omitempty\"`\n")
	edit(t, types, "// CronTabStatus is", "type Common struct {\n\tZone string `json:\"zone,omitempty\"`\n\tRegion string `json:\"region,omitempty\"`\n}\n\n"+
		"type A struct {\n\tX string `json:\"x,omitempty\"`\n\tY string `json:\"y2,omitempty\"`\n}\n\ntype B struct {\n\tY string `json:\"y2,omitempty\"`\n\tX string `json:\"x,omitempty\"`\n}\n\n// CronTabStatus is")
	mustRun(t, dir, "generate")
	edit(t, types, "\tZone string `json:\"zone,omitempty\"`\n", "")
	mustRun(t, dir, "generate", "--force")
	first := record(t, dir, "v1")
	wantNumbers(t, first, map[string]string{"CronTabSpec.replicas": "1", "CronTabSpec.inline:Common": "2", "CronTabSpec.y": "3", "CronTabSpec.N": "4",
		"CronTabStatus.inline:Common": "4", "Common.region": "2", "Common.reserved.zone": "1"})

	// An inlined struct renamed keeps its place and its numbers.
	renameAll(t, types, "Common", "Shared")
	mustRun(t, dir, "generate")
	got := record(t, dir, "v1")
	wantNumbers(t, got, map[string]string{"CronTabSpec.inline:Shared": "2", "CronTabStatus.inline:Shared": "4", "Shared.region": "2", "Shared.reserved.zone": "1"})
	if _, stale := got["Common.region"]; stale {
		t.Errorf("the record of the renamed-away struct stayed: %v", got)
	}

	// Renamed away and back, with edits in between: the edits hold.
	renameAll(t, types, "CronTabSpec", "JobSpec")
	mustRun(t, dir, "generate")
	edit(t, types, "type JobSpec struct {\n", "type JobSpec struct {\n\tP string `json:\"p,omitempty\"`\n\tQ string `json:\"q,omitempty\"`\n")
	mustRun(t, dir, "generate")
	edit(t, types, "\tP string `json:\"p,omitempty\"`\n", "")
	mustRun(t, dir, "generate")
	renameAll(t, types, "JobSpec", "CronTabSpec")
	mustRun(t, dir, "generate")
	wantNumbers(t, record(t, dir, "v1"), map[string]string{"CronTabSpec.replicas": "1", "CronTabSpec.y": "3", "CronTabSpec.reserved.p": "6", "CronTabSpec.q": "7"})

	orig, _ := os.ReadFile(types)
	for _, c := range []struct {
		name  string
		edits []string
		want  string
	}{
		{"moved out of an inlined struct two parents share", []string{"\tRegion string `json:\"region,omitempty\"`\n", "", "type CronTabStatus struct {\n", "type CronTabStatus struct {\n\tRegion string `json:\"region,omitempty\"`\n"},
			"CronTabStatus.region moved out of the embedded struct Shared"},
		{"another struct with another numbering", []string{"\tTemplate *A", "\tTemplate *B"},
			"CronTabSpec.Template now holds B instead of A, with another numbering: objects in etcd hold A.x as field 1 (bytes), but B numbers it 2 (bytes)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			writeEdited(t, types, orig, c.edits)
			defer os.WriteFile(types, orig, 0o644)
			if _, err := run(t, dir, "generate"); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
		})
	}
}

// TestFirstRunAsksAboutRenamedFields: upgraded from before the record, with a
// Go field renamed since the protobuf code was generated: generate cannot
// tell a rename from a new field, so it asks; a tag answers.
func TestFirstRunAsksAboutRenamedFields(t *testing.T) {
	dir := newProject(t)
	v1 := filepath.Join(dir, "pkg", "apis", "stable", "v1")
	os.Remove(filepath.Join(v1, protobuf.FieldNumbersFile))
	types := filepath.Join(v1, "crontab_types.go")
	edit(t, types, "\tObservedGeneration int64 `json:\"observedGeneration,omitempty\"`", "\tGen int64 `json:\"observedGeneration,omitempty\"`")
	_, err := run(t, dir, "generate")
	if err == nil || !strings.Contains(err.Error(), "CronTabStatus.Gen is new, and CronTabStatus.ObservedGeneration") || !strings.Contains(err.Error(), "give it the tag `protobuf:\"bytes,2,opt,name=observedGeneration\"`") {
		t.Fatalf("want a question naming both fields and the tag that answers it, got %v", err)
	}
	if _, err := os.Stat(filepath.Join(v1, protobuf.FieldNumbersFile)); !os.IsNotExist(err) {
		t.Fatalf("a refused first run wrote the record: %v", err)
	}
	edit(t, types, "`json:\"observedGeneration,omitempty\"`", "`json:\"observedGeneration,omitempty\" protobuf:\"varint,2,opt,name=observedGeneration\"`")
	mustRun(t, dir, "generate")
	wantNumbers(t, record(t, dir, "v1"), map[string]string{"CronTabStatus.observedGeneration": "2", "CronTabStatus.replicas": "1", "CronTabStatus.conditions": "3"})

	// A kind whose stored objects are protobuf (by the code generated before)
	// never falls back to JSON.
	dir = newProject(t)
	v1 = filepath.Join(dir, "pkg", "apis", "stable", "v1")
	os.Remove(filepath.Join(v1, protobuf.FieldNumbersFile))
	edit(t, filepath.Join(v1, "crontab_types.go"), "type CronTabSpec struct {\n", "type CronTabSpec struct {\n\tEnv map[string][]string `json:\"env,omitempty\"`\n")
	if _, err := run(t, dir, "generate"); err == nil || !strings.Contains(err.Error(), "CronTab cannot keep its protobuf encoding") {
		t.Fatalf("want generate to refuse losing protobuf, got %v", err)
	}
}

// writeEdited writes orig to path with edits (old, new, old, new...) applied.
func writeEdited(t *testing.T, path string, orig []byte, edits []string) {
	t.Helper()
	src := string(orig)
	for i := 0; i < len(edits); i += 2 {
		if !strings.Contains(src, edits[i]) {
			t.Fatalf("%q not in %s", edits[i], path)
		}
		src = strings.Replace(src, edits[i], edits[i+1], 1)
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}
