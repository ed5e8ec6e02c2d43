//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

// preRecordCommit is the last apiserver-boot before field numbers were
// recorded: the projects it generated number protobuf fields by declaration
// order, and their etcd data must survive the upgrade.
const preRecordCommit = "e6412d4e641e081a44b4d082afeab801a48eed96"

// evolution is a project whose API changes between builds, served on one
// external etcd so that every build reads what the earlier ones stored.
type evolution struct {
	t    *testing.T
	dir  string
	etcd *etcdProcess
	// want holds, per "<resource>/<name>", the spec and status every build must read back.
	want map[string]map[string]any
}

// cronTabTypes is the CronTab a user evolves, stage by stage:
// 0 as first written; 2 a field inserted first in spec and in status;
// 3 spec.paused removed; 4 Go field Image renamed ContainerImage (JSON image);
// 5 a new optional nested struct; 7 spec.args moved into an inlined struct.
func cronTabTypes(stage int) string {
	var spec, status strings.Builder
	if stage >= 2 {
		spec.WriteString("\tPriority int64 `json:\"priority,omitempty\"`\n")
		status.WriteString("\tMessage string `json:\"message,omitempty\"`\n")
	}
	spec.WriteString("\tReplicas int32 `json:\"replicas,omitempty\"`\n")
	if stage >= 4 {
		spec.WriteString("\tContainerImage string `json:\"image,omitempty\"`\n")
	} else {
		spec.WriteString("\tImage string `json:\"image,omitempty\"`\n")
	}
	extra := ""
	if stage >= 7 {
		spec.WriteString("\tCommand `json:\",inline\"`\n")
		extra = "type Command struct {\n\tArgs []string `json:\"args,omitempty\"`\n}\n\n"
	} else {
		spec.WriteString("\tArgs []string `json:\"args,omitempty\"`\n")
	}
	spec.WriteString("\tLabels map[string]string `json:\"labels,omitempty\"`\n")
	if stage < 3 {
		spec.WriteString("\tPaused bool `json:\"paused,omitempty\"`\n")
	}
	spec.WriteString("\tSchedule Schedule `json:\"schedule,omitempty\"`\n")
	if stage >= 5 {
		spec.WriteString("\tTemplate *Template `json:\"template,omitempty\"`\n")
		extra += "type Template struct {\n\tName string `json:\"name,omitempty\"`\n\tPorts []int32 `json:\"ports,omitempty\"`\n}\n\n"
	}
	status.WriteString("\tReplicas int32 `json:\"replicas,omitempty\"`\n\tObservedGeneration int64 `json:\"observedGeneration,omitempty\"`\n" +
		"\tConditions []metav1.Condition `json:\"conditions,omitempty\"`\n\tLastRun *metav1.Time `json:\"lastRun,omitempty\"`\n")
	return `package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CronTab runs a job on a schedule.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +resource:path=crontabs,strategy=CronTabStrategy,scope=Namespaced
// +subresource:status
type CronTab struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Spec   CronTabSpec   ` + "`json:\"spec,omitempty\"`" + `
	Status CronTabStatus ` + "`json:\"status,omitempty\"`" + `
}

type CronTabSpec struct {
` + spec.String() + `}

type Schedule struct {
	Cron     string ` + "`json:\"cron,omitempty\"`" + `
	TimeZone string ` + "`json:\"timeZone,omitempty\"`" + `
}

` + extra + `type CronTabStatus struct {
` + status.String() + `}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type CronTabList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\" protobuf:\"bytes,1,opt,name=metadata\"`" + `

	Items []CronTab ` + "`json:\"items\" protobuf:\"bytes,2,rep,name=items\"`" + `
}
`
}

// noteTypes is a kind stored as JSON while a field has no protobuf encoding
// (stage < 6), and as protobuf once that field is gone.
func noteTypes(stage int) string {
	extra := ""
	if stage < 6 {
		extra = "\tExtra map[string][]string `json:\"extra,omitempty\"`\n"
	}
	return `package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +resource:path=notes,strategy=NoteStrategy,scope=Namespaced
// +subresource:status
type Note struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Spec   NoteSpec   ` + "`json:\"spec,omitempty\"`" + `
	Status NoteStatus ` + "`json:\"status,omitempty\"`" + `
}

type NoteSpec struct {
	Replicas int32  ` + "`json:\"replicas,omitempty\"`" + `
	Text     string ` + "`json:\"text,omitempty\"`" + `
` + extra + `}

type NoteStatus struct {
	Replicas int32 ` + "`json:\"replicas,omitempty\"`" + `
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type NoteList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\" protobuf:\"bytes,1,opt,name=metadata\"`" + `

	Items []Note ` + "`json:\"items\" protobuf:\"bytes,2,rep,name=items\"`" + `
}
`
}

