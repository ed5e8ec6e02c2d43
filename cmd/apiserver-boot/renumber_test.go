package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ownCronTab replaces the scaffolded CronTab types with types of one's own,
// written for go-to-protobuf: their tags give schedule the number the
// scaffold's record gave replicas.
const ownCronTab = `package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type CronTab struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\" protobuf:\"bytes,1,opt,name=metadata\"`" + `

	Spec   CronTabSpec   ` + "`json:\"spec,omitempty\" protobuf:\"bytes,2,opt,name=spec\"`" + `
	Status CronTabStatus ` + "`json:\"status,omitempty\" protobuf:\"bytes,3,opt,name=status\"`" + `
}

type CronTabSpec struct {
	Schedule string ` + "`json:\"schedule,omitempty\" protobuf:\"bytes,1,opt,name=schedule\"`" + `
	// +optional
	Replicas *int32 ` + "`json:\"replicas,omitempty\" protobuf:\"varint,2,opt,name=replicas\"`" + `
}

type CronTabStatus struct {
	Active int32 ` + "`json:\"active,omitempty\" protobuf:\"varint,1,opt,name=active\"`" + `
}

// +kubebuilder:object:root=true
type CronTabList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\" protobuf:\"bytes,1,opt,name=metadata\"`" + `
	Items           []CronTab ` + "`json:\"items\" protobuf:\"bytes,2,rep,name=items\"`" + `
}
`

// TestRenumberNewKind: after create, the scaffolded types replaced by one's
// own clash with the scaffold's protobuf numbers. For a kind no release
// published, the error names one step, generate --renumber, which numbers
// the kind afresh (the tags' numbers) with no hand edit of fieldnumbers.yaml,
// saying that objects stored under the old numbers become unreadable. A kind
// a recorded release published is never renumbered.
func TestRenumberNewKind(t *testing.T) {
	dir := newProject(t)
	v1 := filepath.Join(dir, "pkg", "apis", "stable", "v1")
	os.WriteFile(filepath.Join(v1, "crontab_types.go"), []byte(ownCronTab), 0o644)
	os.Remove(filepath.Join(v1, "crontab_hooks.go")) // the scaffold's hooks are of the scaffold's types
	before := tree(t, dir)
	_, err := run(t, dir, "generate")
	if err == nil || !strings.Contains(err.Error(), "CronTabSpec.Schedule has protobuf tag number 1, which pkg/apis/stable/v1/fieldnumbers.yaml gives to replicas") ||
		!strings.Contains(err.Error(), "number its fields afresh: apiserver-boot generate --renumber stable/v1/CronTab (objects stored under the old numbers become unreadable)") ||
		strings.Contains(err.Error(), "delete its line") {
		t.Fatalf("want the clash named with the one step that renumbers CronTab, got %v", err)
	}
	for path, content := range tree(t, dir) {
		if before[path] != content {
			t.Errorf("%s written by a failed generate", path)
		}
	}

	if _, err := run(t, dir, "generate", "--renumber", "stable/v1/Nope"); err == nil || !strings.Contains(err.Error(), "--renumber stable/v1/Nope: the API has no such kind: want <group>/<version>/<Kind>, one of stable/v1/CronTab") {
		t.Errorf("want an unknown kind refused naming the flag, got %v", err)
	}
	out := mustRun(t, dir, "generate", "--renumber", "stable/v1/CronTab")
	if !strings.Contains(out, "warning: --renumber stable/v1/CronTab: the protobuf fields of CronTab, CronTabList, CronTabSpec, CronTabStatus are numbered afresh in pkg/apis/stable/v1/fieldnumbers.yaml; objects of it stored under the old numbers can no longer be read") {
		t.Errorf("generate --renumber does not say what it renumbered:\n%s", out)
	}
	got := record(t, dir, "v1")
	for key, want := range map[string]string{"CronTabSpec.schedule": "1", "CronTabSpec.replicas": "2", "CronTabStatus.active": "1", "CronTab.spec": "2"} {
		if got[key] != want {
			t.Errorf("%s = %q after --renumber, want %s (the tag's): %v", key, got[key], want, got)
		}
	}
	if _, ok := got["CronTabStatus.reserved.observedGeneration"]; ok {
		t.Errorf("the scaffold's numbers are kept as reserved after --renumber: %v", got)
	}
	// Said once: the generate cache does not repeat it.
	if out := mustRun(t, dir, "generate"); strings.Contains(out, "renumber") {
		t.Errorf("a later generate repeats the renumbering:\n%s", out)
	}

	// Once a release published CronTab, its numbers are history.
	snap := filepath.Join(dir, "pkg", "apis", "testdata", "v0.1.0")
	os.MkdirAll(snap, 0o755)
	os.WriteFile(filepath.Join(snap, "api.yaml"), []byte("groups:\n  stable.example.com:\n    versions:\n      v1:\n        kinds:\n          CronTab:\n            stored: true\n            fields: {}\n"), 0o644)
	os.WriteFile(filepath.Join(v1, "crontab_types.go"), []byte(strings.Replace(ownCronTab, `Active int32 `+"`json:\"active,omitempty\" protobuf:\"varint,1,opt,name=active\"`", `Active string `+"`json:\"active,omitempty\"`", 1)), 0o644)
	_, err = run(t, dir, "generate")
	if err == nil || !strings.Contains(err.Error(), "CronTab is in release v0.1.0 (pkg/apis/testdata/v0.1.0): objects are stored under these numbers, so they stay") || strings.Contains(err.Error(), "--renumber") {
		t.Errorf("want the published kind's numbers kept, with no --renumber offered, got %v", err)
	}
	if _, err := run(t, dir, "generate", "--renumber", "stable/v1/CronTab"); err == nil || !strings.Contains(err.Error(), "--renumber stable/v1/CronTab: release v0.1.0 published CronTab stable.example.com/v1") {
		t.Errorf("want --renumber of a published kind refused, got %v", err)
	}
}
