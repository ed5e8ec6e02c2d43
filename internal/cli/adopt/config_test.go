package adopt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadConfig(dir); err == nil || !strings.Contains(err.Error(), "apiservice.yaml does not exist: run apiserver-boot build config first") {
		t.Errorf("a missing file: %v", err)
	}
	file := filepath.Join(dir, "apiservice.yaml")
	doc := `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: %s.stable.example.com}
spec:
  group: stable.example.com
  version: %s
  service: {namespace: ns, name: crontab-apiserver, port: 443}
  caBundle: Y2E=
  groupPriorityMinimum: 2000
  versionPriority: %s
`
	y := strings.Replace(strings.Replace(doc, "%s", "v1", 2), "%s", "100", 1) + "---\n" +
		strings.Replace(strings.Replace(doc, "%s", "v2", 2), "%s", "200", 1)
	if err := os.WriteFile(file, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Versions("stable.example.com"), ","); got != "v2,v1" || c.Service.Name != "crontab-apiserver" || string(c.CABundle) != "ca" {
		t.Errorf("versions %s (want v2,v1, most preferred first), service %v, caBundle %q", got, c.Service, c.CABundle)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(y, "caBundle:", "caBundel:", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(dir); err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "caBundel") {
		t.Errorf("an unknown field: %v", err)
	}
}
