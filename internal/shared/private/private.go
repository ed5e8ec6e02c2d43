// Package private keeps what only the project's user may read private: the
// state folder of a project (.apiserver-boot/) and the secrets in it.
package private

import (
	"fmt"
	"os"
	"path/filepath"
)

// StateDir is the folder, in a project's root (or an apiserver's working
// directory), of what apiserver-boot and a standalone apiserver keep:
// the generate cache, the token, certificates and keys, embedded etcd data.
const StateDir = ".apiserver-boot"

// Dir creates dir for its owner only (0700). The state folder (StateDir,
// or a folder in it), being apiserver-boot's, is also made 0700 when it
// exists with more; another existing folder is left as its owner set it.
func Dir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// The folders from the state folder down to dir.
	var chain []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if filepath.Base(d) == StateDir {
			for _, f := range chain {
				if st, err := os.Stat(f); err == nil && st.Mode().Perm()&0o077 != 0 {
					if err := os.Chmod(f, 0o700); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// Check refuses a secret (token, private key) that group or others may
// read or write, naming the flag it comes from, the file and the fix.
func Check(flag, path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s %s is open to group or others (mode %04o): it must be private to its owner; run: chmod 600 %s", flag, path, perm, path)
	}
	return nil
}
