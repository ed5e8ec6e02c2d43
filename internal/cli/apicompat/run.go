package apicompat

import (
	"fmt"
	"io"
	"os"
)

// Run compares pkg/'s exported API in the checkout at dir (the Go module
// modulePath, as its files are) with the last release's (LastRelease,
// extracted with git archive into a temporary folder) and writes what
// changed to w. With next, the version being released, it returns Check's
// refusal; with next "" (CI) it only says which release may come next.
// Without a last release it says so and returns nil.
func Run(dir, modulePath, next string, w io.Writer) error {
	last, err := LastRelease(dir, next)
	if err != nil {
		return err
	}
	if last == "" {
		below := ""
		if next != "" {
			below = " below " + next
		}
		fmt.Fprintf(w, "apicompat: no release tag vX.Y.Z%s reachable from HEAD (git tag): no earlier release to compare pkg/'s API with\n", below)
		return nil
	}
	tmp, err := os.MkdirTemp("", "apicompat-"+last+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := Extract(dir, last, tmp); err != nil {
		return err
	}
	old, err := Load(tmp)
	if err != nil {
		return fmt.Errorf("pkg/ of %s: %w", last, err)
	}
	cur, err := Load(dir)
	if err != nil {
		return err
	}
	r := Compare(modulePath, old, cur)
	if next != "" {
		if err := Check(last, next, r); err != nil {
			return err // it lists the incompatible changes
		}
	}
	if len(r.Changes) == 0 {
		fmt.Fprintf(w, "apicompat: pkg/'s exported API is unchanged since %s\n", last)
	} else {
		fmt.Fprintf(w, "apicompat: pkg/'s exported API since %s:\n%s", last, r)
	}
	if next != "" {
		fmt.Fprintf(w, "apicompat: %s may follow %s\n", next, last)
		return nil
	}
	required, err := Required(last, r)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "apicompat: the next release may be %s or later (docs/releasing.md)\n", required)
	return nil
}
