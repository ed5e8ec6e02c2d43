package apiserverboot

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layers lists, for every package of this module, the packages of this
// module it may import: imports run down the layers only (docs/design.md).
// The CLI's pipeline (cmd, generators, internal/scaffold, internal/deploy)
// sits above internal/'s leaves; pkg/ is the runtime library of generated
// projects and imports only internal/'s leaves; internal/ imports neither
// pkg/ nor generators/. A package not listed here fails the test.
var layers = map[string][]string{
	"": {},
	"cmd/apiserver-boot": {"", "boilerplate", "generators", "generators/driver", "generators/model", "internal/apidocs", "internal/datastore", "internal/deploy", "internal/files", "internal/gomod", "internal/image",
		"internal/kubeconfig", "internal/private", "internal/progress", "internal/project", "internal/runlock", "internal/scaffold", "internal/upgrade", "internal/version", "templates"},
	"generators":                   {"generators/model", "generators/protobuf", "generators/crdschema", "generators/driver", "internal/files", "internal/private", "internal/project", "templates", "third_party/validation-gen"},
	"third_party/validation-gen":   {},
	"generators/crdschema":         {"generators/model"},
	"internal/apidocs":             {"generators", "generators/crdschema", "generators/driver", "generators/model", "internal/project"},
	"internal/apidocs/apidocstest": {},
	"generators/protobuf":          {"generators/model", "internal/files", "internal/project", "templates"},
	"generators/model":             {"internal/project"},
	"generators/driver":            {"internal/files"},
	"internal/scaffold":            {"", "boilerplate", "generators/model", "internal/files", "internal/gomod", "internal/project", "internal/version", "templates"},
	"internal/deploy":              {"internal/files", "internal/image", "internal/project"},
	"internal/image":               {"internal/files"},
	"internal/gomod":               {"internal/version"},
	"internal/runlock":             {"internal/private"},
	"internal/release":             {},
	"hack/modproxy":                {"internal/release", "internal/version"},
	"internal/datastore":           {},
	"internal/upgrade":             {},
	"internal/files":               {},
	"internal/freeport":            {},
	"internal/testpg":              {"internal/freeport"},
	"internal/testmysql":           {"internal/freeport"},
	"internal/kubeconfig":          {},
	"internal/private":             {},
	"internal/progress":            {},
	"internal/project":             {},
	"internal/version":             {},
	"pkg/apiserver":                {"internal/datastore", "internal/files", "internal/freeport", "internal/kubeconfig", "internal/private", "internal/runlock", "pkg/builders"},
	"pkg/builders":                 {},
	"pkg/conformance":              {"internal/project", "pkg/apiserver", "pkg/builders"},
	"pkg/controllers":              {"internal/project"},
	"pkg/testenv":                  {"pkg/apiserver"},
	"templates":                    {},
	"boilerplate":                  {},
	"bench":                        {"bench/internal/proc", "generators/protobuf", "internal/freeport", "internal/testpg"},
	"bench/internal/proc":          {"internal/freeport"},
	"test/harness":                 {"internal/freeport"},
	"test/kinestorage":             {"internal/testpg", "pkg/apiserver"},
	"test/fixtures":                {},
	"test/fixtures/timer/v1":       {},
	"test/fixtures/widgets/v1":     {},
}

type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// TestLayout: no import runs back up the layers, and no package holds more
// than a fifth of the module's code (non-test Go lines; example/ and test/
// are projects of their own, third_party/ is upstream's code).
func TestLayout(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/apiserver-boot/apiserver-boot"
	lines := map[string]int{}
	total := 0
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if strings.HasPrefix(rel, "example/") || len(p.GoFiles) == 0 {
			continue // a project of its own, or only tests (the e2e and fault tiers)
		}
		allowed, layered := layers[rel]
		if !layered {
			t.Errorf("package %s is not in layout_test.go's layers: list what it may import", rel)
		}
		checkImports(t, rel, p.Imports, allowed)
		if strings.HasPrefix(rel, "test/") {
			continue
		}
		for _, f := range p.GoFiles {
			if strings.HasPrefix(rel, "third_party/") {
				break // upstream code carried unchanged (its copy test keeps it so): not counted
			}
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			n := bytes.Count(b, []byte("\n"))
			lines[rel] += n
			total += n
		}
	}
	for pkg, n := range lines {
		if n*5 > total {
			t.Errorf("%s holds %d of %d lines, more than a fifth: split it by role", pkg, n, total)
		}
	}
	if len(lines) < 10 {
		t.Fatalf("listed only %v", lines)
	}
}

// checkImports fails for every import of this module by pkg that allowed
// does not list.
func checkImports(t *testing.T, pkg string, imports, allowed []string) {
	t.Helper()
	const module = "github.com/apiserver-boot/apiserver-boot"
	for _, imp := range imports {
		if imp != module && !strings.HasPrefix(imp, module+"/") {
			continue
		}
		dep := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
		if !slices.Contains(allowed, dep) {
			t.Errorf("%s imports %s: not a layer below it (allowed: %s)", pkg, dep, strings.Join(allowed, ", "))
		}
	}
}
