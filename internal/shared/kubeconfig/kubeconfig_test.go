package kubeconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	ours := "apiVersion: v1\nkind: Config\ncurrent-context: crontab\ncontexts:\n- name: crontab\n  context: {cluster: crontab}\nclusters:\n- name: crontab\n  cluster: {server: https://127.0.0.1:9443}\n"
	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "none"), ""},
		{"ours", write("ours", ours), ""},
		{"another cluster's", write("theirs", strings.ReplaceAll(ours, "crontab", "prod")), `is not this project's (its current context is "prod", not "crontab")`},
		{"go.mod", write("go.mod", "module example.com/crontab\n\ngo 1.26\n"), "exists and is not a kubeconfig"},
	} {
		err := Replaceable("--kubeconfig", tc.path, "crontab")
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--kubeconfig "+tc.path)) {
			t.Errorf("%s: want %q, got %v", tc.name, tc.want, err)
		}
	}
}
