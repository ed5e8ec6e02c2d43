package project

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadChecksGroups: a group PROJECT records is checked as create
// checks --group: a hand edit does not reach +groupName unchecked.
func TestLoadChecksGroups(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("domain: example.com\ngroups:\n  widgets: Widgets_SH\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), `groups.widgets "Widgets_SH" is not a valid API group name`) {
		t.Errorf("want an error naming groups.widgets, got %v", err)
	}
}
