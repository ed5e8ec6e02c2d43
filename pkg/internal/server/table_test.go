package server

import (
	"context"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/jsoncontent"
	"k8s.io/client-go/util/jsonpath"
)

func TestCellsAreTypedAsDeclared(t *testing.T) {
	content := map[string]interface{}{"spec": map[string]interface{}{
		"replicas": int64(3), "ratio": 0.5, "on": true, "name": "x",
		"since": time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339),
	}}
	parse := func(p string) *jsonpath.JSONPath {
		jp := jsonpath.New(p)
		if err := jp.Parse("{" + p + "}"); err != nil {
			t.Fatal(err)
		}
		return jp
	}
	for _, tc := range []struct {
		path, typ string
		want      interface{}
	}{
		{".spec.replicas", "integer", int64(3)},
		{".spec.replicas", "number", float64(3)},
		{".spec.on", "boolean", true},
		{".spec.name", "string", "x"},
		{".spec.name", "integer", nil},
		{".spec.missing", "string", nil},
	} {
		if got := cell(parse(tc.path), tc.typ, content); got != tc.want {
			t.Errorf("%s as %s: %#v, want %#v", tc.path, tc.typ, got, tc.want)
		}
	}
	if got, _ := cell(parse(".spec.since"), "date", content).(string); got != "120m" && got != "119m" && !strings.HasPrefix(got, "2h") {
		t.Errorf("a date renders as an age: %q", got)
	}
}

// TestAgeColumn: AGE ends the row after +printcolumn columns, unless a
// column shows the creation time already; +kubebuilder:printcolumn columns
// are all the columns, as a CRD's.
func TestAgeColumn(t *testing.T) {
	names := func(r *builders.Resource) string {
		tc, err := newTableConvertor(r, jsoncontent.Kind{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range tc.(*tableConvertor).headers {
			out = append(out, h.Name)
		}
		return strings.Join(out, " ")
	}
	cols := []builders.Column{{Name: "Class", Type: "string", JSONPath: ".spec.class"}}
	withAge := append(cols, builders.Column{Name: "Created", Type: "date", JSONPath: ".metadata.creationTimestamp"})
	for _, tc := range []struct {
		r    *builders.Resource
		want string
	}{
		{&builders.Resource{PrintColumns: cols}, "Name Class Age"},
		{&builders.Resource{PrintColumns: withAge}, "Name Class Created"},
		{&builders.Resource{PrintColumns: cols, ExactColumns: true}, "Name Class"},
	} {
		if got := names(tc.r); got != tc.want {
			t.Errorf("columns %s, want %s", got, tc.want)
		}
	}
}

// TestAgeColumnAsACRDs: the Age column a kind without printer columns gets
// is the one kube-apiserver serves for such a CRD (apiextensions-apiserver's
// serveDefaultColumnsIfEmpty: Age, type date, .metadata.creationTimestamp,
// rendered by its tableconvertor), header and cell alike.
func TestAgeColumnAsACRDs(t *testing.T) {
	created := metav1.NewTime(time.Now().Add(-90 * time.Minute))
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x.example.com/v1", "kind": "X"}}
	obj.SetName("x")
	obj.SetCreationTimestamp(created)
	crd, err := tableconvertor.New([]apiextensionsv1.CustomResourceColumnDefinition{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := crd.ConvertToTable(context.Background(), obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := newTableConvertor(&builders.Resource{}, jsoncontent.Kind{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ours.ConvertToTable(context.Background(), obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	header := func(c metav1.TableColumnDefinition) string { return c.Name + " " + c.Type + " " + c.Format }
	if len(got.ColumnDefinitions) != len(want.ColumnDefinitions) {
		t.Fatalf("columns %v, kube-apiserver's %v", got.ColumnDefinitions, want.ColumnDefinitions)
	}
	for i := range want.ColumnDefinitions {
		if g, w := header(got.ColumnDefinitions[i]), header(want.ColumnDefinitions[i]); g != w {
			t.Errorf("column %d: %q, kube-apiserver's %q", i, g, w)
		}
	}
	if g, w := got.Rows[0].Cells[len(got.Rows[0].Cells)-1], want.Rows[0].Cells[len(want.Rows[0].Cells)-1]; g != w {
		t.Errorf("age cell %#v, kube-apiserver's %#v", g, w)
	}
}
