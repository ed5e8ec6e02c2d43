package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/project"
	"github.com/apiserver-boot/apiserver-boot/internal/scaffold"
	"github.com/apiserver-boot/apiserver-boot/templates"
)

type versionOptions struct {
	group, version, kind, from string
	force                      bool
}

func newCreateVersionCommand() *cobra.Command {
	o := &versionOptions{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Add a version of an existing kind, starting from a copy of another version's types",
		Long: `version copies <kind>_types.go of --from into the new version, which joins the same
storage: one etcd object, readable and writable through every version, converted
through the generated internal type. The version objects are stored in is marked
+storageversion (--from, unless a version already carries the marker); edit the
new types, and write conversions for fields that differ.`,
		Example: "  apiserver-boot create version --group stable --version v2 --kind CronTab --from v1",
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.group, "group", "", "API group of the kind (required)")
	f.StringVar(&o.version, "version", "", "The new version, e.g. v2 (required)")
	f.StringVar(&o.kind, "kind", "", "The kind (required)")
	f.StringVar(&o.from, "from", "", "The existing version to copy the types from (required)")
	f.BoolVar(&o.force, "force", false, "Overwrite files that exist with other content")
	return cmd
}

func (o *versionOptions) run(cmd *cobra.Command) error {
	root, p, api, err := loadProject()
	if err != nil {
		return err
	}
	for flag, v := range map[string]string{"--group": o.group, "--version": o.version, "--kind": o.kind, "--from": o.from} {
		if v == "" {
			return fmt.Errorf("%s is required", flag)
		}
	}
	if o.group, err = p.ResolveGroup(o.group); err != nil {
		return err
	}
	if err := project.ValidateVersion(o.version); err != nil {
		return err
	}
	from, err := o.fromResource(p)
	if err != nil {
		return err
	}
	if p.Find(o.group, o.version, o.kind) != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "Nothing to do: %s/%s already serves %s.\n", o.group, o.version, o.kind)
		return nil
	}
	data, err := newTemplateData(root, p)
	if err != nil {
		return err
	}
	data.Group, data.FullGroup, data.Version = o.group, p.FullGroup(o.group), o.version
	data.GroupGoName = project.GroupGoNameMarker(data.FullGroup)
	data.ModelPackage = project.OpenAPIModelPackage(p.Module, o.group, o.version)

	fromDir := filepath.Join(root, project.APIs(o.group, o.from))
	k, err := model.FindResource(fromDir, o.kind)
	if err != nil {
		return err
	}
	files, err := o.copiedFiles(fromDir, k.Path, k.Src)
	if err != nil {
		return err
	}
	newDir := project.APIs(o.group, o.version)
	typesFile := k.Path
	// The kind's custom subresources are served in every version: the copy
	// carries their markers and request types, and gets those it lacks (the
	// request type declared in another file, a marker only on the storage
	// version).
	data.Kind, data.Plural = o.kind, from.Plural
	if files, err = carryToNewVersion(api, *data, o.version, filepath.Join(newDir, filepath.Base(typesFile)), files); err != nil {
		return err
	}
	marker, err := markStorageVersion(root, p, o.group, o.from, o.kind)
	if err != nil {
		return err
	}
	files = append(files, marker...)
	r := *from
	r.Version, r.Controller = o.version, false // one controller per kind, on the version it was made for
	p.Resources = append(p.Resources, &r)
	record, err := p.Marshal()
	if err != nil {
		return err
	}
	files = append(files,
		scaffold.File{Path: filepath.Join(newDir, "doc.go"), Template: "resource/version_doc.go.tmpl"},
		scaffold.File{Path: project.FileName, Content: record, IfExists: scaffold.Replace})
	plan := &scaffold.Plan{Root: root, Data: data, Force: o.force, Files: files}
	return applyAndGenerate(cmd, root, plan, "")
}

// fromResource is the kind --from names, or an error saying which versions
// serve it.
func (o *versionOptions) fromResource(p *project.Project) (*project.Resource, error) {
	if from := p.Find(o.group, o.from, o.kind); from != nil {
		return from, nil
	}
	var served []string
	for _, r := range p.Resources {
		if r.Group == o.group && r.Kind == o.kind && !r.External {
			served = append(served, r.Version)
		}
	}
	if len(served) > 0 {
		return nil, fmt.Errorf("--from %s: no kind %s in %s/%s in PROJECT; %s is served in %s: give one of them with --from", o.from, o.kind, o.group, o.from, o.kind, strings.Join(served, ", "))
	}
	return nil, fmt.Errorf("--from %s: no kind %s in %s/%s in PROJECT%s", o.from, o.kind, o.group, o.from, p.Suggest(o.group, "", o.kind))
}

// copiedFiles are the new version's copies of the file declaring the kind
// (typesFile, whatever its name: widget.go) and of the kind's *_types.go
// files (its own and its subresource requests'): the same declarations in
// package <version>.
func (o *versionOptions) copiedFiles(fromDir, typesFile string, src []byte) ([]scaffold.File, error) {
	entries, err := os.ReadDir(fromDir)
	if err != nil {
		return nil, err
	}
	newDir := project.APIs(o.group, o.version)
	var files []scaffold.File
	for _, e := range entries {
		name := e.Name()
		if filepath.Join(fromDir, name) != typesFile && (!strings.HasPrefix(name, strings.ToLower(o.kind)+"_") || !strings.HasSuffix(name, "_types.go")) {
			continue
		}
		b := src
		if filepath.Join(fromDir, name) != typesFile {
			if b, err = os.ReadFile(filepath.Join(fromDir, name)); err != nil {
				return nil, err
			}
		}
		files = append(files, scaffold.File{Path: filepath.Join(newDir, name), Content: model.RenamePackage(b, o.from, o.version)})
	}
	return files, nil
}

// markStorageVersion applies model.MarkStorageVersion to the versions
// PROJECT lists for the kind.
func markStorageVersion(root string, p *project.Project, group, version, kind string) ([]scaffold.File, error) {
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
	return []scaffold.File{{Path: rel, Content: marked, IfExists: scaffold.Replace}}, nil
}

// carryToNewVersion gives a new version of a kind (data names the group and
// kind; kindFile is the new version's file of the kind's type among files,
// what is written for it) the kind's custom subresources, as its storage
// version marks them: the +subresource:rest markers on the type, and the
// request types files does not declare.
func carryToNewVersion(api *model.API, data templateData, version, kindFile string, files []scaffold.File) ([]scaffold.File, error) {
	g := api.Group(data.Group)
	if g == nil || g.Kind(data.Kind) == nil || len(g.Kind(data.Kind).Subresources) == 0 {
		return files, nil
	}
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
				return nil, err
			}
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f.Path, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
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
		return nil, fmt.Errorf("%s: not among the files written for the new version", kindFile)
	}
	edited, requests, err := carrySubresources(data, g, g.Kind(data.Kind), version, kindFile, files[at].Content, func(t string) bool { return declared[t] }, g.Kind(data.Kind).Subresources)
	if err != nil {
		return nil, err
	}
	files[at].Content = edited
	for _, r := range requests {
		for _, f := range files {
			if f.Path == r.Path {
				var want []string
				for _, sub := range g.Kind(data.Kind).Subresources {
					want = append(want, sub.Request)
				}
				return nil, fmt.Errorf("%s is copied, but the new version would lack a request type of %s's custom subresources (%s), which it names: declare them in %s or in another file of the version", f.Path, data.Kind, strings.Join(want, ", "), f.Path)
			}
		}
	}
	return append(files, requests...), nil
}
