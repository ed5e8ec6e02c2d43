package files

import (
	"os"
	"path/filepath"
	"strings"
)

// RelToWd shows path relative to the working directory when it is below
// it, else as it is.
func RelToWd(path string) string {
	wd, _ := os.Getwd()
	if rel, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}
