package main

import (
	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// loadProject finds the project around the working directory and reads its
// PROJECT file and its API from source, once for the command: the kinds of
// PROJECT get their names, scope and subresources from their markers
// (model.API.Describe), the types being the only record of them.
func loadProject() (string, *project.Project, *model.API, error) {
	root, err := project.FindRoot()
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
