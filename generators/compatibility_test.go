package generators

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
)

func writeDoc(t *testing.T, root, group, src string) {
	t.Helper()
	dir := filepath.Join(root, "pkg", "apis", group)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "doc.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The accept markers are the package markers of a group's doc.go written in
// any // comment (generate's hint appends them at the end of the file), read
// by the marker registry: text inside a block comment is not a marker.
func TestAcceptedChanges(t *testing.T) {
	root := t.TempDir()
	writeDoc(t, root, "stable", `/*
Copyright.
+apiserver-boot:accept-breaking-change=v1/CronTab.spec.inBlockComment
*/

// +groupName=stable.example.com
//+apiserver-boot:accept-breaking-change=v1/CronTab.spec.schedule

// Package stable is the internal version.
package stable

// Image moved to the pod template.
// +apiserver-boot:accept-breaking-change=v1/CronTab.spec.image
`)
	writeDoc(t, root, "other", "// Package other is not in the model.\npackage other\n// +apiserver-boot:accept-breaking-change=v2/Note\n")
	if err := os.WriteFile(filepath.Join(root, "pkg", "apis", "README"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	api := &State{API: &model.API{Root: root, Groups: []*model.Group{{Name: "stable", FullName: "stable.example.com"}}}}
	got, err := acceptedChanges(api)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"stable.example.com v1/CronTab.spec.schedule": "pkg/apis/stable/doc.go:7",
		"stable.example.com v1/CronTab.spec.image":    "pkg/apis/stable/doc.go:13",
		"other v2/Note": "pkg/apis/other/doc.go:3",
	}
	if len(got) != len(want) {
		t.Errorf("accepted %v, want %v", got, want)
	}
	for k, pos := range want {
		if got[k] != pos {
			t.Errorf("%s: at %q, want %q", k, got[k], pos)
		}
	}
}

func TestAcceptedChangesBadMarker(t *testing.T) {
	for name, line := range map[string]string{
		"misspelt": "// +apiserver-boot:accept-breaking-changes=v1/CronTab",
		"no id":    "// +apiserver-boot:accept-breaking-change",
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeDoc(t, root, "stable", "package stable\n\n"+line+"\n")
			_, err := acceptedChanges(&State{API: &model.API{Root: root}})
			if err == nil || !strings.Contains(err.Error(), "pkg/apis/stable/doc.go:3") || !strings.Contains(err.Error(), "+apiserver-boot:accept-breaking-change=<id>") {
				t.Errorf("err %v, want one at pkg/apis/stable/doc.go:3 naming the marker's form", err)
			}
		})
	}
}
