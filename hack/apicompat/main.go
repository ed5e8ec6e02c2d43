// Command apicompat compares the exported API of pkg/ in this checkout with
// the last release's (the highest tag vX.Y.Z reachable from HEAD, below
// -version) and, given the version being released, refuses an incompatible
// change that version's number does not allow (docs/releasing.md). Without
// -version (CI: make apicompat) it reports and says which release may come
// next. Run by hack/release.sh before it builds anything.
//
//	go run ./hack/apicompat -version v0.4.0
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/apicompat"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

func main() {
	next := flag.String("version", "", "The version being released, vX.Y.Z or vX.Y.Z-pre; empty: report only")
	dir := flag.String("dir", ".", "The checkout of the module")
	flag.Parse()
	if err := apicompat.Run(*dir, version.Module, *next, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "apicompat:", err)
		os.Exit(1)
	}
}
