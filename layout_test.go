package apiserverboot

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// layers lists, per package of the CLI's pipeline, the packages of this
// module it may import: imports run down the layers only (docs/design.md).
var layers = map[string][]string{
	"generators":                 {"generators/model", "generators/protobuf", "generators/crdschema", "generators/driver", "internal/files", "internal/private", "internal/project", "templates", "third_party/validation-gen"},
	"third_party/validation-gen": {},
	"generators/crdschema":       {"generators/model"},
	"generators/protobuf":        {"generators/model", "internal/files", "internal/project", "templates"},
	"generators/model":           {"internal/project"},
	"generators/driver":          {"internal/files"},
	"internal/scaffold":          {"internal/files", "templates"},
	"internal/files":             {},
	"internal/project":           {},
	"internal/gomod":             {"internal/version"},
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
		if strings.HasPrefix(rel, "example/") || strings.HasPrefix(rel, "test/") {
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
		allowed, layered := layers[rel]
		if !layered {
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			ok := false
			for _, a := range allowed {
				ok = ok || a == dep
			}
			if !ok {
				t.Errorf("%s imports %s: not a layer below it (allowed: %s)", rel, dep, strings.Join(allowed, ", "))
			}
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
