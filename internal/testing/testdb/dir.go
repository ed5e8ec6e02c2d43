package testdb

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// systemUser is the credential of db.SystemUser, which the database's
// package creates: the servers refuse to run as root.
func systemUser(db *Database) (*syscall.Credential, error) {
	u, err := user.Lookup(db.SystemUser)
	if err != nil {
		return nil, fmt.Errorf("running as root, %s must run as another user, and there is no %q user (%v): run the tests as a non-root user, or create one (useradd --system %s)", db.Name, db.SystemUser, err, db.SystemUser)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// makeDir creates the server's folder, owned by the user the server runs
// as, under a temporary folder that user can reach ($TMPDIR may be under
// /root, which the system user cannot enter: /tmp then; and /tmp when
// Database.ShortDir and $TMPDIR is long).
func (s *Server) makeDir() (string, error) {
	parent := os.TempDir()
	if s.cred != nil && !reachable(parent) || s.db.ShortDir && len(parent) > 60 {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, s.db.DirPrefix)
	if err != nil {
		return "", err
	}
	if s.cred != nil {
		if err := s.chown(dir); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
		if !reachable(dir) {
			os.RemoveAll(dir)
			return "", fmt.Errorf("%s cannot be reached by the %s user (a parent folder is closed to others): set TMPDIR to a folder all users can enter", dir, s.db.SystemUser)
		}
	}
	return dir, nil
}

// reachable tells whether every folder above dir lets others through
// (the system user is neither their owner nor, as a rule, in their group).
func reachable(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}
