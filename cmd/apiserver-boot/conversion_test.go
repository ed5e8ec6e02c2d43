package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// editFile replaces old by new in the file at path, failing when old is not there.
func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s: %q not found in\n%s", path, old, b)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scaffoldedSpecEnd is the end of the scaffolded CronTabSpec.
const scaffoldedSpecEnd = "Replicas int32 `json:\"replicas,omitempty\"`\n}\n\n// CronTabStatus"

// TestGenerateFailsWhileAFieldIsLost is the first hour of a new user: a
// required field added to v2 only (v1 is the storage version, so the
// internal type lacks it) must make generate fail, naming the version, kind,
// Go type, field and JSON path and both ways out, with the stub it wrote;
// the failure survives the generate cache, a "filled in" conversion that
// never reads the field fails too, and adding the field to the storage
// version (and deleting the stub, as generate then says) passes. Then the
// other direction, nested, and a changed basic type.
func TestGenerateFailsWhileAFieldIsLost(t *testing.T) {
	dir := newProject(t)
	if out, err := run(t, dir, "create", "version", "--group", "stable", "--version", "v2", "--kind", "CronTab", "--from", "v1"); err != nil {
		t.Fatalf("create version: %v\n%s", err, out)
	}
	v1Types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	v2Types := filepath.Join(dir, "pkg", "apis", "stable", "v2", "crontab_types.go")
	conv := filepath.Join(dir, "pkg", "apis", "stable", "v2", "crontab_conversion.go")
	schedule := "Replicas int32 `json:\"replicas,omitempty\"`\n\t// Schedule is a cron expression.\n\t// +required\n\tSchedule string `json:\"schedule\"`\n}\n\n// CronTabStatus"
	editFile(t, v2Types, scaffoldedSpecEnd, schedule)

	wantLost := []string{
		"stable.example.com/v2 CronTab: spec.schedule (field Schedule string of v2.CronTabSpec) is not in the internal type stable.CronTabSpec",
		"what a client sends in it through v2 would be lost",
		"add the field to CronTabSpec in the storage version v1 (pkg/apis/stable/v1/crontab_types.go:",
		"convert it in Convert_v2_CronTabSpec_To_stable_CronTabSpec, the stub generate wrote at pkg/apis/stable/v2/crontab_conversion.go:",
	}
	for i := 0; i < 2; i++ { // the second run: the failure is not hidden by the generate cache
		out, err := run(t, dir, "generate")
		if err == nil {
			t.Fatalf("generate #%d passed while v2's spec.schedule does not round-trip through the internal type:\n%s", i+1, out)
		}
		for _, want := range wantLost {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("generate #%d: error lacks %q:\n%v", i+1, want, err)
			}
		}
		if i == 0 && !strings.Contains(out, "generated pkg/apis/stable/v2/crontab_conversion.go") {
			t.Errorf("the stub should be written (and said so) although generate fails:\n%s", out)
		}
	}
	stub, err := os.ReadFile(conv)
	if err != nil || !strings.Contains(string(stub), `return builders.UnconvertedFields("Convert_v2_CronTabSpec_To_stable_CronTabSpec", "Schedule")`) {
		t.Fatalf("stub not written: %v\n%s", err, stub)
	}

	// "Filled in" without reading the field: still lost.
	editFile(t, conv, `return builders.UnconvertedFields("Convert_v2_CronTabSpec_To_stable_CronTabSpec", "Schedule")`, "return nil")
	editFile(t, conv, "\t\"github.com/apiserver-boot/apiserver-boot/pkg/builders\"\n", "")
	_, err = run(t, dir, "generate")
	if err == nil || !regexp.MustCompile(`spec\.schedule \(field Schedule string of v2\.CronTabSpec\) is never read by Convert_v2_CronTabSpec_To_stable_CronTabSpec at pkg/apis/stable/v2/crontab_conversion\.go:\d+`).MatchString(err.Error()) {
		t.Fatalf("a conversion that never reads in.Schedule should fail generate, naming it: %v", err)
	}

	// Way out 1: the storage version gets the field; the stub is then in the way.
	os.WriteFile(conv, stub, 0o644)
	editFile(t, v1Types, scaffoldedSpecEnd, schedule)
	_, err = run(t, dir, "generate")
	if err == nil || !strings.Contains(err.Error(), "Convert_v2_CronTabSpec_To_stable_CronTabSpec at pkg/apis/stable/v2/crontab_conversion.go:") ||
		!strings.Contains(err.Error(), "conversion-gen now converts every field of v2.CronTabSpec: delete the stub") {
		t.Fatalf("a stub no longer needed still fails every conversion: generate should say to delete it: %v", err)
	}
	os.Remove(conv)
	out, err := run(t, dir, "generate")
	if err != nil {
		t.Fatalf("generate with the field in the storage version: %v\n%s", err, out)
	}

	// The other direction, a field of the storage version (so of the
	// internal type) that v2 lacks, nested in a type of its own: reading
	// through v2 and writing back would erase it.
	specEnd := schedule // both versions have the schedule now
	nested := "Replicas int32 `json:\"replicas,omitempty\"`\n\t// +optional\n\tTemplate *JobTemplate `json:\"template,omitempty\"`\n}\n\n" +
		"// JobTemplate is what runs.\ntype JobTemplate struct {\n\t// +optional\n\tImage string `json:\"image,omitempty\"`\n%s}\n\n// CronTabStatus"
	editFile(t, v1Types, specEnd, strings.Replace(nested, "%s", "\t// +optional\n\tArgs []string `json:\"args,omitempty\"`\n", 1))
	editFile(t, v2Types, specEnd, strings.Replace(nested, "%s", "", 1))
	// And a changed type, which conversion-gen converts with a Go conversion (int64 to int32) without a warning.
	editFile(t, v2Types, "Replicas int32 `json:\"replicas,omitempty\"`\n\t// +optional\n\tTemplate", "Replicas int64 `json:\"replicas,omitempty\"`\n\t// +optional\n\tTemplate")

	out, err = run(t, dir, "generate")
	if err == nil {
		t.Fatalf("generate passed while v1's spec.template.args is lost through v2:\n%s", out)
	}
	for _, want := range []string{
		"stable.example.com/v2 CronTab: spec.template.args (field Args []string of the internal type stable.JobTemplate, from the storage version v1) is not in v2.JobTemplate",
		"add the field to JobTemplate in v2 (pkg/apis/stable/v2/crontab_types.go:",
		"convert it in Convert_stable_JobTemplate_To_v2_JobTemplate, the stub generate wrote at pkg/apis/stable/v2/crontab_conversion.go:",
		"stable.example.com/v2 CronTab: spec.replicas (field Replicas int64 of v2.CronTabSpec) is int32 in the internal type stable.CronTabSpec (the storage version v1's)",
		"give it another Go name in v2 (the JSON name may stay)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
