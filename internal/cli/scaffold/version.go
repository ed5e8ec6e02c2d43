package scaffold

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/templates"
)

// Version is the plan of `create version`: version, a new version of the
// kind from (which PROJECT lists) in its group, starting from copies of
// from's files of the kind, with the kind's custom subresources, and
// +storageversion on from unless a version of the kind has it. api is the
// project's API as read from source.
func Version(root string, p *project.Project, api *model.API, from *project.Resource, version string) (*Plan, error) {
	data, err := NewData(root, p)
	if err != nil {
		return nil, err
	}
	data.KindDescriptor = from.KindDescriptor
	data.groupVersion(p, from.Group, version)
	fromDir := filepath.Join(root, project.APIs(from.Group, from.Version))
	k, err := model.FindResource(fromDir, from.Kind)
	if err != nil {
		return nil, err
	}
	files, err := copiedFiles(from, version, fromDir, k.Path, k.Src)
	if err != nil {
		return nil, err
	}
	newDir := project.APIs(from.Group, version)
	// The kind's custom subresources are served in every version: the copy
	// carries their markers and request types, and gets those it lacks (the
	// request type declared in another file, a marker only on the storage
	// version).
	if files, err = carryToNewVersion(api, *data, version, filepath.Join(newDir, filepath.Base(k.Path)), files); err != nil {
		return nil, err
	}
	marker, err := markStorageVersion(root, p, from.Group, from.Version, from.Kind)
	if err != nil {
		return nil, err
	}
	files = append(files, marker...)
	r := *from
	r.Version, r.Controller = version, false // one controller per kind, on the version it was made for
	p.Resources = append(p.Resources, &r)
	rec, err := record(p)
	if err != nil {
		return nil, err
	}
	files = append(files, File{Path: filepath.Join(newDir, "doc.go"), Template: "resource/version_doc.go.tmpl"}, rec)
	return &Plan{Root: root, Data: data, Files: files}, nil
}

// copiedFiles are the new version's copies of the file declaring the kind
// of from (typesFile, whatever its name: widget.go, src its content) and of
// the kind's *_types.go files (its own and its subresource requests'): the
// same declarations in package <version>.
func copiedFiles(from *project.Resource, version, fromDir, typesFile string, src []byte) ([]File, error) {
	entries, err := os.ReadDir(fromDir)
	if err != nil {
		return nil, err
	}
	newDir := project.APIs(from.Group, version)
	var files []File
	for _, e := range entries {
		name := e.Name()
		if filepath.Join(fromDir, name) != typesFile && (!strings.HasPrefix(name, strings.ToLower(from.Kind)+"_") || !strings.HasSuffix(name, "_types.go")) {
			continue
		}
		b := src
		if filepath.Join(fromDir, name) != typesFile {
			if b, err = os.ReadFile(filepath.Join(fromDir, name)); err != nil {
				return nil, err
			}
		}
		files = append(files, File{Path: filepath.Join(newDir, name), Content: model.RenamePackage(b, from.Version, version)})
	}
	return files, nil
}

// markStorageVersion applies model.MarkStorageVersion to the versions
// PROJECT lists for the kind.
func markStorageVersion(root string, p *project.Project, group, version, kind string) ([]File, error) {
	var versions []string
	for _, r := range p.Resources {
		if r.Group == group && r.Kind == kind {
			versions = append(versions, r.Version)
		}
	}
	path, marked, err := model.MarkStorageVersion(root, group, kind, version, versions)
	if err != nil || marked == nil {
		return nil, err
	}
	rel, _ := filepath.Rel(root, path)
	return []File{{Path: rel, Content: marked, IfExists: Replace}}, nil
}

// carryToNewVersion gives a new version of a kind (data names the group and
// kind; kindFile is the new version's file of the kind's type among files,
// what is written for it) the kind's custom subresources, as its storage
// version marks them: the +subresource:rest markers on the type, and the
// request types files does not declare.
func carryToNewVersion(api *model.API, data Data, version, kindFile string, files []File) ([]File, error) {
	g := api.Group(data.Group)
	if g == nil || g.Kind(data.Kind) == nil || len(g.Kind(data.Kind).Subresources) == 0 {
		return files, nil
	}
	declared, at, err := declaredTypes(data, kindFile, files)
	if err != nil {
		return nil, err
	}
	k := g.Kind(data.Kind)
	edited, requests, err := carrySubresources(data, g, k, version, kindFile, files[at].Content, func(t string) bool { return declared[t] }, k.Subresources)
	if err != nil {
		return nil, err
	}
	files[at].Content = edited
	for _, r := range requests {
		for _, f := range files {
			if f.Path == r.Path {
				var want []string
				for _, sub := range k.Subresources {
					want = append(want, sub.Request)
				}
				return nil, fmt.Errorf("%s is copied, but the new version would lack a request type of %s's custom subresources (%s), which it names: declare them in %s or in another file of the version", f.Path, data.Kind, strings.Join(want, ", "), f.Path)
			}
		}
	}
	return append(files, requests...), nil
}

// declaredTypes renders the Go files among files in kindFile's folder
// (setting their Content) and returns the types they declare, and the index
// of kindFile.
func declaredTypes(data Data, kindFile string, files []File) (map[string]bool, int, error) {
	declared := map[string]bool{}
	at := -1
	for i, f := range files {
		if !strings.HasSuffix(f.Path, ".go") || filepath.Dir(f.Path) != filepath.Dir(kindFile) {
			continue
		}
		if f.Path == kindFile {
			at = i
		}
		src := f.Content
		if src == nil {
			var err error
			if src, err = templates.Render(f.Template, &data); err != nil {
				return nil, 0, err
			}
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f.Path, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", f.Path, err)
		}
		for _, d := range parsed.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, spec := range gd.Specs {
					declared[spec.(*ast.TypeSpec).Name.Name] = true
				}
			}
		}
		files[i].Content = src
	}
	if at < 0 {
		return nil, 0, fmt.Errorf("%s: not among the files written for the new version", kindFile)
	}
	return declared, at, nil
}
