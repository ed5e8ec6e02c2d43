//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"

	"sigs.k8s.io/yaml"
)

// gatewayAPI is the release of sigs.k8s.io/gateway-api served from its own
// types and compared with its own CRDs.
const gatewayAPI = "sigs.k8s.io/gateway-api@v1.6.3"

// gatewayViolations break the schema or a CEL rule of Gateway API's
// standard channel; each is applied to a valid object of its kind (the
// "base" documents below), as a JSON merge patch.
var gatewayViolations = []sidePatch{
	{"gateway without listeners", "Gateway", `{"spec":{"listeners":[]}}`},
	{"listener port 0", "Gateway", `{"spec":{"listeners":[{"name":"http","protocol":"HTTP","port":0}]}}`},
	{"listener port 70000", "Gateway", `{"spec":{"listeners":[{"name":"http","protocol":"HTTP","port":70000}]}}`},
	{"listener name not a DNS label", "Gateway", `{"spec":{"listeners":[{"name":"Not_A_Label","protocol":"HTTP","port":80}]}}`},
	{"duplicate listener names", "Gateway", `{"spec":{"listeners":[{"name":"a","protocol":"HTTP","port":80},{"name":"a","protocol":"HTTP","port":81}]}}`},
	{"hostname with a port", "Gateway", `{"spec":{"listeners":[{"name":"a","protocol":"HTTP","port":80,"hostname":"example.com:80"}]}}`},
	{"TLS on an HTTP listener", "Gateway", `{"spec":{"listeners":[{"name":"a","protocol":"HTTP","port":80,"tls":{"mode":"Terminate","certificateRefs":[{"name":"c"}]}}]}}`},
	{"HTTPS listener in Passthrough mode", "Gateway", `{"spec":{"listeners":[{"name":"a","protocol":"HTTPS","port":443,"tls":{"mode":"Passthrough"}}]}}`},
	{"hostname on a TCP listener", "Gateway", `{"spec":{"listeners":[{"name":"a","protocol":"TCP","port":9000,"hostname":"example.com"}]}}`},
	{"same port, protocol and hostname twice", "Gateway", `{"spec":{"listeners":[{"name":"a","protocol":"HTTP","port":80},{"name":"b","protocol":"HTTP","port":80}]}}`},
	{"gatewayClassName empty", "Gateway", `{"spec":{"gatewayClassName":""}}`},
	{"terminate without certificates", "Gateway", `{"spec":{"listeners":[{"name":"a","protocol":"HTTPS","port":443,"tls":{"mode":"Terminate"}}]}}`},
	{"allowedRoutes from unknown", "Gateway", `{"spec":{"listeners":[{"name":"a","protocol":"HTTP","port":80,"allowedRoutes":{"namespaces":{"from":"Everywhere"}}}]}}`},
	{"controllerName without a path", "GatewayClass", `{"spec":{"controllerName":"example.com"}}`},
	{"controllerName empty", "GatewayClass", `{"spec":{"controllerName":""}}`},
	{"description too long", "GatewayClass", `{"spec":{"description":"` + strings.Repeat("x", 65) + `"}}`},
	{"path not absolute", "HTTPRoute", `{"spec":{"rules":[{"matches":[{"path":{"type":"PathPrefix","value":"foo"}}]}]}}`},
	{"path type unknown", "HTTPRoute", `{"spec":{"rules":[{"matches":[{"path":{"type":"Glob","value":"/"}}]}]}}`},
	{"exact path with //", "HTTPRoute", `{"spec":{"rules":[{"matches":[{"path":{"type":"Exact","value":"/a//b"}}]}]}}`},
	{"17 rules", "HTTPRoute", `{"spec":{"rules":[` + strings.TrimSuffix(strings.Repeat(`{"backendRefs":[{"name":"s","port":80}]},`, 17), ",") + `]}}`},
	{"backend port missing for a Service", "HTTPRoute", `{"spec":{"rules":[{"backendRefs":[{"name":"s"}]}]}}`},
	{"backend weight negative", "HTTPRoute", `{"spec":{"rules":[{"backendRefs":[{"name":"s","port":80,"weight":-1}]}]}}`},
	{"redirect and rewrite of the same path", "HTTPRoute", `{"spec":{"rules":[{"filters":[{"type":"RequestRedirect","requestRedirect":{"path":{"type":"ReplaceFullPath","replaceFullPath":"/x"}}},{"type":"URLRewrite","urlRewrite":{"path":{"type":"ReplaceFullPath","replaceFullPath":"/y"}}}]}]}}`},
	{"filter type without its field", "HTTPRoute", `{"spec":{"rules":[{"filters":[{"type":"RequestHeaderModifier"}]}]}}`},
	{"header name invalid", "HTTPRoute", `{"spec":{"rules":[{"matches":[{"headers":[{"name":"bad header","value":"v"}]}]}]}}`},
	{"hostname with a wildcard inside", "HTTPRoute", `{"spec":{"hostnames":["foo.*.example.com"]}}`},
	{"parentRef sectionName invalid", "HTTPRoute", `{"spec":{"parentRefs":[{"name":"gw","sectionName":"Not_Valid"}]}}`},
}

