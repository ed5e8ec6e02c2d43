package private

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDirAndCheck(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, StateDir)
	os.MkdirAll(state, 0o755) // as an older apiserver-boot left it
	if err := Dir(filepath.Join(state, "certs")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{state, filepath.Join(state, "certs")} {
		if st, _ := os.Stat(d); st.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %04o, want 0700", d, st.Mode().Perm())
		}
	}
	// Another folder of the user's is created 0700, but not changed when it exists.
	mine := filepath.Join(root, "mine")
	os.MkdirAll(mine, 0o755)
	if err := Dir(mine); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(mine); st.Mode().Perm() != 0o755 {
		t.Errorf("the user's folder changed to %04o", st.Mode().Perm())
	}

	token := filepath.Join(state, "token")
	os.WriteFile(token, []byte("t\n"), 0o600)
	if err := Check("--token-file", token); err != nil {
		t.Errorf("a 0600 token: %v", err)
	}
	os.Chmod(token, 0o640)
	if err := Check("--token-file", token); err == nil || !strings.Contains(err.Error(), "--token-file "+token+" is open to group or others (mode 0640)") || !strings.Contains(err.Error(), "chmod 600 "+token) {
		t.Errorf("a 0640 token: %v", err)
	}
}
