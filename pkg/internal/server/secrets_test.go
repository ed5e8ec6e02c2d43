package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/private"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/standalone"
)

// TestSecretsArePrivate: the state folder, the token and the self-signed
// key are the owner's only; a token or key group or others may read is
// refused at start, naming the file and the fix.
func TestSecretsArePrivate(t *testing.T) {
	wd, _ := os.Getwd()
	dir := t.TempDir()
	os.Chdir(dir)
	defer os.Chdir(wd)

	o := NewOptions()
	tok, err := (&standalone.Mode{TokenFile: o.TokenFile}).Token()
	if err != nil || tok == "" {
		t.Fatalf("token: %q %v", tok, err)
	}
	if err := o.selfSignedCerts(); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{
		private.StateDir:                           0o700,
		o.TokenFile:                                0o600,
		o.SecureServing.ServerCert.CertDirectory:   0o700,
		o.SecureServing.ServerCert.CertKey.KeyFile: 0o600,
	} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v, want mode %04o", path, err, want)
		}
	}

	os.Chmod(o.TokenFile, 0o644)
	if _, err := (&standalone.Mode{TokenFile: o.TokenFile}).Token(); err == nil || !strings.Contains(err.Error(), "--token-file "+o.TokenFile+" is open to group or others (mode 0644)") {
		t.Errorf("a token others may read: %v", err)
	}
	key := o.SecureServing.ServerCert.CertKey.KeyFile
	os.Chmod(key, 0o644)
	o = NewOptions()
	if err := o.selfSignedCerts(); err == nil || !strings.Contains(err.Error(), filepath.Join(private.StateDir, "certs", "apiserver.key")+" is open to group or others") {
		t.Errorf("a key others may read: %v", err)
	}
}
