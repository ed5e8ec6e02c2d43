package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCustomSubresourceInEveryVersion: a custom subresource belongs to the
// kind. Created for one version of a kind served in two, it is registered in
// both (the request type in each version and the internal package) with one
// handler, in the storage version; created again for the other version it is
// a no-op; a version added later carries it; and a project whose later
// version lacks the request type (as an earlier release left it) gets an
// error naming the command that adds it.
func TestCustomSubresourceInEveryVersion(t *testing.T) {
	dir := newProject(t)
	apis := filepath.Join(dir, "pkg", "apis")
	read := func(parts ...string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(append([]string{apis}, parts...)...))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	exists := func(parts ...string) bool {
		_, err := os.Stat(filepath.Join(append([]string{apis}, parts...)...))
		return err == nil
	}
	mustRun := func(args ...string) string {
		t.Helper()
		out, err := run(t, dir, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if strings.Contains(out, "warning") {
			t.Errorf("%s warns:\n%s", strings.Join(args, " "), out)
		}
		return out
	}
	registered := func(versions ...string) {
		t.Helper()
		for _, v := range versions {
			if !strings.Contains(read("stable", v, "zz_generated.register.go"), "\t\t&CronTabRestart{},\n") {
				t.Errorf("CronTabRestart is not registered in stable/%s", v)
			}
			if !strings.Contains(read("stable", v, "crontab_types.go"), "// +subresource:rest:path=restart,request=CronTabRestart\n") {
				t.Errorf("stable/%s CronTab lacks the +subresource:rest marker", v)
			}
			if !strings.Contains(read("stable", v, "zz_generated.conversion.go"), "func Convert_"+v+"_CronTabRestart_To_stable_CronTabRestart(") {
				t.Errorf("stable/%s CronTabRestart has no conversion to the internal type", v)
			}
		}
		if !strings.Contains(read("stable", "zz_generated.register.go"), "\t\t&CronTabRestart{},\n") {
			t.Errorf("CronTabRestart is not registered in the internal package")
		}
		if !strings.Contains(read("zz_generated.register.go"), `builders.NewSubresource("restart", func() runtime.Object { return &stable.CronTabRestart{} }, (&stablev1.CronTabStrategy{}).Restart)`) {
			t.Errorf("restart is not served from the storage version's handler:\n%s", read("zz_generated.register.go"))
		}
	}

	mustRun("create", "version", "--group", "stable", "--version", "v2", "--kind", "CronTab", "--from", "v1")
	out := mustRun("create", "subresource", "--subresource", "restart", "--group", "stable", "--version", "v1", "--kind", "CronTab")
	if !strings.Contains(out, "handled by (*CronTabStrategy).Restart in pkg/apis/stable/v1") {
		t.Errorf("create subresource should say where the handler is:\n%s", out)
	}
	registered("v1", "v2")
	if !exists("stable", "v1", "crontab_restart_rest.go") || exists("stable", "v2", "crontab_restart_rest.go") {
		t.Errorf("the handler should be scaffolded once, in the storage version v1")
	}

	// For the other version: already there.
	out = mustRun("create", "subresource", "--subresource", "restart", "--group", "stable", "--version", "v2", "--kind", "CronTab")
	if !strings.Contains(out, "Nothing to do: CronTab already has the restart subresource") || exists("stable", "v2", "crontab_restart_rest.go") {
		t.Errorf("create subresource for v2 should be a no-op:\n%s", out)
	}
	mustRun("generate", "--force")

	// A version added later carries it, copied or fresh.
	mustRun("create", "version", "--group", "stable", "--version", "v3", "--kind", "CronTab", "--from", "v2")
	mustRun("create", "group", "version", "resource", "--group", "stable", "--version", "v1beta1", "--kind", "CronTab")
	registered("v1", "v2", "v3", "v1beta1")

	// A version without the request type, as `create version` of an earlier
	// release left it when the subresource came after the version.
	os.Remove(filepath.Join(apis, "stable", "v3", "crontab_restart_types.go"))
	types := filepath.Join(apis, "stable", "v3", "crontab_types.go")
	os.WriteFile(types, []byte(strings.Replace(read("stable", "v3", "crontab_types.go"), "// +subresource:rest:path=restart,request=CronTabRestart\n", "", 1)), 0o644)
	out, err := run(t, dir, "generate")
	if err == nil || !strings.Contains(err.Error(), "pkg/apis/stable/v3 declares no CronTabRestart") ||
		!strings.Contains(err.Error(), "run `apiserver-boot create subresource --subresource restart --group stable --version v1 --kind CronTab`") {
		t.Fatalf("generate should name the missing request type and the command that adds it: %v\n%s", err, out)
	}
	mustRun("create", "subresource", "--subresource", "restart", "--group", "stable", "--version", "v3", "--kind", "CronTab")
	registered("v1", "v2", "v3", "v1beta1")
	if exists("stable", "v3", "crontab_restart_rest.go") {
		t.Errorf("a second handler was scaffolded in v3")
	}

	// The handler runs from the storage version: left in another, generate
	// says where it must go (rather than the build failing).
	rest := read("stable", "v1", "crontab_restart_rest.go")
	os.Remove(filepath.Join(apis, "stable", "v1", "crontab_restart_rest.go"))
	os.WriteFile(filepath.Join(apis, "stable", "v2", "crontab_restart_rest.go"), []byte(strings.Replace(rest, "package v1\n", "package v2\n", 1)), 0o644)
	out, err = run(t, dir, "generate")
	if err == nil || !strings.Contains(err.Error(), "calls (*CronTabStrategy).Restart, which is not declared in CronTab's storage version v1") ||
		!strings.Contains(err.Error(), "move it there from pkg/apis/stable/v2/crontab_restart_rest.go:") {
		t.Fatalf("generate should say the handler must be in the storage version: %v\n%s", err, out)
	}
}

// TestCustomSubresourceCopiesTheRequestType: a version that lacks the
// request type of a custom subresource gets it copied, with its fields, its
// doc comment and the types of its file it uses, from the version that
// declares it (the storage version first), whichever command adds it:
// create subresource (which generate advises for a project an earlier
// release left so), create version --from, and create group version
// resource of the kind. An empty copy would lose the fields,
// and generate would refuse it.
func TestCustomSubresourceCopiesTheRequestType(t *testing.T) {
	dir := newProject(t)
	v1 := filepath.Join(dir, "pkg", "apis", "stable", "v1")
	v2 := filepath.Join(dir, "pkg", "apis", "stable", "v2")
	mustRun(t, dir, "create", "version", "--group", "stable", "--version", "v2", "--kind", "CronTab", "--from", "v1")
	mustRun(t, dir, "create", "subresource", "--subresource", "restart", "--group", "stable", "--version", "v1", "--kind", "CronTab")

	// v2 as an earlier release left it: no request type, no marker.
	os.Remove(filepath.Join(v2, "crontab_restart_types.go"))
	types := filepath.Join(v2, "crontab_types.go")
	b, _ := os.ReadFile(types)
	os.WriteFile(types, []byte(strings.Replace(string(b), "// +subresource:rest:path=restart,request=CronTabRestart\n", "", 1)), 0o644)

	// The fields the user gave the request in v1, with a type of the file
	// they use, and declarations the copy leaves out.
	request := filepath.Join(v1, "crontab_restart_types.go")
	req, _ := os.ReadFile(request)
	src := strings.Replace(string(req), "\t// Add the fields of the request here.\n",
		"\t// Reason is why the CronTab restarts.\n\t// +optional\n\tReason string `json:\"reason,omitempty\"`\n\t// Policy says what happens to running jobs.\n\t// +optional\n\tPolicy RestartPolicy `json:\"policy,omitempty\"`\n", 1)
	src += "\n// RestartPolicy says what a restart does to running jobs.\ntype RestartPolicy struct {\n\t// Wait for running jobs to finish.\n\t// +optional\n\tWait bool `json:\"wait,omitempty\"`\n}\n" +
		"\n// DefaultReason is the reason of a restart that gives none.\nconst DefaultReason = \"manual\"\n"
	if src == string(req) {
		t.Fatal("no field placeholder in the request type")
	}
	os.WriteFile(request, []byte(src), 0o644)

	out, err := run(t, dir, "generate")
	if err == nil || !strings.Contains(err.Error(), "pkg/apis/stable/v2 declares no CronTabRestart") ||
		!strings.Contains(err.Error(), "copied from the version that declares it, or copy the type from pkg/apis/stable/v1/crontab_restart_types.go:") {
		t.Fatalf("generate should name the command and where the type is declared: %v\n%s", err, out)
	}

	copied := func(version string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "pkg", "apis", "stable", version, "crontab_restart_types.go"))
		if err != nil {
			t.Fatal(err)
		}
		got := string(b)
		for _, want := range []string{"package " + version + "\n", "\t// Reason is why the CronTab restarts.\n\t// +optional\n\tReason string `json:\"reason,omitempty\"`\n",
			"\tPolicy RestartPolicy `json:\"policy,omitempty\"`\n", "// RestartPolicy says what a restart does to running jobs.\ntype RestartPolicy struct {\n",
			"// +subresource:request\ntype CronTabRestart struct {\n"} {
			if !strings.Contains(got, want) {
				t.Errorf("stable/%s lacks %q of v1's request type:\n%s", version, want, got)
			}
		}
		if strings.Contains(got, "DefaultReason") {
			t.Errorf("stable/%s: only the request type and the types it uses are copied:\n%s", version, got)
		}
	}
	mustRun(t, dir, "create", "subresource", "--subresource", "restart", "--group", "stable", "--version", "v2", "--kind", "CronTab")
	copied("v2")

	// A version copied from another, and a fresh one.
	mustRun(t, dir, "create", "version", "--group", "stable", "--version", "v3", "--kind", "CronTab", "--from", "v2")
	copied("v3")
	mustRun(t, dir, "create", "group", "version", "resource", "--group", "stable", "--version", "v1beta1", "--kind", "CronTab")
	copied("v1beta1")
	// No field is lost.
	mustRun(t, dir, "generate")
}
