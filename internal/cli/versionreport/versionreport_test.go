package versionreport

import (
	"bytes"
	"strings"
	"testing"

	apiserverboot "github.com/apiserver-boot/apiserver-boot"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// TestVersionReportRelease: a release prints its version first, and the
// module line with the checksum projects get in go.sum.
func TestVersionReportRelease(t *testing.T) {
	r, err := New(version.Info{Version: "v0.3.0", Sum: "h1:abc="}, apiserverboot.GoMod)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.Write(&b, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "apiserver-boot v0.3.0\n  module      "+version.Module+" v0.3.0 h1:abc=\n") {
		t.Errorf("got\n%s", b.String())
	}
	b.Reset()
	if err := r.Write(&b, "yaml"); err != nil || !strings.Contains(b.String(), "version: v0.3.0\n") || !strings.Contains(b.String(), "release: true\n") {
		t.Errorf("yaml: %v\n%s", err, b.String())
	}
}
