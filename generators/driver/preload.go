package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// One generate loads its packages twice at once, and gengo asks a third time
// first: gengo's parser expands its patterns (a driver request of names and
// files), then loads them with their dependencies, while controller-tools'
// loader loads the version packages for the CRD schemas. Each request is a
// driver process running go list, the go command loading the module graph
// again each time. Preloaded answers all three from one go list: the process
// that generates runs the driver's load once, for every package any of the
// loads names, and writes the answer to a file; a driver process started with
// that file in its environment answers a request from it when the request is
// one the file's load answers exactly as go list would (same folder,
// environment, build tags and files; patterns among its roots), and runs go
// list as before otherwise.

// preloadEnv names the file of a preloaded answer in the driver's environment.
const preloadEnv = "APISERVER_BOOT_PACKAGES_DRIVER_PRELOAD"

// preloadMode is what the loads of generate ask of the driver: gengo's load
// and controller-tools' (which adds NeedCompiledGoFiles and NeedTypesSizes).
const preloadMode = packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedImports |
	packages.NeedDeps | packages.NeedModule | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesSizes

// preloaded is the file: what the load was run with, and its answer.
type preloaded struct {
	Dir      string
	Env      []string
	Tags     []string
	Patterns []string // deduplicated, in their order
	// Imports are the imports (by ID) of every package go list listed, those
	// that only function bodies used included: the graph go list orders
	// its answer by.
	Imports  map[string][]string
	Response *packages.DriverResponse
}

// Preloaded runs the driver's load of patterns in dir with the build tags
// once, and returns the environment for the loads that follow (LoadEnv's,
// naming the answer) and a function that removes the answer when they are
// done. Without the driver, or when the load fails (the loads then run go
// list and report what is wrong), it returns LoadEnv().
func Preloaded(dir string, tags []string, patterns []string) (env []string, done func()) {
	env = LoadEnv()
	done = func() {}
	// A driver started in dir has it as its working directory, as given
	// (go/packages sets PWD): an absolute path, compared as a string.
	if env == nil || !filepath.IsAbs(dir) || len(patterns) == 0 {
		return env, done
	}
	patterns = dedup(patterns)
	req := &packages.DriverRequest{Mode: preloadMode, Env: env, BuildFlags: []string{"-tags=" + strings.Join(tags, ",")}}
	imports := map[string][]string{}
	resp, err := answer(req, dir, patterns, imports)
	if err != nil {
		return env, done
	}
	b, err := json.Marshal(preloaded{Dir: dir, Env: goListEnv(env), Tags: normalTags(tags), Patterns: patterns, Imports: imports, Response: resp})
	if err != nil {
		return env, done
	}
	// Beside the bodyless copies: a file left by a run that was killed is
	// pruned with them (pruneCache).
	cacheDir, err := os.UserCacheDir()
	if err != nil {
		return env, done
	}
	tmp := filepath.Join(cacheDir, "apiserver-boot", "bodyless-go", "preloaded")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return env, done
	}
	f, err := os.CreateTemp(tmp, "load-*.json")
	if err != nil {
		return env, done
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return env, done
	}
	return append(env, preloadEnv+"="+f.Name()), func() { os.Remove(f.Name()) }
}

