package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crontabCRD is the CRD manifest of the scaffolded CronTab, edited after
// controller-gen: a rule and bounds added, status.conditions left out.
const crontabCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  names:
    kind: CronTab
    listKind: CronTabList
    plural: crontabs
    singular: crontab
    shortNames: [ct]
    categories: [all]
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    selectableFields:
    - jsonPath: .spec.replicas
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion:
            type: string
          kind:
            type: string
          metadata:
            type: object
          spec:
            type: object
            properties:
              replicas:
                type: integer
                format: int32
                minimum: 0
                maximum: 10
            x-kubernetes-validations:
            - rule: "!has(self.replicas) || self.replicas != 7"
              message: seven is not served
          status:
            type: object
            properties:
              replicas:
                type: integer
                format: int32
              observedGeneration:
                type: integer
                format: int64
`

// TestGenerateFromACRDManifest: a CRD manifest at kubebuilder's path is
// the kind's schema in zz_generated.schemas.go (with its path), and gives
// the registration its names, columns, selectable fields and
// subresources; the differences with the markers are one warning. Editing
// the manifest makes generate run again; a manifest field the Go type
// lacks stops generate at the manifest's line, writing nothing.
func TestGenerateFromACRDManifest(t *testing.T) {
	dir := newProject(t)
	manifest := filepath.Join(dir, "config", "crd", "bases", "stable.example.com_crontabs.yaml")
	os.MkdirAll(filepath.Dir(manifest), 0o755)
	if err := os.WriteFile(manifest, []byte(crontabCRD), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, dir, "generate")
	if strings.Contains(out, "up to date") {
		t.Fatalf("a new manifest left generate up to date:\n%s", out)
	}
	if n := strings.Count(out, "config/crd/bases/stable.example.com_crontabs.yaml: CronTab's schema is this manifest's"); n != 1 {
		t.Errorf("want one warning about the manifest, got %d:\n%s", n, out)
	}
	if !strings.Contains(out, "v1 .status.conditions (not in the manifest: pruned)") || !strings.Contains(out, "v1 .spec (x-kubernetes-validations)") {
		t.Errorf("the warning does not list the differences:\n%s", out)
	}
	schemas, _ := os.ReadFile(filepath.Join(dir, "pkg", "apis", "zz_generated.schemas.go"))
	for _, want := range []string{`Manifest:  "config/crd/bases/stable.example.com_crontabs.yaml"`, `\"maximum\":10`, `seven is not served`} {
		if !strings.Contains(string(schemas), want) {
			t.Errorf("zz_generated.schemas.go lacks %s:\n%s", want, schemas)
		}
	}
	if strings.Contains(string(schemas), "conditions") {
		t.Errorf("zz_generated.schemas.go has status.conditions, which the manifest leaves out")
	}
	register, _ := os.ReadFile(filepath.Join(dir, "pkg", "apis", "zz_generated.register.go"))
	// gofmt aligns the fields: compare with spaces collapsed.
	flat := strings.Join(strings.Fields(string(register)), " ")
	for _, want := range []string{`ShortNames: []string{"ct"}`, `Categories: []string{"all"}`, `StatusSubresource: true`,
		`SpecReplicasPath: ".spec.replicas"`, `{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"}`, "ExactColumns: true", `SelectableFields: []string{".spec.replicas"}`} {
		if !strings.Contains(flat, want) {
			t.Errorf("zz_generated.register.go lacks %s:\n%s", want, register)
		}
	}

	// A field the Go type lacks: an error at the manifest's line and the
	// Go type's, and nothing written.
	bad := strings.Replace(crontabCRD, "                maximum: 10\n", "                maximum: 10\n              schedule:\n                type: string\n", 1)
	os.WriteFile(manifest, []byte(bad), 0o644)
	before := tree(t, dir)
	_, err := run(t, dir, "generate")
	if err == nil || !strings.Contains(err.Error(), "config/crd/bases/stable.example.com_crontabs.yaml:48") || !strings.Contains(err.Error(), ".spec.schedule") || !strings.Contains(err.Error(), "pkg/apis/stable/v1/crontab_types.go:") {
		t.Fatalf("want an error at the manifest's line 48 and the Go type's, got %v", err)
	}
	for path, content := range tree(t, dir) {
		if before[path] != content {
			t.Errorf("%s written by a failed generate", path)
		}
	}
}