func (e *evolution) writeTypes(stage int) {
	e.t.Helper()
	v1 := filepath.Join(e.dir, "pkg", "apis", "stable", "v1")
	for file, src := range map[string]string{"crontab_types.go": cronTabTypes(stage), "note_types.go": noteTypes(stage)} {
		if err := os.WriteFile(filepath.Join(v1, file), []byte(src), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
}

// serve builds the project with cliBin's run local and starts it on the etcd.
func (e *evolution) serve(cliBin string) *harness.Process {
	e.t.Helper()
	p := harness.Start(e.t, e.dir, cliBin, "run", "local", "--secure-port", fmt.Sprint(harness.FreePort(e.t)), "--etcd-servers", e.etcd.url, "--controller-manager=false")
	p.WaitFor(e.t, "Ready.", 5*time.Minute)
	return p
}

func (e *evolution) kubectl(stdin string, args ...string) string {
	e.t.Helper()
	r := kubectlWith(filepath.Join(e.dir, "kubeconfig"), stdin, args...)
	if r.err != nil {
		e.t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), r.err, r.stdout, r.stderr)
	}
	return r.stdout
}

// create creates an object with spec and status, and expects it back.
func (e *evolution) create(resource, kind, name string, spec, status map[string]any) {
	e.t.Helper()
	obj, _ := json.Marshal(map[string]any{"apiVersion": "stable.example.com/v1", "kind": kind, "metadata": map[string]any{"name": name, "namespace": "default"}, "spec": spec})
	e.kubectl(string(obj), "create", "-f", "-")
	if status != nil {
		patch, _ := json.Marshal(map[string]any{"status": status})
		e.kubectl("", "patch", resource, name, "--subresource=status", "--type=merge", "-p", string(patch))
	}
	want := map[string]any{"spec": spec}
	if status != nil {
		want["status"] = status
	}
	e.want[resource+"/"+name] = normalize(e.t, want)
}