var gatewayBase = map[string]string{
	"GatewayClass": `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass","metadata":{"name":"base"},"spec":{"controllerName":"example.com/controller"}}`,
	"Gateway":      `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":"base"},"spec":{"gatewayClassName":"example","listeners":[{"name":"http","protocol":"HTTP","port":80}]}}`,
	"HTTPRoute":    `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"base"},"spec":{"parentRefs":[{"name":"gw"}],"rules":[{"backendRefs":[{"name":"s","port":80}]}]}}`,
}

// TestCRDTypesSideBySide serves real kubebuilder APIs from their own Go
// types (as a kubebuilder user would copy them) and compares each, object by
// object, with the same release's CRDs on one kube-apiserver: Gateway API
// (below) and Cluster API (crdtypes_clusterapi_test.go).
func TestCRDTypesSideBySide(t *testing.T) {
	c := startKubeCluster(t)
	theirs := c.kubeconfig(t, "admin", adminToken)
	t.Run("GatewayAPI", func(t *testing.T) { gatewaySideBySide(t, theirs) })
	t.Run("ClusterAPI", func(t *testing.T) { clusterAPISideBySide(t, theirs) })
}

// gatewaySideBySide compares Gateway API's apis/v1 with its standard CRDs:
// the accept or reject decision (the examples of the release, and
// violations of its schema and CEL rules), the defaults in the spec, the
// printer columns, short names and categories, updates, and the zero values
// of issue 24 sent by every kind of write.
func gatewaySideBySide(t *testing.T, theirs string) {
	dir := downloadModule(t, gatewayAPI)
	// Our own kind beside the release's: the zero shapes it alone has.
	ours, _ := serveTypes(t, "gateway-api", filepath.Join(dir, "apis", "v1"), "networking.k8s.io", "gateway", "v1",
		map[string]string{"zeroshape_types.go": zeroShapeTypes})
	s := sideBySide{ours: ours, theirs: theirs, group: "gateway.networking.k8s.io", version: "v1"}

	// The reference: the release's standard CRDs.
	crds, _ := filepath.Glob(filepath.Join(dir, "config", "crd", "standard", "gateway.networking.k8s.io_*.yaml"))
	var reference []string
	for _, f := range crds {
		if !strings.Contains(f, "vap_") { // an admission policy, not a CRD
			reference = append(reference, f)
		}
	}
	zeroShape := filepath.Join(t.TempDir(), "zeroshape-crd.yaml")
	writeFile(t, zeroShape, []byte(zeroShapeCRD))
	s.applyCRDs(t, append(reference, zeroShape))

	// The objects: every GatewayClass, Gateway and HTTPRoute of the
	// release's standard examples, in the default namespace, and the violations.
	var objects []sideObject
	files, _ := filepath.Glob(filepath.Join(dir, "examples", "standard", "*.yaml"))
	more, _ := filepath.Glob(filepath.Join(dir, "examples", "standard", "*", "*.yaml"))
	files = append(files, more...)
	sort.Strings(files)
	for _, f := range files {
		b, _ := os.ReadFile(f)
		rel, _ := filepath.Rel(dir, f)
		objects = append(objects, s.examples(rel, string(b), "GatewayClass", "Gateway", "HTTPRoute")...)
	}
	examples := len(objects)
	objects = append(objects, patched(t, gatewayBase, gatewayViolations, false)...)
	if examples < 30 || len(gatewayViolations) < 20 {
		t.Fatalf("%d examples and %d violations: the release's examples were not found", examples, len(gatewayViolations))
	}
	s.creates(t, objects)
	t.Logf("%d examples of %s, %d violations", examples, gatewayAPI, len(gatewayViolations))

	s.resources(t)
	s.columns(t, gatewayBase)

	// Updates of the stored objects: transition rules (oldSelf), schema and
	// CEL checks on update, and what a valid update stores.
	s.updates(t, []sideUpdate{
		{"controllerName is immutable (self == oldSelf)", "GatewayClass", "", `{"spec":{"controllerName":"example.com/other"}}`, false},
		{"description added", "GatewayClass", "", `{"spec":{"description":"the class"}}`, true},
		{"listener port 0", "Gateway", "", `{"spec":{"listeners":[{"name":"http","protocol":"HTTP","port":0}]}}`, false},
		{"a second listener", "Gateway", "", `{"spec":{"listeners":[{"name":"http","protocol":"HTTP","port":80},{"name":"alt","protocol":"HTTP","port":8080}]}}`, true},
		{"a hostname", "HTTPRoute", "", `{"spec":{"hostnames":["example.com"]}}`, true},
		{"a relative path", "HTTPRoute", "", `{"spec":{"rules":[{"matches":[{"path":{"type":"PathPrefix","value":"rel"}}],"backendRefs":[{"name":"s","port":80}]}]}}`, false},
		// Through /status: the status schema, as a controller writes it.
		{"status: a condition of status Maybe", "Gateway", "status", `{"status":{"conditions":[{"type":"Accepted","status":"Maybe","reason":"Accepted","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`, false},
		{"status: a condition without a reason", "GatewayClass", "status", `{"status":{"conditions":[{"type":"Accepted","status":"True","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`, false},
		{"status: an accepted condition", "Gateway", "status", `{"status":{"conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`, true},
	})

	s.zeroWrites(t, zeroShapes)
}

