package apiserverboot

import (
	"bytes"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/apicompat"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

var update = flag.Bool("update", false, "rewrite pkg/api.txt from pkg/'s exported API")

// apiGolden is the golden file of pkg/'s exported API: the contract
// generated projects and users' hooks compile against (docs/releasing.md).
const apiGolden = "pkg/api.txt"

// TestPkgAPI: pkg/'s exported API is the one pkg/api.txt lists. A change
// fails with the lines added (+) and removed (-); after an intended one,
// go test -run TestPkgAPI . -update rewrites the file, reviewed like any
// change of contract (and listed in the release notes).
func TestPkgAPI(t *testing.T) {
	pkgs, err := apicompat.Load(".")
	if err != nil {
		t.Fatal(err)
	}
	got := apicompat.Golden(version.Module, pkgs)
	if *update {
		if err := os.WriteFile(apiGolden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(apiGolden)
	if err != nil {
		t.Fatalf("%v: write it with go test -run TestPkgAPI . -update", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("pkg/'s exported API differs from %s (+ in pkg/ only, - in %s only); if intended: go test -run TestPkgAPI . -update, and list the change in the release notes:\n%s",
			apiGolden, apiGolden, lineDiff(string(want), string(got)))
	}
}

// lineDiff is "- line" for each line of want missing from got and
// "+ line" for each line of got missing from want, in got's and want's
// order (the golden file's lines are sorted and unique).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
