package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// findRoot walks up from the working directory to the folder holding PROJECT.
func findRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, project.FileName)); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no %s file in %s or above: run `apiserver-boot init repo --domain <domain>` in the project folder first", project.FileName, wd)
		}
	}
}

// loadProject finds the project around the working directory and reads its
// PROJECT file and its API from source, once for the command: the kinds of
// PROJECT get their names, scope and subresources from their markers
// (model.API.Describe), the types being the only record of them.
func loadProject() (string, *project.Project, *model.API, error) {
	root, err := findRoot()
	if err != nil {
		return "", nil, nil, err
	}
	p, err := project.Load(root)
	if err != nil {
		return "", nil, nil, err
	}
	api, err := loadModel(root, p)
	if err != nil {
		return "", nil, nil, err
	}
	api.Describe(p)
	return root, p, api, nil
}

// loadModel reads the project's API from source, as every command but
// generate needs it: once per command (TestModelLoadedOnce counts).
var loadModel = func(root string, p *project.Project) (*model.API, error) {
	return model.LoadAPI(root, p, version.Module, "")
}