func normalize(t *testing.T, v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// check reads every object through LIST and GET and compares spec and status
// with what was written.
func (e *evolution) check(step string) {
	e.t.Helper()
	for _, resource := range []string{"crontabs", "notes"} {
		var list struct {
			Items []map[string]any `json:"items"`
		}
		if err := json.Unmarshal([]byte(e.kubectl("", "get", resource, "-o", "json")), &list); err != nil {
			e.t.Fatal(err)
		}
		got := map[string]bool{}
		for _, item := range list.Items {
			name := item["metadata"].(map[string]any)["name"].(string)
			got[name] = true
			e.compare(step+": LIST", resource+"/"+name, item)
			var one map[string]any
			if err := json.Unmarshal([]byte(e.kubectl("", "get", resource, name, "-o", "json")), &one); err != nil {
				e.t.Fatal(err)
			}
			e.compare(step+": GET", resource+"/"+name, one)
		}
		for key := range e.want {
			if r, name, _ := strings.Cut(key, "/"); r == resource && !got[name] {
				e.t.Errorf("%s: %s is missing from the LIST", step, key)
			}
		}
	}
}

func (e *evolution) compare(step, key string, obj map[string]any) {
	e.t.Helper()
	want, ok := e.want[key]
	if !ok {
		e.t.Errorf("%s: unexpected object %s", step, key)
		return
	}
	for _, part := range []string{"spec", "status"} {
		w, g := want[part], obj[part]
		if w == nil {
			w = map[string]any{}
		}
		if g == nil {
			g = map[string]any{}
		}
		if !reflect.DeepEqual(w, g) {
			wb, _ := json.Marshal(w)
			gb, _ := json.Marshal(g)
			e.t.Errorf("%s: %s.%s reads back\n  %s\nwant\n  %s", step, key, part, gb, wb)
		}
	}
}

// forget drops a field from every expectation: it was removed from the API.
func (e *evolution) forget(resource, part, field string) {
	for key, w := range e.want {
		if strings.HasPrefix(key, resource+"/") {
			if m, ok := w[part].(map[string]any); ok {
				delete(m, field)
			}
		}
	}
}

// TestAPIEvolution: objects stored by one build read back field for field
// after each edit of the types, the server rebuilt and restarted on the same
// etcd data: an upgrade from an apiserver-boot that numbered protobuf fields
// by declaration order, fields inserted first, a field removed, a Go field
// renamed, a new nested struct, a kind moving from JSON to protobuf storage.
// A field moved into an inlined struct is refused by generate. The release
// recorded on the way (api snapshot) is checked by the generated
// TestCompatibility.
func TestAPIEvolution(t *testing.T) {
	tmp := t.TempDir()
	// The apiserver-boot of before, from this repository's history.
	oldSrc := filepath.Join(tmp, "old-apiserver-boot")
	os.MkdirAll(oldSrc, 0o755)
	if out, err := harness.Sh(repoRoot, "sh", "-c", fmt.Sprintf("git archive --format=tar %s | tar -x -C %s", preRecordCommit, oldSrc)); err != nil {
		t.Fatalf("extracting apiserver-boot %s from the repository's history (a full clone is needed): %v\n%s", preRecordCommit, err, out)
	}
	oldCLI := filepath.Join(tmp, "apiserver-boot-old")
	if out, err := harness.Sh(oldSrc, "go", "build", "-o", oldCLI, "./cmd/apiserver-boot"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}

	e := &evolution{t: t, dir: filepath.Join(tmp, "evolving"), etcd: startEtcd(t), want: map[string]map[string]any{}}
	defer e.etcd.stop(t)
	os.MkdirAll(e.dir, 0o755)
	for _, step := range [][]string{
		{"go", "mod", "init", "example.com/evolving"},
		{oldCLI, "init", "repo", "--domain", "example.com"},
		{oldCLI, "create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab", "--controller=false"},
		{oldCLI, "create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "Note", "--controller=false"},
	} {
		if out, err := harness.Sh(e.dir, step[0], step[1:]...); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	e.writeTypes(0)
	out, err := harness.Sh(e.dir, oldCLI, "generate")
	if err != nil || !strings.Contains(out, "v1.Note is served without protobuf") {
		t.Fatalf("the old generate should serve Note as JSON: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "pkg", "apis", "stable", "v1", "fieldnumbers.yaml")); err == nil {
		t.Fatal("the old apiserver-boot wrote a field number record")
	}

	// Stage 0: objects stored by the old build.
	cronTab := func(name string, stage int) (map[string]any, map[string]any) {
		spec := map[string]any{"replicas": 3, "image": "busybox:" + name, "args": []string{"-c", name}, "labels": map[string]string{"app": name, "tier": "batch"},
			"schedule": map[string]any{"cron": "*/5 * * * *", "timeZone": "Europe/Paris"}}
		status := map[string]any{"replicas": 2, "observedGeneration": 1, "lastRun": "2026-11-20T10:00:00Z",
			"conditions": []map[string]any{{"type": "Ready", "status": "True", "reason": "Ran", "message": "ran " + name, "lastTransitionTime": "2026-11-20T10:00:00Z"}}}
		if stage < 3 {
			spec["paused"] = true
		}
		if stage >= 2 {
			spec["priority"] = 7
			status["message"] = "hello " + name
		}
		if stage >= 5 {
			spec["template"] = map[string]any{"name": "t-" + name, "ports": []int{80, 443}}
		}
		return spec, status
	}
	server := e.serve(oldCLI)
	for _, name := range []string{"a", "b", "c"} {
		spec, status := cronTab(name, 0)
		e.create("crontabs", "CronTab", name, spec, status)
	}
	e.create("notes", "Note", "n0", map[string]any{"text": "stored as JSON"}, nil)
	// The old build served no namespaces: it took objects in any namespace.
	e.kubectl(`{"apiVersion": "stable.example.com/v1", "kind": "Note", "metadata": {"name": "n-team", "namespace": "team-a"}, "spec": {"text": "in a namespace nobody created"}}`, "create", "-f", "-")
	e.check("stored by the old build")
	if enc, _ := e.etcd.stored(t, "/registry/stable.example.com/crontabs/default/a"); enc != "protobuf" {
		t.Fatalf("the old build stored CronTab as %s, want protobuf", enc)
	}
	if enc, _ := e.etcd.stored(t, "/registry/stable.example.com/notes/default/n0"); enc != "json" {
		t.Fatalf("the old build stored Note as %s, want json", enc)
	}
	server.Stop(t)

	// Upgrade: the project now builds with this apiserver-boot. The first
	// generate records the declaration-order numbers the data was written with.
	if out, err := harness.Sh(e.dir, "go", "mod", "edit", "-replace", "github.com/apiserver-boot/apiserver-boot="+repoRoot); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// What the upgraded framework requires comes in as with any upgrade of a
	// replaced module (docs/versions.md).
	if out, err := harness.Sh(e.dir, "go", "mod", "tidy"); err != nil {
		t.Fatalf("go mod tidy after the upgrade: %v\n%s", err, out)
	}
	if out, err := harness.Sh(e.dir, cli, "generate"); err != nil {
		t.Fatalf("generate after the upgrade: %v\n%s", err, out)
	}
	record, err := os.ReadFile(filepath.Join(e.dir, "pkg", "apis", "stable", "v1", "fieldnumbers.yaml"))
	if err != nil || !strings.Contains(string(record), "    \"replicas\": {number: 1, wire: varint}\n    \"image\": {number: 2, wire: bytes}\n    \"args\": {number: 3, wire: bytes}") {
		t.Fatalf("the first run should record declaration order: %v\n%s", err, record)
	}
	server = e.serve(cli)
	e.check("upgraded")
	// The upgraded build serves namespaces: the one the old build's object
	// is in exists, so the object is listed and new ones join it.
	if out := e.kubectl("", "get", "namespace", "team-a", "-o", "jsonpath={.status.phase}"); out != "Active" {
		t.Errorf("namespace team-a of a stored object after the upgrade: phase %q, want Active", out)
	}
	e.kubectl(`{"apiVersion": "stable.example.com/v1", "kind": "Note", "metadata": {"name": "n-team-2", "namespace": "team-a"}, "spec": {"text": "next to it"}}`, "create", "-f", "-")
	if out := e.kubectl("", "get", "notes", "-n", "team-a", "-o", "name"); out != "note.stable.example.com/n-team\nnote.stable.example.com/n-team-2\n" {
		t.Errorf("notes in team-a after the upgrade: %q", out)
	}
	if r := kubectlWith(filepath.Join(e.dir, "kubeconfig"), `{"apiVersion": "stable.example.com/v1", "kind": "Note", "metadata": {"name": "n", "namespace": "never-created"}, "spec": {"text": "x"}}`, "create", "-f", "-"); r.err == nil || !strings.Contains(r.stderr, `namespaces "never-created" not found`) {
		t.Errorf("create in a namespace that holds nothing and was never created: %v %s, want NotFound", r.err, r.stderr)
	}
	server.Stop(t)

	// Record the release: fixtures and API description.
	if out, err := harness.Sh(e.dir, cli, "api", "snapshot", "v0.1.0"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}

	steps := []struct {
		stage int
		name  string
		// before runs after the types are written, before generate.
		before func()
	}{
		{2, "fields inserted first in spec and status", nil},
		{3, "spec.paused removed", func() {
			// Against v0.1.0 this is a breaking change: refused, then accepted.
			out, err := harness.Sh(e.dir, cli, "generate")
			if err == nil || !strings.Contains(out, "v1/CronTab.spec.paused: JSON field removed or renamed") {
				t.Fatalf("generate should refuse removing a field v0.1.0 published: %v\n%s", err, out)
			}
			doc := filepath.Join(e.dir, "pkg", "apis", "stable", "doc.go")
			b, _ := os.ReadFile(doc)
			os.WriteFile(doc, append(b, []byte("\n// Paused was never used.\n// +apiserver-boot:accept-breaking-change=v1/CronTab.spec.paused\n")...), 0o644)
			e.forget("crontabs", "spec", "paused")
		}},
		{4, "Go field renamed under the same JSON name", nil},
		{5, "new optional nested struct", nil},
		{6, "Note moves from JSON to protobuf storage", func() {
			// Dropping the field protobuf could not carry is breaking against v0.1.0 too.
			out, err := harness.Sh(e.dir, cli, "generate")
			if err == nil || !strings.Contains(out, "v1/Note.spec.extra: JSON field removed or renamed") {
				t.Fatalf("generate should refuse removing a field v0.1.0 published: %v\n%s", err, out)
			}
			doc := filepath.Join(e.dir, "pkg", "apis", "stable", "doc.go")
			b, _ := os.ReadFile(doc)
			os.WriteFile(doc, append(b, []byte("// +apiserver-boot:accept-breaking-change=v1/Note.spec.extra\n")...), 0o644)
		}},
	}
	for _, s := range steps {
		e.writeTypes(s.stage)
		if s.before != nil {
			s.before()
		}
		server = e.serve(cli) // generates and builds
		e.check(s.name)
		name := fmt.Sprintf("s%d", s.stage)
		spec, status := cronTab(name, s.stage)
		e.create("crontabs", "CronTab", name, spec, status)
		e.check(s.name + ", with an object written by this build")
		server.Stop(t)
	}

	// Note: objects written as JSON stay readable, new ones are protobuf, and
	// migrate storage rewrites the old ones.
	server = e.serve(cli)
	e.create("notes", "Note", "n6", map[string]any{"text": "stored as protobuf"}, nil)
	if enc, _ := e.etcd.stored(t, "/registry/stable.example.com/notes/default/n6"); enc != "protobuf" {
		t.Errorf("a Note written after the move is stored as %s, want protobuf", enc)
	}
	if enc, _ := e.etcd.stored(t, "/registry/stable.example.com/notes/default/n0"); enc != "json" {
		t.Errorf("the Note written before the move is stored as %s before migrate storage, want json", enc)
	}
	if out, err := harness.Sh(e.dir, cli, "migrate", "storage", "--group", "stable", "--kind", "Note"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if enc, _ := e.etcd.stored(t, "/registry/stable.example.com/notes/default/n0"); enc != "protobuf" {
		t.Errorf("after migrate storage, the old Note is stored as %s, want protobuf", enc)
	}
	e.check("after migrate storage")
	server.Stop(t)

	// A field moved into an inlined struct: same JSON, but another protobuf
	// message. generate refuses it, naming the field.
	e.writeTypes(7)
	out, err = harness.Sh(e.dir, cli, "generate")
	if err == nil || !strings.Contains(out, "CronTabSpec.args moved into the embedded struct Command") {
		t.Fatalf("generate should refuse moving spec.args into an inlined struct: %v\n%s", err, out)
	}
	e.writeTypes(6)

	// The fixtures of v0.1.0, read with today's code: only the accepted
	// removals differ, by name, until recorded as after_roundtrip files.
	out, err = harness.Sh(e.dir, "go", "test", "-count=1", "-run", "^TestCompatibility$", "./pkg/apis/")
	if err == nil || !strings.Contains(out, "spec.paused: the release wrote true, today's code drops it") || !strings.Contains(out, "spec.extra: the release wrote") {
		t.Fatalf("TestCompatibility should name spec.paused and spec.extra:\n%s", out)
	}
	// paused in CronTab's JSON, YAML, protobuf and CBOR fixtures; extra in
	// Note's JSON, YAML and CBOR (Note had no protobuf then).
	if strings.Count(out, "read with today's code:") != 7 {
		t.Errorf("TestCompatibility should report the two removed fields once per encoding and nothing else:\n%s", out)
	}
	if out, err := harness.Sh(e.dir, "sh", "-c", "UPDATE_COMPATIBILITY_FIXTURE_DATA=true go test -count=1 -run '^TestCompatibility$' ./pkg/apis/; go test -count=1 -run '^TestCompatibility$' ./pkg/apis/"); err != nil {
		t.Fatalf("TestCompatibility with the accepted change recorded: %v\n%s", err, out)
	}

	// A kind removed (on purpose, accepted against v0.1.0): generate removes
	// what it generated for it, and the project builds.
	v1 := filepath.Join(e.dir, "pkg", "apis", "stable", "v1")
	for _, f := range []string{"note_types.go", "note_hooks.go", "note_types_test.go"} {
		os.Remove(filepath.Join(v1, f))
	}
	doc := filepath.Join(e.dir, "pkg", "apis", "stable", "doc.go")
	b, _ := os.ReadFile(doc)
	os.WriteFile(doc, append(b, []byte("// +apiserver-boot:accept-breaking-change=v1/Note\n")...), 0o644)
	out, err = harness.Sh(e.dir, cli, "generate")
	if err != nil || !strings.Contains(out, "removed pkg/client/clientset/versioned/typed/stable/v1/note.go (no longer generated)") {
		t.Fatalf("generate after removing Note: %v\n%s", err, out)
	}
	if out, err := harness.Sh(e.dir, "go", "build", "./..."); err != nil {
		t.Fatalf("the project no longer builds after a kind was removed: %v\n%s", err, out)
	}
}
