package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTransactionRollback: files written, replaced and removed in a
// transaction are all put back as they were.
func TestTransactionRollback(t *testing.T) {
	dir := t.TempDir()
	kept, replaced, removed, added := filepath.Join(dir, "kept"), filepath.Join(dir, "replaced"), filepath.Join(dir, "removed"), filepath.Join(dir, "sub", "added")
	for path, content := range map[string]string{kept: "kept", replaced: "old", removed: "gone"} {
		os.WriteFile(path, []byte(content), 0o644)
	}
	tx := &Transaction{}
	if err := tx.Write(File{Path: kept, Content: []byte("kept")}, File{Path: replaced, Content: []byte("new")}, File{Path: added, Content: []byte("added")}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Remove(removed); err != nil {
		t.Fatal(err)
	}
	if tx.Unchanged != 1 || strings.Join(tx.Written(), ",") != replaced+","+added || strings.Join(tx.Removed(), ",") != removed {
		t.Fatalf("unchanged %d, written %v, removed %v", tx.Unchanged, tx.Written(), tx.Removed())
	}
	if _, err := os.Stat(removed); !os.IsNotExist(err) {
		t.Fatalf("removed file still there: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{kept: "kept", replaced: "old", removed: "gone"} {
		if b, _ := os.ReadFile(path); string(b) != want {
			t.Errorf("%s: %q after rollback, want %q", path, b, want)
		}
	}
	if _, err := os.Stat(added); !os.IsNotExist(err) {
		t.Errorf("a file the transaction added survived the rollback: %v", err)
	}
}

// TestWriteAtomicPermissions: the file has exactly the permissions asked
// for (keys 0600), also when it replaces a more open one.
func TestWriteAtomicPermissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key.pem")
	os.WriteFile(path, []byte("old"), 0o644)
	if err := WriteAtomic(path, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if b, _ := os.ReadFile(path); string(b) != "secret" {
		t.Errorf("content %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".key.pem.*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestFormatGoNamesTheLine(t *testing.T) {
	_, err := FormatGo("x.go", []byte("package x\n\nfunc f() {\n\treturn )\n}\n"))
	if err == nil || !strings.Contains(err.Error(), "x.go does not parse") || !strings.Contains(err.Error(), `line 4: "return )"`) {
		t.Fatalf("want a parse error naming the file and line, got %v", err)
	}
}

// TestTransactionModes: each file gets its own mode (a private key 0600),
// an unchanged file whose mode differs is only chmod-ed, and Rollback puts
// content and mode back.
func TestTransactionModes(t *testing.T) {
	dir := t.TempDir()
	key, same, added := filepath.Join(dir, "tls.key"), filepath.Join(dir, "same.yaml"), filepath.Join(dir, "added.yaml")
	if err := os.WriteFile(key, []byte("old key"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(same, []byte("same"), 0o644); err != nil {
		t.Fatal(err)
	}
	tx := &Transaction{}
	if err := tx.Write(File{Path: key, Content: []byte("new key"), Mode: 0o600}, File{Path: same, Content: []byte("same"), Mode: 0o600}, File{Path: added, Content: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{key: 0o600, same: 0o600, added: 0o644} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v (%v)", filepath.Base(path), st.Mode().Perm(), want, err)
		}
	}
	if tx.Unchanged != 1 {
		t.Errorf("unchanged %d, want 1 (same.yaml)", tx.Unchanged)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{key: "old key", same: "same"} {
		b, _ := os.ReadFile(path)
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 || string(b) != want {
			t.Errorf("%s after rollback: %q mode %v, want %q 0644", filepath.Base(path), b, st.Mode().Perm(), want)
		}
	}
	if _, err := os.Stat(added); !os.IsNotExist(err) {
		t.Errorf("added.yaml is still there after rollback: %v", err)
	}
}

// TestTransactionKeepsModes: without a Mode, a file keeps its mode, changed
// or not (a user's 0664 stays 0664); a new one is 0644.
func TestTransactionKeepsModes(t *testing.T) {
	dir := t.TempDir()
	same, changed, added := filepath.Join(dir, "same.go"), filepath.Join(dir, "changed.go"), filepath.Join(dir, "added.go")
	for _, p := range []string{same, changed} {
		if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o664); err != nil {
			t.Fatal(err)
		}
	}
	tx := &Transaction{}
	if err := tx.Write(File{Path: same, Content: []byte("old")}, File{Path: changed, Content: []byte("new")}, File{Path: added, Content: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{same: 0o664, changed: 0o664, added: 0o644} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v (%v)", filepath.Base(path), st.Mode().Perm(), want, err)
		}
	}
}
