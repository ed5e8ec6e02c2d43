package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tankTypes replaces the scaffolded spec and status of Tank: a required
// list, a defaulted field, and a status counter shown as a printer column.
const tankTypes = `// TankSpec is the desired state of a Tank.
type TankSpec struct {
	// +required
	Levels []string ` + "`json:\"levels\"`" + `
	// +kubebuilder:default=fast
	// +optional
	Mode string ` + "`json:\"mode,omitempty\"`" + `
	// Written at 0 when left out: the default is put in.
	// +kubebuilder:default=3
	// +optional
	Count int32 ` + "`json:\"count\"`" + `
}

// TankStatus is the observed state of a Tank.
type TankStatus struct {
	Ready int32 ` + "`json:\"ready\"`" + `
}

`

// tankServed asks the project's apiserver (testenv, in the test process)
// what a custom resource of the same types answers.
const tankServed = `package v1_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/apiserver-boot/apiserver-boot/pkg/testenv"
)

func TestAbsentSpecAndStatus(t *testing.T) {
	cfg := testenv.Config(t)
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := cfg.Host + "/apis/tanks.example.com/v1/namespaces/default/tanks"
	do := func(method, url, contentType, accept, body string, want int) map[string]any {
		t.Helper()
		req, err := http.NewRequest(method, url, bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		req.Header.Set("Accept", accept)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, url, resp.StatusCode, want, b)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, b)
		}
		return m
	}
	const asJSON, asTable = "application/json", "application/json;as=Table;v=v1;g=meta.k8s.io"
	absent := func(what string, obj map[string]any, fields ...string) {
		t.Helper()
		for _, f := range fields {
			if v, ok := obj[f]; ok {
				t.Errorf("%s has %s: %v", what, f, v)
			}
		}
	}
	ready := func(name string) any {
		t.Helper()
		table := do("GET", base+"/"+name, "", asTable, "", 200)
		col := -1
		for i, c := range table["columnDefinitions"].([]any) {
			if c.(map[string]any)["name"] == "Ready" {
				col = i
			}
		}
		rows := table["rows"].([]any)
		if col < 0 || len(rows) != 1 {
			t.Fatalf("table of %s: %v", name, table)
		}
		return rows[0].(map[string]any)["cells"].([]any)[col]
	}

	// Created without spec and status: neither is returned, stored, listed
	// or defaulted; the Ready column is empty (kubectl shows <none>).
	created := do("POST", base, asJSON, asJSON, ` + "`" + `{"apiVersion":"tanks.example.com/v1","kind":"Tank","metadata":{"name":"a"}}` + "`" + `, 201)
	absent("the created Tank", created, "spec", "status")
	got := do("GET", base+"/a", "", asJSON, "", 200)
	absent("the stored Tank", got, "spec", "status")
	for _, item := range do("GET", base, "", asJSON, "", 200)["items"].([]any) {
		absent("the listed Tank", item.(map[string]any), "spec", "status")
	}
	if v := ready("a"); v != nil {
		t.Errorf("Ready of a Tank without status: %v, want none", v)
	}

	// A spec sent, even of only zero values and nulls, is validated as
	// sent (its required list is missing), as on the CRD.
	for _, spec := range []string{` + "`" + `{}` + "`" + `, ` + "`" + `{"levels":null}` + "`" + `, ` + "`" + `{"levels":null,"mode":""}` + "`" + `} {
		refused := do("POST", base, asJSON, asJSON, ` + "`" + `{"apiVersion":"tanks.example.com/v1","kind":"Tank","metadata":{"name":"e"},"spec":` + "`" + `+spec+` + "`" + `}` + "`" + `, 422)
		if msg, _ := refused["message"].(string); !strings.Contains(msg, "spec.levels: Required value") {
			t.Errorf("spec %s: %s, want spec.levels: Required value", spec, msg)
		}
	}

	// A spec sent gets its defaults.
	sent := do("POST", base, asJSON, asJSON, ` + "`" + `{"apiVersion":"tanks.example.com/v1","kind":"Tank","metadata":{"name":"b"},"spec":{"levels":["x"]}}` + "`" + `, 201)
	if spec, _ := sent["spec"].(map[string]any); spec["mode"] != "fast" || spec["count"] != float64(3) {
		t.Errorf("the sent spec is not defaulted: %v", sent["spec"])
	}
	absent("the Tank created with a spec", sent, "status")

	// A status written through /status is returned and shown.
	got["status"] = map[string]any{"ready": 3}
	body, _ := json.Marshal(got)
	written := do("PUT", base+"/a/status", asJSON, asJSON, string(body), 200)
	if st, _ := written["status"].(map[string]any); st["ready"] != float64(3) {
		t.Errorf("the status written: %v", written["status"])
	}
	absent("the Tank after its status", written, "spec")
	if v := ready("a"); v != float64(3) {
		t.Errorf("Ready after the status write: %v, want 3", v)
	}

	// Server-side apply, with a spec and without.
	applied := do("PATCH", base+"/c?fieldManager=tester", "application/apply-patch+yaml", asJSON,
		"apiVersion: tanks.example.com/v1\nkind: Tank\nmetadata:\n  name: c\nspec:\n  levels: [deep]\n", 201)
	if spec, _ := applied["spec"].(map[string]any); spec["mode"] != "fast" || spec["count"] != float64(3) || len(spec["levels"].([]any)) != 1 {
		t.Errorf("the applied spec: %v", applied["spec"])
	}
	absent("the applied Tank", applied, "status")
	if mf, _ := applied["metadata"].(map[string]any)["managedFields"].([]any); len(mf) != 1 || mf[0].(map[string]any)["manager"] != "tester" {
		t.Errorf("managed fields of the applied Tank: %v", mf)
	}
	bare := do("PATCH", base+"/d?fieldManager=tester", "application/apply-patch+yaml", asJSON,
		"apiVersion: tanks.example.com/v1\nkind: Tank\nmetadata:\n  name: d\n  labels: {app: tank}\n", 201)
	absent("a Tank applied without spec", bare, "spec", "status")

	// Watch events: d, as its ADDED event of a watch's start.
	resp, err := client.Get(base + "?watch=1&timeoutSeconds=2&fieldSelector=metadata.name%3Dd")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var event struct {
		Type   string         ` + "`json:\"type\"`" + `
		Object map[string]any ` + "`json:\"object\"`" + `
	}
	if err := json.NewDecoder(resp.Body).Decode(&event); err != nil || event.Type != "ADDED" {
		t.Fatalf("watch: %v %+v", err, event)
	}
	absent("the watched Tank", event.Object, "spec", "status")
}
`