// answerFromPreload answers req from the preloaded file its environment
// names, or returns nil when there is none or it does not answer req as go
// list would.
func answerFromPreload(req *packages.DriverRequest, patterns []string) *packages.DriverResponse {
	var path string
	for _, e := range req.Env {
		if v, ok := strings.CutPrefix(e, preloadEnv+"="); ok {
			path = v
		}
	}
	if path == "" || req.Tests || len(req.Overlay) > 0 {
		return nil
	}
	tags, ok := tagsOf(req.BuildFlags)
	if !ok {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var pre preloaded
	if err := json.Unmarshal(b, &pre); err != nil || pre.Response == nil {
		return nil
	}
	if wd, err := os.Getwd(); err != nil || wd != pre.Dir || !slices.Equal(tags, pre.Tags) || !slices.Equal(goListEnv(req.Env), pre.Env) {
		return nil
	}
	return pre.answer(req.Mode, patterns)
}

// answer is the part of the preloaded answer that answers a request of mode
// for patterns, or nil when it would differ from go list's.
func (pre *preloaded) answer(mode packages.LoadMode, patterns []string) *packages.DriverResponse {
	// What a request asks of go list (answer's driverLoad.run): a request that
	// parses lists the dependencies, as the preload did, if it asks for
	// imports; one that does not parse is answered from the roots alone, if it
	// asks for neither imports nor dependencies.
	parsed := mode&(packages.NeedSyntax|packages.NeedTypes|packages.NeedTypesInfo|packages.NeedCompiledGoFiles) != 0
	if parsed && mode&(packages.NeedName|packages.NeedImports) != packages.NeedName|packages.NeedImports ||
		!parsed && mode&(packages.NeedImports|packages.NeedDeps) != 0 {
		return nil
	}
	patterns = dedup(patterns)
	if len(patterns) == 0 {
		return nil // go list lists the package in the working directory
	}
	byID := map[string]*packages.Package{}
	for _, p := range pre.Response.Packages {
		byID[p.ID] = p
	}
	byPath := map[string]*packages.Package{}
	for _, id := range pre.Response.Roots {
		if p := byID[id]; p != nil {
			byPath[p.PkgPath] = p
		}
	}
	var roots []*packages.Package
	for _, pattern := range patterns {
		root := byPath[pattern]
		if root == nil {
			return nil // not a package the preload named: go list expands it
		}
		if !parsed && len(root.Errors) > 0 {
			return nil // go list without dependencies may report less
		}
		roots = append(roots, root)
	}
	resp := &packages.DriverResponse{Compiler: pre.Response.Compiler, Arch: pre.Response.Arch, GoVersion: pre.Response.GoVersion}
	if !parsed {
		// go list -find lists the roots in the order of the patterns, with
		// no compiled files (they would be bodyless copies) and no imports.
		for _, root := range roots {
			r := *root
			r.CompiledGoFiles, r.Imports = nil, nil
			resp.Roots, resp.Packages = append(resp.Roots, r.ID), append(resp.Packages, &r)
		}
		return resp
	}
	// go list -deps lists the packages depth first, dependencies before the
	// packages that import them, so a root another root imports comes first:
	// the preload's own order answers the same patterns, and patterns none
	// of which reaches another come in their order; any other order is go
	// list's to give.
	switch {
	case slices.Equal(patterns, pre.Patterns):
		resp.Roots = slices.Clone(pre.Response.Roots)
	case pre.reachEachOther(roots):
		return nil
	default:
		for _, root := range roots {
			resp.Roots = append(resp.Roots, root.ID)
		}
	}
	resp.Packages = pre.closure(roots, byID)
	return resp
}

// closure is the preloaded packages the roots import, directly or not,
// and the roots, in the preload's order.
func (pre *preloaded) closure(roots []*packages.Package, byID map[string]*packages.Package) []*packages.Package {
	keep := map[string]bool{}
	var visit func(p *packages.Package)
	visit = func(p *packages.Package) {
		if keep[p.ID] {
			return
		}
		keep[p.ID] = true
		for _, imp := range p.Imports {
			if dep := byID[imp.ID]; dep != nil {
				visit(dep)
			}
		}
	}
	for _, root := range roots {
		visit(root)
	}
	var out []*packages.Package
	for _, p := range pre.Response.Packages {
		if keep[p.ID] {
			out = append(out, p)
		}
	}
	return out
}

// reachEachOther tells whether one of the roots imports another, directly
// or not, in the graph go list gave (or the graph is not known).
func (pre *preloaded) reachEachOther(roots []*packages.Package) bool {
	if pre.Imports == nil {
		return true
	}
	isRoot := map[string]bool{}
	for _, r := range roots {
		isRoot[r.ID] = true
	}
	for _, r := range roots {
		seen := map[string]bool{r.ID: true}
		queue := []string{r.ID}
		for len(queue) > 0 {
			id := queue[0]
			queue = queue[1:]
			for _, dep := range pre.Imports[id] {
				if isRoot[dep] {
					return true
				}
				if !seen[dep] {
					seen[dep] = true
					queue = append(queue, dep)
				}
			}
		}
	}
	return false
}

func dedup(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// tagsOf returns the build tags of build flags that set only tags (the last
// -tags flag wins, as for the go command), sorted; not ok for any other flag,
// or a value the go command would split otherwise than on commas (one with
// spaces or quotes).
func tagsOf(flags []string) ([]string, bool) {
	var tags []string
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		if !strings.HasPrefix(f, "-") {
			return nil, false
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(f, "-"), "-"), "=")
		if name != "tags" {
			return nil, false
		}
		if !hasValue {
			if i++; i == len(flags) {
				return nil, false
			}
			value = flags[i]
		}
		if strings.ContainsAny(value, " '\"") {
			return nil, false
		}
		tags = strings.Split(value, ",")
		if value == "" {
			tags = nil
		}
	}
	return normalTags(tags), true
}

func normalTags(tags []string) []string {
	out := slices.Clone(tags)
	slices.Sort(out)
	return slices.Compact(out)
}
