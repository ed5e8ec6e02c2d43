package generators

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
)

// ControllerRuntime is the controller-runtime release tested with the
// framework's k8s.io modules: kubebuilder's groupversion_info.go imports its
// pkg/scheme (scheme.Builder).
const (
	ControllerRuntime        = "sigs.k8s.io/controller-runtime"
	ControllerRuntimeVersion = "v0.25.2"
)

// pinnedModules are modules API types commonly import that the framework
// does not require, at the release that works with its k8s.io modules.
var pinnedModules = map[string]string{ControllerRuntime: ControllerRuntimeVersion}

// checkPinnedModules refuses, before anything is loaded, API packages
// importing a module of pinnedModules that go.mod does not require: the
// package load would fail with "no required module provides package", and
// the `go get` it suggests takes the newest release, built for newer k8s.io
// modules than the framework's. go.mod is the user's: generate names the
// command instead of editing it.
func checkPinnedModules(api *model.API) error {
	b, err := os.ReadFile(filepath.Join(api.Root, "go.mod"))
	if err != nil {
		return nil // the package load says what is wrong
	}
	f, err := modfile.ParseLax("go.mod", b, nil)
	if err != nil {
		return nil
	}
	required := map[string]bool{}
	for _, r := range f.Require {
		required[r.Mod.Path] = true
	}
	var errs []string
	seen := map[string]bool{}
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			imports := v.Imports()
			paths := make([]string, 0, len(imports))
			for p := range imports {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			for _, p := range paths {
				for mod, version := range pinnedModules {
					if (p != mod && !strings.HasPrefix(p, mod+"/")) || required[mod] || seen[mod] {
						continue
					}
					seen[mod] = true
					errs = append(errs, fmt.Sprintf("%s: imports %s, and go.mod does not require %s: run `go get %s@%s` (the release that works with this apiserver-boot's k8s.io modules; a newer one needs newer k8s.io), then generate again",
						relTo(api.Root, imports[p].Filename)+fmt.Sprintf(":%d", imports[p].Line), p, mod, mod, version))
				}
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}