// TestAbsentSpecAndStatusServed: a generated project serves a kind whose
// spec and status are structs tagged omitempty as kube-apiserver serves
// the CRD of the same types. A create without them returns, stores, lists
// and watches neither, and the printer column of the status is empty
// (kubectl's <none>). A spec sent of only zero values and nulls is
// validated as sent (its required list missing); a spec sent gets its
// defaults (of omitempty fields and of fields without omitempty), an absent
// one none. A /status write shows its status; server-side apply works, with
// and without a spec.
func TestAbsentSpecAndStatusServed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a generated project")
	}
	dir := t.TempDir()
	mustRun(t, dir, "init", "repo", "--module", "example.com/tanks", "--domain", "example.com")
	mustRun(t, dir, "create", "group", "version", "resource", "--group", "tanks", "--version", "v1", "--kind", "Tank", "--controller=false")
	v1 := filepath.Join(dir, "pkg", "apis", "tanks", "v1")
	types := filepath.Join(v1, "tank_types.go")
	b, err := os.ReadFile(types)
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	from, to := strings.Index(src, "// TankSpec is"), strings.Index(src, "// TankList is")
	if from < 0 || to < from {
		t.Fatalf("unexpected scaffold:\n%s", src)
	}
	src = src[:from] + tankTypes + src[to:]
	src = strings.Replace(src, "// +subresource:status\n", "// +subresource:status\n// +kubebuilder:printcolumn:name=Ready,type=integer,JSONPath=.status.ready\n", 1)
	for path, content := range map[string]string{types: src, filepath.Join(v1, "tank_served_test.go"): tankServed} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The scaffolded hooks and test use the replaced replicas.
	os.Remove(filepath.Join(v1, "tank_hooks.go"))
	os.Remove(filepath.Join(v1, "tank_types_test.go"))
	mustRun(t, dir, "generate")
	if b, err := os.ReadFile(filepath.Join(v1, "zz_generated.json.go")); err != nil || !strings.Contains(string(b), "func (in *Tank) MarshalJSON() ([]byte, error)") {
		t.Fatalf("no MarshalJSON generated for Tank: %v\n%s", err, b)
	}
	goIn(t, dir, "test", "-count=1", "-run", "TestAbsentSpecAndStatus", "./pkg/apis/tanks/v1/")
}
