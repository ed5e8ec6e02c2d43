// Command modproxy writes a release of the apiserver-boot module, from the
// checkout it runs in, into a folder laid out as a module proxy
// (GOPROXY=file://<folder>), and prints the module zip's checksum. Run by
// hack/release.sh (make release).
//
//	go run ./hack/modproxy -version v0.3.0 -out dist/proxy
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/release"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

func main() {
	v := flag.String("version", "", "The release, vX.Y.Z (required)")
	out := flag.String("out", "dist/proxy", "The proxy folder")
	dir := flag.String("dir", ".", "The checkout of the module")
	flag.Parse()
	if err := run(*dir, *out, *v); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func run(dir, out, v string) error {
	if !version.IsRelease(v) {
		return fmt.Errorf("-version %q is not a release version: want vX.Y.Z or vX.Y.Z-pre (semver, no +build, not a pseudo-version)", v)
	}
	// The version's time is its commit's, so that a release is reproducible.
	when := time.Now()
	cmd := exec.Command("git", "log", "-1", "--format=%cI")
	cmd.Dir = dir
	if b, err := cmd.Output(); err == nil {
		if t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b))); err == nil {
			when = t
		}
	}
	sum, err := release.Write(dir, out, version.Module, v, when)
	if err != nil {
		return err
	}
	fmt.Println(sum)
	return nil
}
