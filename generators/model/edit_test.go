package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

const widget = `package v1

// Widget is a widget.
//
// +resource:path=widgets
//+storageversion
// +subresource:rest:path=restart,request=WidgetRestart
type Widget struct{}

// Plain has no resource marker.
type Plain struct{}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=gw
// +kubebuilder:subresource:status
type Gateway struct{}
`

func TestAddTypeMarker(t *testing.T) {
	for _, tc := range []struct {
		kind, marker string
		changed      bool
		want, err    string
	}{
		{kind: "Widget", marker: "+subresource:status", changed: true, want: "// +resource:path=widgets\n// +subresource:status\n//+storageversion\n"},
		// Present already, in another spelling: nothing to do.
		{kind: "Widget", marker: "+storageversion"},
		{kind: "Widget", marker: "+subresource:rest:path=restart,request=Other"},
		// Another custom subresource is another marker.
		{kind: "Widget", marker: "+subresource:rest:path=rollback,request=WidgetRollback", changed: true, want: "// +resource:path=widgets\n// +subresource:rest:path=rollback,request=WidgetRollback\n"},
		// Kubebuilder's spelling is the same marker.
		{kind: "Gateway", marker: "+subresource:status"},
		{kind: "Gateway", marker: "+storageversion", changed: true, want: "// +kubebuilder:resource:shortName=gw\n// +storageversion\n"},
		{kind: "Plain", marker: "+subresource:status", err: "w_types.go: type Plain has no +resource marker"},
		{kind: "Missing", marker: "+subresource:status", err: "w_types.go: no type Missing"},
		{kind: "Widget", marker: "+subresourse:status", err: "+subresourse:status is not a type marker"},
	} {
		out, changed, err := AddTypeMarker("w_types.go", []byte(widget), tc.kind, tc.marker)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %s: want error %q, got %v", tc.kind, tc.marker, tc.err, err)
			}
			continue
		case err != nil:
			t.Errorf("%s %s: %v", tc.kind, tc.marker, err)
			continue
		}
		if changed != tc.changed || (!changed && string(out) != widget) || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s %s: changed %v, want %v:\n%s", tc.kind, tc.marker, changed, tc.changed, out)
		}
	}
}

// TestMarkStorageVersion: one +storageversion per kind, whichever version
// carries it and however it is spelt.
func TestMarkStorageVersion(t *testing.T) {
	root := t.TempDir()
	write := func(v, markers string) {
		dir := filepath.Join(root, "pkg", "apis", "shop", v)
		os.MkdirAll(dir, 0o755)
		src := "package " + v + "\n\n// +resource:path=widgets\n" + markers + "type Widget struct{}\n"
		if err := os.WriteFile(filepath.Join(dir, "widget_types.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("v1", "")
	write("v2", "")
	path, src, err := MarkStorageVersion(root, "shop", "Widget", "v1", []string{"v1", "v2"})
	if err != nil || !strings.HasSuffix(path, filepath.Join("v1", "widget_types.go")) || !strings.Contains(string(src), "// +resource:path=widgets\n// +storageversion\ntype Widget") {
		t.Fatalf("want v1 marked, got %s %v:\n%s", path, err, src)
	}
	write("v2", "//+storageversion\n")
	if path, src, err := MarkStorageVersion(root, "shop", "Widget", "v1", []string{"v1", "v2"}); err != nil || path != "" || src != nil {
		t.Errorf("v2 carries the marker: want nothing to do, got %s %v", path, err)
	}
}

// TestDescribe: the names, scope and subresources commands see are the
// markers', whatever PROJECT says.
func TestDescribe(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "pkg", "apis", "shop", "v1")
	os.MkdirAll(dir, 0o755)
	src := "package v1\n\n// +resource:path=widgetz,scope=Cluster,shortNames=wz;w,categories=all\n// +subresource:status\n// +subresource:scale:specpath=.spec.n,statuspath=.status.n\n" +
		"// +subresource:rest:path=restart,request=WidgetRestart\ntype Widget struct{}\n\n// +subresource:request\ntype WidgetRestart struct{}\n"
	if err := os.WriteFile(filepath.Join(dir, "widget_types.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &project.Project{Domain: "example.com", Module: "example.com/shop", Resources: []*project.Resource{
		{KindDescriptor: project.KindDescriptor{Group: "shop", Version: "v1", Kind: "Widget", Plural: "widgets", Scope: project.Namespaced, ShortNames: []string{"wd"}}},
		{KindDescriptor: project.KindDescriptor{Group: "shop", Version: "v1", Kind: "Gone", Plural: "gones"}},
	}}
	api, err := LoadAPI(root, p, "x", "")
	if err != nil {
		t.Fatal(err)
	}
	api.Describe(p)
	r := p.Resources[0]
	if r.Plural != "widgetz" || r.Scope != project.Cluster || strings.Join(r.ShortNames, ",") != "wz,w" || strings.Join(r.Categories, ",") != "all" ||
		strings.Join(r.Subresources, ",") != "status,scale,restart" || r.Scale == nil || r.Scale.SpecReplicasPath != ".spec.n" {
		t.Errorf("not described from the markers: %+v %+v", r, r.Scale)
	}
	if g := p.Resources[1]; g.Plural != "gones" {
		t.Errorf("a kind without types keeps its record: %+v", g)
	}
}
