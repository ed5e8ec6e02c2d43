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
// internal/ is in three groups: internal/cli holds the CLI's stages (what
// init, create, upgrade, run local, run in-cluster, build docs, build
// config, build container, migrate storage, api snapshot and version do,
// the command line's own messages, and the release tools' checks), above
// generators/ and used only by cmd/, which holds commands only, by hack/'s
// release tools and by each other; internal/shared holds small facts
// shared by the CLI, the generators and the runtime, which import only each
// other; internal/testing holds test harnesses (databases and the harness
// they share, the reference's reader), which import only internal/shared
// and each other. pkg/ is the runtime library of generated projects and
// imports, besides pkg/, only internal/shared; generated code calls its
// public packages (pkg/apiserver, pkg/builders, pkg/controllers,
// pkg/conformance, pkg/testenv), which share the server through
// pkg/internal (server, storage and its storagesuite, standalone, adoption,
// strategy, apigroup, validation, jsoncontent, openapi), out of users'
// reach. A package not listed here fails the test, and so does a listed
// import that breaks the groups' rule (groupRule).
var layers = map[string][]string{
	"":                                  {},
	"cmd/apiserver-boot":                {"", "boilerplate", "generators", "generators/driver", "generators/model", "internal/cli/adopt", "internal/cli/apidocs", "internal/cli/apisnapshot", "internal/cli/cmdline", "internal/cli/codegen", "internal/cli/deploy", "internal/cli/image", "internal/cli/incluster", "internal/cli/migrate", "internal/cli/runlocal", "internal/cli/scaffold", "internal/cli/upgrade", "internal/cli/versionreport", "internal/shared/datastore", "internal/shared/files", "internal/shared/gomod", "internal/shared/progress", "internal/shared/project", "internal/shared/version"},
	"generators":                        {"generators/model", "generators/protobuf", "generators/crdschema", "generators/driver", "internal/shared/files", "internal/shared/hooks", "internal/shared/private", "internal/shared/project", "templates", "third_party/validation-gen"},
	"third_party/validation-gen":        {},
	"generators/crdschema":              {"generators/model"},
	"internal/cli/apidocs":              {"generators", "generators/crdschema", "generators/driver", "generators/model", "internal/shared/progress", "internal/shared/project"},
	"internal/testing/apidocstest":      {},
	"generators/protobuf":               {"generators/model", "internal/shared/files", "internal/shared/project", "templates"},
	"generators/model":                  {"internal/shared/project"},
	"generators/driver":                 {"internal/shared/files"},
	"internal/cli/scaffold":             {"", "boilerplate", "generators", "generators/model", "internal/cli/codegen", "internal/shared/progress", "internal/shared/files", "internal/shared/gomod", "internal/shared/project", "internal/shared/version", "templates"},
	"internal/cli/deploy":               {"generators/model", "internal/shared/files", "internal/cli/image", "internal/shared/project"},
	"internal/cli/image":                {"internal/cli/gobuild", "internal/shared/files", "internal/shared/progress"},
	"internal/shared/gomod":             {"internal/shared/version"},
	"internal/shared/runlock":           {"internal/shared/private"},
	"internal/cli/release":              {},
	"hack/modproxy":                     {"internal/cli/release", "internal/shared/version"},
	"internal/cli/apicompat":            {},
	"hack/apicompat":                    {"internal/cli/apicompat", "internal/shared/version"},
	"internal/shared/adoption":          {},
	"internal/shared/datastore":         {},
	"internal/cli/upgrade":              {"", "generators", "generators/model", "internal/cli/codegen", "internal/cli/scaffold", "internal/shared/progress", "internal/shared/files", "internal/shared/gomod", "internal/shared/project", "internal/shared/version"},
	"internal/shared/files":             {},
	"internal/shared/hooks":             {},
	"internal/shared/freeport":          {},
	"internal/testing/testdb":           {"internal/shared/freeport", "internal/shared/proc"},
	"internal/testing/testpg":           {"internal/testing/testdb"},
	"internal/testing/testmysql":        {"internal/testing/testdb"},
	"internal/shared/kubeconfig":        {},
	"internal/shared/private":           {},
	"internal/shared/proc":              {},
	"internal/shared/progress":          {},
	"internal/shared/project":           {},
	"internal/shared/version":           {},
	"pkg/apiserver":                     {"pkg/builders", "pkg/internal/server"},
	"pkg/internal/server":               {"internal/shared/datastore", "internal/shared/private", "pkg/builders", "pkg/internal/adoption", "pkg/internal/apigroup", "pkg/internal/strategy", "pkg/internal/jsoncontent", "pkg/internal/openapi", "pkg/internal/standalone", "pkg/internal/storage", "pkg/internal/validation"},
	"pkg/internal/standalone":           {"internal/shared/files", "internal/shared/kubeconfig", "internal/shared/private", "pkg/internal/storage"},
	"pkg/internal/adoption":             {"internal/shared/adoption", "pkg/internal/storage"},
	"pkg/internal/storage":              {"internal/shared/adoption", "internal/shared/datastore", "internal/shared/files", "internal/shared/freeport", "internal/shared/private", "internal/shared/runlock"},
	"pkg/internal/storage/storagesuite": {"pkg/internal/storage"},
	"pkg/builders":                      {"pkg/internal/strategy"},
	"pkg/internal/strategy":             {"internal/shared/hooks"},
	"pkg/internal/apigroup":             {"pkg/builders"},
	"pkg/internal/jsoncontent":          {"pkg/builders"},
	"pkg/internal/openapi":              {"pkg/builders"},
	"pkg/internal/validation":           {"pkg/builders", "pkg/internal/jsoncontent", "pkg/internal/strategy"},
	"pkg/conformance":                   {"internal/shared/project", "pkg/builders", "pkg/internal/apigroup", "pkg/internal/server", "pkg/internal/storage"},
	"pkg/controllers":                   {"internal/shared/project"},
	"pkg/testenv":                       {"pkg/apiserver", "pkg/internal/server"},
	"templates":                         {},
	"boilerplate":                       {},
	"bench":                             {"bench/internal/proc", "generators/protobuf", "internal/shared/datastore", "internal/shared/freeport", "internal/testing/testpg"},
	"bench/internal/proc":               {"internal/shared/proc"},
	"test/harness":                      {"internal/shared/freeport", "internal/shared/proc"},
	"test/fixtures":                     {},
	"test/fixtures/timer":               {},
	"test/fixtures/timer/v1":            {},
	"test/fixtures/widgets/v1":          {},
	"internal/cli/codegen":              {"generators", "internal/shared/gomod", "internal/shared/progress", "internal/shared/version"},
	"internal/cli/migrate":              {"generators/model"},
	"internal/cli/apisnapshot":          {"generators", "generators/model", "internal/shared/proc", "internal/shared/project"},
	"internal/cli/cmdline":              {},
	"internal/cli/adopt":                {"internal/cli/deploy", "internal/shared/adoption"},
	"internal/cli/versionreport":        {"internal/shared/gomod", "internal/shared/version"},
	"internal/cli/gobuild":              {"internal/shared/proc", "internal/shared/progress"},
	"internal/cli/incluster":            {"internal/cli/deploy", "internal/shared/files", "internal/shared/proc"},
	"internal/cli/runlocal": {"generators", "generators/model", "internal/cli/codegen", "internal/cli/gobuild", "internal/shared/datastore", "internal/shared/files",
		"internal/shared/kubeconfig", "internal/shared/private", "internal/shared/proc", "internal/shared/progress", "internal/shared/project", "internal/shared/runlock"},
}

