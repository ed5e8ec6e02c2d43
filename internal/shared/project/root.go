package project

import (
	"fmt"
	"os"
	"path/filepath"
)

// FindRoot walks up from the working directory to the project's root,
// the folder holding PROJECT.
func FindRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, FileName)); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no %s file in %s or above: run `apiserver-boot init repo --domain <domain>` in the project folder first", FileName, wd)
		}
	}
}