// downloadModule is the folder of a module (path@version) in the module
// cache, downloaded through the module proxy.
func downloadModule(t *testing.T, module string) string {
	t.Helper()
	out, err := harness.Sh(repoRoot, "go", "mod", "download", "-json", module)
	if err != nil {
		t.Fatalf("go mod download %s: %v\n%s", module, err, out)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal([]byte(out), &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download: %v\n%s", err, out)
	}
	return mod.Dir
}

// serveTypes scaffolds a project serving group/version (group.domain) from
// the Go files of types, copied unchanged but for the generated ones, tests
// and doc.go, and the extra files (name: content) of its own (a name with a
// slash is a path in the project, such as config/crd/bases/...), with the
// modules in require added to its go.mod first; builds it and starts it with
// `run local` until the test ends. It returns the project's kubeconfig and
// what generate printed.
func serveTypes(t *testing.T, name, types, domain, group, version string, extra map[string]string, require ...string) (kubeconfig, generated string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	os.MkdirAll(dir, 0o755)
	steps := [][]string{
		{"go", "mod", "init", "example.com/" + strings.ReplaceAll(name, "-", "")},
		{cli, "init", "repo", "--domain", domain},
		{cli, "create", "group", "version", "--group", group, "--version", version},
	}
	for _, m := range require {
		steps = append(steps, []string{"go", "get", m})
	}
	for _, step := range steps {
		if out, err := harness.Sh(dir, step[0], step[1:]...); err != nil {
			t.Fatalf("%v: %v\n%s", step, err, out)
		}
	}
	entries, _ := os.ReadDir(types)
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasPrefix(n, "zz_generated") || strings.HasSuffix(n, "_test.go") || n == "doc.go" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(types, n))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "pkg", "apis", group, version, n), b)
	}
	for n, content := range extra {
		if strings.Contains(n, "/") { // a path in the project, such as a CRD manifest
			path := filepath.Join(dir, filepath.FromSlash(n))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, []byte(content))
			continue
		}
		writeFile(t, filepath.Join(dir, "pkg", "apis", group, version, n), []byte(content))
	}
	for _, step := range [][]string{{cli, "generate"}, {"go", "build", "-o", "bin/", "./cmd/apiserver"}} {
		if err := timed(name+": "+filepath.Base(step[0])+" "+step[1], func() error {
			out, err := harness.Sh(dir, step[0], step[1:]...)
			if err != nil {
				return fmt.Errorf("%v\n%s", err, out)
			}
			if step[0] == cli {
				generated = out
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	port := harness.FreePort(t)
	ours := harness.Start(t, dir, cli, "run", "local", "--secure-port", fmt.Sprint(port), "--controller-manager=false")
	t.Cleanup(func() { ours.Stop(t) })
	ours.WaitFor(t, "Ready.", 5*time.Minute)
	return filepath.Join(dir, "kubeconfig"), generated
}

// sideBySide is one API group version served twice: by a generated project
// from its Go types (ours) and by kube-apiserver from its CRDs (theirs).
type sideBySide struct {
	ours, theirs   string // kubeconfigs
	group, version string
}

func (s sideBySide) apiVersion() string { return s.group + "/" + s.version }

// resource names a kind for kubectl, qualified by the group.
func (s sideBySide) resource(kind string) string { return strings.ToLower(kind) + "." + s.group }

// applyCRDs installs the reference CRDs on kube-apiserver.
func (s sideBySide) applyCRDs(t *testing.T, files []string) {
	t.Helper()
	if len(files) == 0 {
		t.Fatal("no CRDs")
	}
	for _, f := range files {
		kubectlAs(t, s.theirs, "apply", "--server-side", "-f", f)
	}
	kubectlAs(t, s.theirs, "wait", "--for", "condition=Established", "--timeout", "2m", "crd", "--all")
}

// sideObject is an object created on both sides; valid and violation say
// what kube-apiserver must decide (neither: whatever it decides).
type sideObject struct {
	name, doc        string
	valid, violation bool
}

// examples are the objects of the group version and kinds in a YAML
// stream, without their namespace.
func (s sideBySide) examples(source, stream string, kinds ...string) []sideObject {
	var out []sideObject
	for i, doc := range strings.Split(stream, "\n---") {
		var o map[string]any
		if yaml.Unmarshal([]byte(doc), &o) != nil || o == nil {
			continue
		}
		kind, _ := o["kind"].(string)
		meta, ok := o["metadata"].(map[string]any)
		if o["apiVersion"] != s.apiVersion() || !ok || !slices.Contains(kinds, kind) {
			continue
		}
		delete(meta, "namespace")
		js, _ := json.Marshal(o)
		out = append(out, sideObject{name: fmt.Sprintf("%s#%d %s", source, i, kind), doc: string(js)})
	}
	return out
}

// sidePatch is an object given as a JSON merge patch of the valid object
// of its kind.
type sidePatch struct {
	name, kind, patch string
}

// patched are the objects of patches applied to the bases of their kinds,
// valid ones or violations.
func patched(t *testing.T, bases map[string]string, patches []sidePatch, valid bool) []sideObject {
	t.Helper()
	var out []sideObject
	for i, p := range patches {
		var base, patch map[string]any
		if err := json.Unmarshal([]byte(bases[p.kind]), &base); err != nil {
			t.Fatalf("the base %s: %v", p.kind, err)
		}
		if err := json.Unmarshal([]byte(p.patch), &patch); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		merged := mergePatch(base, patch)
		what := "violation"
		if valid {
			what = "valid"
		}
		merged["metadata"].(map[string]any)["name"] = fmt.Sprintf("%s-%d", what, i)
		js, _ := json.Marshal(merged)
		out = append(out, sideObject{name: what + ": " + p.name, doc: string(js), valid: valid, violation: !valid})
	}
	return out
}

// creates compares the decision on each object (a dry-run create) and,
// where both accept it, the spec they would store.
func (s sideBySide) creates(t *testing.T, objects []sideObject) {
	t.Helper()
	agree := 0
	for _, o := range objects {
		a := kubectlWith(s.ours, o.doc, "create", "--dry-run=server", "-o", "json", "-f", "-")
		b := kubectlWith(s.theirs, o.doc, "create", "--dry-run=server", "-o", "json", "-f", "-")
		switch {
		case (a.err == nil) != (b.err == nil):
			t.Errorf("%s: apiserver-boot accepted=%v, kube-apiserver accepted=%v\nours: %s\ntheirs: %s\n%s", o.name, a.err == nil, b.err == nil, a.stderr, b.stderr, o.doc)
		case o.violation && b.err == nil:
			t.Errorf("%s: kube-apiserver accepts it: not a violation\n%s", o.name, o.doc)
		case o.valid && b.err != nil:
			t.Errorf("%s: kube-apiserver rejects it: not valid\n%s\n%s", o.name, b.stderr, o.doc)
		case a.err == nil && !reflect.DeepEqual(specOf(t, a.stdout), specOf(t, b.stdout)):
			t.Errorf("%s: the stored spec differs (defaults):\nours:   %s\ntheirs: %s", o.name, specJSON(t, a.stdout), specJSON(t, b.stdout))
		default:
			agree++
		}
	}
	t.Logf("apiserver-boot and kube-apiserver agree on %d of %d objects of %s", agree, len(objects), s.apiVersion())
}

// resources compares short names, categories and scope, as discovery
// lists them.
func (s sideBySide) resources(t *testing.T) {
	t.Helper()
	list := func(kubeconfig string) string {
		r := kubectlWith(kubeconfig, "", "api-resources", "--api-group", s.group, "--no-headers", "-o", "wide")
		if r.err != nil {
			t.Fatalf("api-resources: %v\n%s", r.err, r.stderr)
		}
		var rows []string
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			// NAME SHORTNAMES APIVERSION NAMESPACED KIND VERBS CATEGORIES
			// (the empty columns left out): keep all but VERBS.
			var f []string
			for _, c := range strings.Fields(l) {
				if !isVerbs(c) {
					f = append(f, c)
				}
			}
			rows = append(rows, strings.Join(f, " "))
		}
		sort.Strings(rows)
		return strings.Join(rows, "\n")
	}
	if a, b := list(s.ours), list(s.theirs); a != b {
		t.Errorf("api-resources differ:\nours:\n%s\ntheirs:\n%s", a, b)
	}
}

// isVerbs tells whether a column of kubectl api-resources -o wide is the
// VERBS column: a comma-separated list of the verbs a resource has.
func isVerbs(column string) bool {
	for _, v := range strings.Split(column, ",") {
		switch v {
		case "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch":
		default:
			return false
		}
	}
	return true
}

// columns creates the base object of each kind on both and compares the
// printer columns of its table.
func (s sideBySide) columns(t *testing.T, bases map[string]string) {
	t.Helper()
	for kind, doc := range bases {
		for _, kc := range []string{s.ours, s.theirs} {
			if r := kubectlWith(kc, doc, "create", "-f", "-"); r.err != nil {
				t.Fatalf("create %s: %v\n%s", kind, r.err, r.stderr)
			}
		}
		a := kubectlWith(s.ours, "", "get", s.resource(kind), "base", "-o", "wide")
		b := kubectlWith(s.theirs, "", "get", s.resource(kind), "base", "-o", "wide")
		if a.err != nil || b.err != nil {
			t.Fatalf("get %s: ours %v %s, theirs %v %s", kind, a.err, a.stderr, b.err, b.stderr)
		}
		if header(a.stdout) != header(b.stdout) {
			t.Errorf("%s columns differ:\nours:   %s\ntheirs: %s", kind, header(a.stdout), header(b.stdout))
		}
	}
}

// sideUpdate is a merge patch of the stored object "base" of a kind (see
// columns), or of its subresource.
type sideUpdate struct {
	name, kind, subresource, patch string
	valid                          bool
}

// updates compares the decision on each update and what a valid one stores.
func (s sideBySide) updates(t *testing.T, updates []sideUpdate) {
	t.Helper()
	for _, u := range updates {
		args := []string{"patch", s.resource(u.kind), "base", "--type", "merge", "-p", u.patch, "-o", "json"}
		if u.subresource != "" {
			args = append(args, "--subresource", u.subresource)
		}
		a := kubectlWith(s.ours, "", args...)
		b := kubectlWith(s.theirs, "", args...)
		switch {
		case (a.err == nil) != (b.err == nil) || (b.err == nil) != u.valid:
			t.Errorf("update %s %s (%s): apiserver-boot accepted=%v, kube-apiserver accepted=%v (want %v)\nours: %s\ntheirs: %s", u.kind, u.subresource, u.name, a.err == nil, b.err == nil, u.valid, a.stderr, b.stderr)
		case a.err == nil && !reflect.DeepEqual(specOf(t, a.stdout), specOf(t, b.stdout)):
			t.Errorf("update %s %s (%s): the stored spec differs:\nours:   %s\ntheirs: %s", u.kind, u.subresource, u.name, specJSON(t, a.stdout), specJSON(t, b.stdout))
		}
	}
}

// zeroWrites sends each zero value of issue 24 by every kind of write: it
// is validated as the CRD validates it. An accepted write stores the same
// spec but for the zero values the Go types cannot carry (docs/markers.md):
// theirs keeps them, ours leaves them out; exactly those paths may differ.
func (s sideBySide) zeroWrites(t *testing.T, shapes []zeroShape) {
	t.Helper()
	zeroWrites := 0
	for _, z := range shapes {
		writes := []struct{ verb, name string }{
			{"create", z.name + "-create"}, {"replace", z.name + "-replace"}, {"merge", z.name + "-merge"},
			{"json", z.name + "-json"}, {"apply", z.name + "-apply"}, {"strategic", z.name + "-strategic"},
		}
		for _, w := range writes {
			if strings.Contains(" "+z.skip+" ", " "+w.verb+" ") {
				continue
			}
			doc := func(spec string) string {
				return fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":%q},"spec":%s}`, s.apiVersion(), z.kind, w.name, spec)
			}
			var args []string
			stdin := ""
			switch w.verb {
			case "create":
				args, stdin = []string{"create", "-f", "-", "-o", "json"}, doc(z.spec)
			case "replace":
				args, stdin = []string{"replace", "-f", "-", "-o", "json"}, doc(z.spec)
			case "merge":
				args = []string{"patch", s.resource(z.kind), w.name, "--type", "merge", "-p", z.merge, "-o", "json"}
			case "json":
				args = []string{"patch", s.resource(z.kind), w.name, "--type", "json", "-p", z.jsonPatch, "-o", "json"}
			case "strategic":
				// A strategic merge patch here, the same merge patch on
				// kube-apiserver (a CRD takes no strategic merge patch):
				// without directives and with lists the Go types replace,
				// the two patches mean the same.
				args = []string{"patch", s.resource(z.kind), w.name, "--type", "strategic", "-p", z.merge, "-o", "json"}
			case "apply":
				args, stdin = []string{"apply", "--server-side", "-f", "-", "-o", "json"}, doc(z.spec)
			}
			var got [2]result
			for i, kc := range []string{s.ours, s.theirs} {
				if w.verb != "create" {
					// The stored object the write changes, applied by
					// the same field manager as the apply.
					if r := kubectlWith(kc, doc(z.base), "apply", "--server-side", "-f", "-"); r.err != nil {
						t.Fatalf("%s: the stored %s: %v\n%s", w.name, z.kind, r.err, r.stderr)
					}
				}
				if w.verb == "strategic" && kc == s.theirs {
					args = append([]string(nil), args...)
					args[4] = "merge"
				}
				got[i] = kubectlWith(kc, stdin, args...)
				if got[i].err == nil {
					got[i] = kubectlWith(kc, "", "get", s.resource(z.kind), w.name, "-o", "json")
				}
			}
			a, b := got[0], got[1]
			zeroWrites++
			switch {
			case (a.err == nil) != (b.err == nil) || (b.err == nil) != z.valid:
				t.Errorf("%s (%s): apiserver-boot accepted=%v, kube-apiserver accepted=%v (want %v)\nours: %s\ntheirs: %s", z.name, w.verb, a.err == nil, b.err == nil, z.valid, a.stderr, b.stderr)
			case b.err != nil && w.verb == "apply" && z.applyNull && a.stderr != b.stderr:
				if !strings.Contains(b.stderr, `must be of type object: "null"`) || !strings.Contains(a.stderr, z.want) {
					t.Errorf("%s (%s): want kube-apiserver's null and our %q:\nours:   %s\ntheirs: %s", z.name, w.verb, z.want, a.stderr, b.stderr)
				}
			case b.err != nil && a.stderr != b.stderr:
				t.Errorf("%s (%s): the errors differ:\nours:   %s\ntheirs: %s", z.name, w.verb, a.stderr, b.stderr)
			case b.err != nil && !strings.Contains(b.stderr, z.want) && !(w.verb == "apply" && z.applyNull):
				t.Errorf("%s (%s): kube-apiserver's error lacks %q: %s", z.name, w.verb, z.want, b.stderr)
			case b.err == nil:
				so, st := specOf(t, a.stdout), specOf(t, b.stdout)
				for _, path := range z.omitted {
					if v, ok := lookup(st, path); !ok || !zeroJSON(v) {
						t.Errorf("%s (%s): kube-apiserver does not store the zero at %s: %s", z.name, w.verb, path, specJSON(t, b.stdout))
					}
					if _, ok := lookup(so, path); ok {
						t.Errorf("%s (%s): apiserver-boot stores %s, which its Go field omits: %s", z.name, w.verb, path, specJSON(t, a.stdout))
					}
					remove(st, path)
				}
				if !reflect.DeepEqual(so, st) {
					t.Errorf("%s (%s): the stored spec differs beyond %v:\nours:   %s\ntheirs: %s", z.name, w.verb, z.omitted, specJSON(t, a.stdout), specJSON(t, b.stdout))
				}
			}
		}
	}
	t.Logf("zero values as sent: %d writes of %d shapes compared", zeroWrites, len(shapes))
}

// zeroShape is a zero value of issue 24 in an API's types (or a field
// whose absence the Go encoding hides, issue 29), sent by create, update
// (kubectl replace), merge patch, JSON patch, server-side apply and
// strategic merge patch. base is the spec stored before an update; spec the
// spec as sent (create, replace and apply), merge and jsonPatch the patches
// of base giving it; want a part of kube-apiserver's error; omitted the
// paths (dot separated, list indexes as numbers) of the zero values (or
// nulls) an accepted write stores on kube-apiserver and not here; skip the
// writes not compared (space separated verbs). applyNull: applied over the
// stored base, kube-apiserver's server-side apply turns the empty object
// sent into null (`must be of type object: "null"`) where this server
// validates the {} sent: both reject it, with other errors.
type zeroShape struct {
	name, kind, base, spec, merge, jsonPatch string
	valid, applyNull                         bool
	want, skip                               string
	omitted                                  []string
}

// zeroShapes are the zero values of issue 24 in Gateway API's types, and
// the fields of our own ZeroShape (zeroShapeTypes) whose absence the Go
// encoding hides (issue 29).
var zeroShapes = []zeroShape{
	{
		// HTTPCORSFilter.MaxAge: int32, omitempty, Minimum=1, default 5. A
		// CRD keeps the 0 sent (a default fills only what is absent).
		name: "cors-maxage-0", kind: "HTTPRoute",
		base:      `{"parentRefs":[{"name":"gw"}],"rules":[{"filters":[{"type":"CORS","cors":{"allowOrigins":["https://example.com"],"maxAge":10}}],"backendRefs":[{"name":"s","port":80}]}]}`,
		spec:      `{"parentRefs":[{"name":"gw"}],"rules":[{"filters":[{"type":"CORS","cors":{"allowOrigins":["https://example.com"],"maxAge":0}}],"backendRefs":[{"name":"s","port":80}]}]}`,
		merge:     `{"spec":{"rules":[{"filters":[{"type":"CORS","cors":{"allowOrigins":["https://example.com"],"maxAge":0}}],"backendRefs":[{"name":"s","port":80}]}]}}`,
		jsonPatch: `[{"op":"replace","path":"/spec/rules/0/filters/0/cors/maxAge","value":0}]`,
		want:      "spec.rules[0].filters[0].cors.maxAge in body should be greater than or equal to 1",
	},
	{
		// ListenerEntry.Port: int32, omitempty, required, Minimum=1.
		name: "listener-port-0", kind: "ListenerSet",
		base:      `{"parentRef":{"name":"gw"},"listeners":[{"name":"a","protocol":"HTTP","port":80}]}`,
		spec:      `{"parentRef":{"name":"gw"},"listeners":[{"name":"a","protocol":"HTTP","port":0}]}`,
		merge:     `{"spec":{"listeners":[{"name":"a","protocol":"HTTP","port":0}]}}`,
		jsonPatch: `[{"op":"replace","path":"/spec/listeners/0/port","value":0}]`,
		want:      "spec.listeners[0].port in body should be greater than or equal to 1",
	},
	{
		// ListenerEntry.Name: a string, omitempty, required, MinLength=1.
		name: "listener-name-empty", kind: "ListenerSet",
		base:      `{"parentRef":{"name":"gw"},"listeners":[{"name":"a","protocol":"HTTP","port":80}]}`,
		spec:      `{"parentRef":{"name":"gw"},"listeners":[{"name":"","protocol":"HTTP","port":80}]}`,
		merge:     `{"spec":{"listeners":[{"name":"","protocol":"HTTP","port":80}]}}`,
		jsonPatch: `[{"op":"replace","path":"/spec/listeners/0/name","value":""}]`,
		want:      "spec.listeners[0].name in body should be at least 1 chars long",
	},
	{
		// ListenerSet.Spec: omitzero, required.
		name: "listenerset-spec-empty", kind: "ListenerSet",
		base:      `{"parentRef":{"name":"gw"},"listeners":[{"name":"a","protocol":"HTTP","port":80}]}`,
		spec:      `{}`,
		merge:     `{"spec":{"parentRef":null,"listeners":null}}`,
		jsonPatch: `[{"op":"replace","path":"/spec","value":{}}]`,
		// Applied by the manager of all of spec, `spec: {}` leaves a null
		// spec on both ("spec: Invalid value: \"null\": spec in body must
		// be of type object").
		want: "spec",
	},
	{
		// RouteNamespaces.Selector: a label selector whose only field is an
		// empty map (metav1.LabelSelector.MatchLabels, omitempty): valid on
		// both, stored without the empty map here.
		name: "selector-matchlabels-empty", kind: "Gateway",
		base:      `{"gatewayClassName":"example","listeners":[{"name":"http","protocol":"HTTP","port":80,"allowedRoutes":{"namespaces":{"from":"Selector","selector":{"matchLabels":{"a":"b"}}}}}]}`,
		spec:      `{"gatewayClassName":"example","listeners":[{"name":"http","protocol":"HTTP","port":80,"allowedRoutes":{"namespaces":{"from":"Selector","selector":{"matchLabels":{}}}}}]}`,
		merge:     `{"spec":{"listeners":[{"name":"http","protocol":"HTTP","port":80,"allowedRoutes":{"namespaces":{"from":"Selector","selector":{"matchLabels":{}}}}}]}}`,
		jsonPatch: `[{"op":"replace","path":"/spec/listeners/0/allowedRoutes/namespaces/selector/matchLabels","value":{}}]`,
		valid:     true,
		omitted:   []string{"listeners.0.allowedRoutes.namespaces.selector.matchLabels"},
	},
	{
		// ZeroShapeSpec.Count: int32 without omitempty, default 3, left
		// out: stored with the default, not 0.
		name: "default-left-out", kind: "ZeroShape",
		base:      `{"count":7,"name":"a","ref":{"name":"r"}}`,
		spec:      `{"name":"a","ref":{"name":"r"}}`,
		merge:     `{"spec":{"count":null}}`,
		jsonPatch: `[{"op":"remove","path":"/spec/count"}]`,
		valid:     true,
	},
	{
		// ZeroShapeSpec.Name: a string without omitempty, required,
		// MinLength=1, left out: absent, not "".
		name: "required-left-out", kind: "ZeroShape",
		base:      `{"name":"a","ref":{"name":"r"}}`,
		spec:      `{"ref":{"name":"r"}}`,
		merge:     `{"spec":{"name":null}}`,
		jsonPatch: `[{"op":"remove","path":"/spec/name"}]`,
		want:      "spec.name: Required value",
	},
	{
		// ZeroShapeSpec.Ref: a pointer with omitempty, required and
		// nullable, sent as null: there (a CRD stores the null; the Go
		// field cannot). A merge patch's null deletes: not compared.
		name: "nullable-null", kind: "ZeroShape",
		base:      `{"name":"a","ref":{"name":"r"}}`,
		spec:      `{"name":"a","ref":null}`,
		jsonPatch: `[{"op":"replace","path":"/spec/ref","value":null}]`,
		skip:      "merge strategic",
		valid:     true,
		omitted:   []string{"ref"},
	},
}

// zeroShapeTypes is our own kind served beside Gateway API's, written as a
// kubebuilder user would (zeroShapeCRD is its CRD, as controller-gen writes
// it).
const zeroShapeTypes = `package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=zeroshape-test

// ZeroShape has fields whose absence the Go encoding hides.
type ZeroShape struct {
	metav1.TypeMeta ` + "`" + `json:",inline"` + "`" + `
	// +optional
	metav1.ObjectMeta ` + "`" + `json:"metadata,omitempty"` + "`" + `

	// +required
	Spec ZeroShapeSpec ` + "`" + `json:"spec"` + "`" + `
}

// ZeroShapeSpec is the spec of a ZeroShape.
type ZeroShapeSpec struct {
	// Count has a default and no omitempty.
	// +kubebuilder:default=3
	// +optional
	Count int32 ` + "`" + `json:"count"` + "`" + `

	// Name is required and has no omitempty.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string ` + "`" + `json:"name"` + "`" + `

	// Ref is required and may be null.
	// +required
	// +nullable
	Ref *ZeroShapeRef ` + "`" + `json:"ref,omitempty"` + "`" + `
}

// ZeroShapeRef names something.
type ZeroShapeRef struct {
	// +optional
	Name string ` + "`" + `json:"name,omitempty"` + "`" + `
}

// +kubebuilder:object:root=true

// ZeroShapeList is a list of ZeroShapes.
type ZeroShapeList struct {
	metav1.TypeMeta ` + "`" + `json:",inline"` + "`" + `
	metav1.ListMeta ` + "`" + `json:"metadata,omitempty"` + "`" + `
	Items           []ZeroShape ` + "`" + `json:"items"` + "`" + `
}
`

const zeroShapeCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: zeroshapes.gateway.networking.k8s.io
  annotations:
    api-approved.kubernetes.io: "unapproved, test only"
spec:
  group: gateway.networking.k8s.io
  names: {kind: ZeroShape, listKind: ZeroShapeList, plural: zeroshapes, singular: zeroshape, categories: [zeroshape-test]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        description: ZeroShape has fields whose absence the Go encoding hides.
        type: object
        required: [spec]
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            description: ZeroShapeSpec is the spec of a ZeroShape.
            type: object
            required: [name, ref]
            properties:
              count: {description: Count has a default and no omitempty., type: integer, format: int32, default: 3}
              name: {description: Name is required and has no omitempty., type: string, minLength: 1}
              ref:
                description: Ref is required and may be null.
                type: object
                nullable: true
                properties:
                  name: {type: string}
`

// lookup is the value at a dot-separated path of JSON values.
func lookup(v any, path string) (any, bool) {
	for _, k := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[k]; !ok {
				return nil, false
			}
		case []any:
			var i int
			if _, err := fmt.Sscan(k, &i); err != nil || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// remove deletes the value at a dot-separated path.
func remove(v any, path string) {
	parent, last := path, path
	if i := strings.LastIndex(path, "."); i >= 0 {
		parent, last = path[:i], path[i+1:]
		v, _ = lookup(v, parent)
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, last)
	}
}

// zeroJSON tells whether a JSON value is a zero an omitempty field drops:
// null, false, 0, "", or an empty object or list.
func zeroJSON(v any) bool {
	switch c := v.(type) {
	case nil:
		return true
	case bool:
		return !c
	case float64:
		return c == 0
	case string:
		return c == ""
	case map[string]any:
		return len(c) == 0
	case []any:
		return len(c) == 0
	}
	return false
}

// mergePatch applies a JSON merge patch (RFC 7386).
func mergePatch(doc, patch map[string]any) map[string]any {
	for k, v := range patch {
		if pm, ok := v.(map[string]any); ok {
			if dm, ok := doc[k].(map[string]any); ok {
				doc[k] = mergePatch(dm, pm)
				continue
			}
		}
		if v == nil {
			delete(doc, k)
		} else {
			doc[k] = v
		}
	}
	return doc
}

func specOf(t *testing.T, js string) any {
	t.Helper()
	var o map[string]any
	if err := json.Unmarshal([]byte(js), &o); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	return o["spec"]
}

func specJSON(t *testing.T, js string) string {
	b, _ := json.Marshal(specOf(t, js))
	return string(b)
}

func header(table string) string {
	return strings.Join(strings.Fields(strings.SplitN(table, "\n", 2)[0]), " ")
}