type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// maxCommandLines bounds cmd/apiserver-boot's non-test lines.
const maxCommandLines = 1500

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
		if err := groupRule(rel, allowed); err != "" {
			t.Error(err)
		}
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
	// The CLI's package holds commands only (docs/design.md): flags, input
	// checks and one call each; what a command does lives in internal/cli.
	if n := lines["cmd/apiserver-boot"]; n > maxCommandLines {
		t.Errorf("cmd/apiserver-boot holds %d non-test lines, more than %d: move what a command does into internal/cli", n, maxCommandLines)
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

// groupRule is the rule of internal/'s groups, for pkg's allowed imports:
// internal/shared and pkg/ import nothing of internal/cli or
// internal/testing (internal/shared nothing outside itself, pkg/ nothing
// but pkg/ and internal/shared), internal/testing imports only
// internal/shared and itself, and only cmd/, hack/ and internal/cli import
// internal/cli.
func groupRule(pkg string, allowed []string) string {
	for _, dep := range allowed {
		switch {
		case strings.HasPrefix(dep, "internal/cli/") && !strings.HasPrefix(pkg, "cmd/") && !strings.HasPrefix(pkg, "internal/cli/") && !strings.HasPrefix(pkg, "hack/"):
			return pkg + " may not import " + dep + ": internal/cli is the CLI's stages, used by cmd/ only"
		case strings.HasPrefix(dep, "internal/testing/") && (strings.HasPrefix(pkg, "pkg/") || strings.HasPrefix(pkg, "internal/shared/") || strings.HasPrefix(pkg, "internal/cli/") || strings.HasPrefix(pkg, "cmd/")):
			return pkg + " may not import " + dep + ": internal/testing is for tests and benchmarks"
		case strings.HasPrefix(pkg, "internal/shared/") && !strings.HasPrefix(dep, "internal/shared/"):
			return pkg + " may not import " + dep + ": internal/shared imports only internal/shared"
		case strings.HasPrefix(pkg, "internal/testing/") && !strings.HasPrefix(dep, "internal/shared/") && !strings.HasPrefix(dep, "internal/testing/"):
			return pkg + " may not import " + dep + ": internal/testing imports only internal/shared and internal/testing"
		case strings.HasPrefix(pkg, "pkg/") && !strings.HasPrefix(dep, "internal/shared/") && !strings.HasPrefix(dep, "pkg/"):
			return pkg + " may not import " + dep + ": pkg/ imports only pkg/ and internal/shared"
		}
	}
	return ""
}

// TestGroupRule: the groups' rule refuses an import across them.
func TestGroupRule(t *testing.T) {
	for _, tc := range []struct {
		pkg, dep string
		ok       bool
	}{
		{"cmd/apiserver-boot", "internal/cli/scaffold", true},
		{"pkg/apiserver", "internal/shared/datastore", true},
		{"pkg/apiserver", "internal/cli/deploy", false},
		{"pkg/apiserver", "internal/testing/testpg", false},
		{"internal/shared/runlock", "internal/shared/private", true},
		{"internal/shared/runlock", "generators/model", false},
		{"internal/testing/testmysql", "internal/cli/deploy", false},
		{"generators", "internal/cli/apidocs", false},
	} {
		if got := groupRule(tc.pkg, []string{tc.dep}) == ""; got != tc.ok {
			t.Errorf("%s importing %s: allowed %v, want %v", tc.pkg, tc.dep, got, tc.ok)
		}
	}
}
