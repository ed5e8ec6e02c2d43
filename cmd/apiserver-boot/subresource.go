package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/project"
	"github.com/apiserver-boot/apiserver-boot/internal/scaffold"
)

type subresourceOptions struct {
	name, group, version, kind         string
	specPath, statusPath, selectorPath string
	force                              bool
}

func newCreateSubresourceCommand() *cobra.Command {
	o := &subresourceOptions{}
	paths := project.DefaultScalePaths
	cmd := &cobra.Command{
		Use:   "subresource",
		Short: "Add a subresource to a resource: status, scale, or a custom one",
		Long: `subresource adds /status or /scale to a resource (a marker on its type), or a
custom subresource: a request type and a handler stub for
POST <plural>/<name>/<subresource>, registered by generated code, which returns
the object until you edit it.`,
		Example: `  apiserver-boot create subresource --subresource status --group stable --version v1 --kind CronTab
  apiserver-boot create subresource --subresource scale --group stable --version v1 --kind CronTab --spec-replicas-path .spec.size
  apiserver-boot create subresource --subresource restart --group stable --version v1 --kind CronTab`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "subresource", "", "status, scale, or the name of a custom subresource such as restart (required)")
	f.StringVar(&o.group, "group", "", "API group of the resource (required)")
	f.StringVar(&o.version, "version", "", "API version of the resource (required)")
	f.StringVar(&o.kind, "kind", "", "Kind of the resource (required)")
	f.StringVar(&o.specPath, "spec-replicas-path", paths.SpecReplicasPath, "scale: JSON path of the desired replicas")
	f.StringVar(&o.statusPath, "status-replicas-path", paths.StatusReplicasPath, "scale: JSON path of the observed replicas")
	f.StringVar(&o.selectorPath, "label-selector-path", paths.LabelSelectorPath, "scale: JSON path of the pods' label selector (string), or empty")
	f.BoolVar(&o.force, "force", false, "Overwrite scaffolded files that exist with other content")
	return cmd
}

func (o *subresourceOptions) run(cmd *cobra.Command) error {
	root, p, err := loadProject()
	if err != nil {
		return err
	}
	for flag, v := range map[string]string{"--subresource": o.name, "--group": o.group, "--version": o.version, "--kind": o.kind} {
		if v == "" {
			return fmt.Errorf("%s is required", flag)
		}
	}
	if err := project.ValidateName("--subresource", o.name); err != nil {
		return err
	}
	r := p.Find(o.group, o.version, o.kind)
	if r == nil {
		return fmt.Errorf("no resource --group %s --version %s --kind %s in PROJECT: create it first with `apiserver-boot create group version resource`", o.group, o.version, o.kind)
	}
	typesFile, src, err := findKindFile(filepath.Join(root, project.APIs(o.group, o.version)), o.kind)
	if err != nil {
		return err
	}
	data, err := newTemplateData(root, p)
	if err != nil {
		return err
	}
	data.Group, data.Version, data.Kind, data.Plural, data.Subresource = o.group, o.version, o.kind, r.Plural, o.name
	var marker string
	var files []scaffold.File
	switch o.name {
	case "status":
		marker = "+subresource:status"
	case "scale":
		if err := validateScalePaths(o.specPath, o.statusPath, o.selectorPath); err != nil {
			return err
		}
		marker = fmt.Sprintf("+subresource:scale:specpath=%s,statuspath=%s", o.specPath, o.statusPath)
		if o.selectorPath != "" {
			marker += ",selectorpath=" + o.selectorPath
		}
		r.Scale = &project.ScalePaths{SpecReplicasPath: o.specPath, StatusReplicasPath: o.statusPath, LabelSelectorPath: o.selectorPath}
	default:
		data.Request, data.Handler = o.kind+upperFirst(o.name), upperFirst(o.name)
		marker = fmt.Sprintf("+subresource:rest:path=%s,request=%s", o.name, data.Request)
		base := strings.ToLower(o.kind) + "_" + o.name
		files = append(files,
			scaffold.File{Path: project.APIs(o.group, o.version, base+"_types.go"), Template: "resource/subresource_request_types.go.tmpl"},
			scaffold.File{Path: project.APIs(o.group, o.version, base+"_rest.go"), Template: "resource/subresource_rest.go.tmpl"})
	}
	edited, changed, err := insertTypeMarker(typesFile, src, o.kind, marker)
	if err != nil {
		return err
	}
	if changed {
		rel, _ := filepath.Rel(root, typesFile)
		files = append(files, scaffold.File{Path: rel, Content: edited, IfExists: scaffold.Replace})
	}
	if !r.HasSubresource(o.name) {
		r.Subresources = append(r.Subresources, o.name)
	}
	record, err := p.Marshal()
	if err != nil {
		return err
	}
	files = append(files, scaffold.File{Path: project.FileName, Content: record, IfExists: scaffold.Replace})
	plan := &scaffold.Plan{Root: root, Data: data, Force: o.force, Files: files}
	return applyAndGenerate(cmd, root, plan, fmt.Sprintf("%s already has the %s subresource.", o.kind, o.name))
}

func upperFirst(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

func validateScalePaths(paths ...string) error {
	for i, p := range paths {
		if p == "" && i == 2 {
			continue
		}
		if !strings.HasPrefix(p, ".") || strings.Contains(p, "..") || strings.ContainsAny(p, "[]*@? ") {
			flag := []string{"--spec-replicas-path", "--status-replicas-path", "--label-selector-path"}[i]
			return fmt.Errorf("%s %q is not a JSON path of fields such as .spec.replicas", flag, p)
		}
	}
	return nil
}

// findKindFile returns the file of dir declaring type kind with a +resource marker.
func findKindFile(dir, kind string) (string, []byte, error) {
	k, err := generators.FindKind(dir, kind)
	if err != nil {
		return "", nil, err
	}
	if _, ok := k.Markers["resource"]; !ok {
		return "", nil, fmt.Errorf("%s: type %s has no +resource marker", k.Path, kind)
	}
	return k.Path, k.Src, nil
}

// insertTypeMarker adds a marker line after the +resource marker of kind;
// changed is false when an equivalent marker is already there.
func insertTypeMarker(path string, src []byte, kind, marker string) ([]byte, bool, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, false, err
	}
	var doc *ast.CommentGroup
	ast.Inspect(f, func(n ast.Node) bool {
		if gd, ok := n.(*ast.GenDecl); ok {
			for _, s := range gd.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == kind {
					doc = ts.Doc
					if doc == nil {
						doc = gd.Doc
					}
				}
			}
		}
		return true
	})
	if doc == nil {
		return nil, false, fmt.Errorf("%s: type %s has no doc comment with a +resource marker", path, kind)
	}
	name := markerPrefix(marker)
	var after *ast.Comment
	for _, c := range doc.List {
		text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
		if markerPrefix(text) == name {
			return src, false, nil
		}
		if strings.HasPrefix(text, "+resource:") {
			after = c
		}
	}
	if after == nil {
		return nil, false, errors.New(path + ": type " + kind + " has no +resource marker")
	}
	at := fset.Position(after.End()).Offset
	out := string(src[:at]) + "\n// " + marker + string(src[at:])
	return []byte(out), true, nil
}

// markerPrefix identifies a marker for the already-present check: the name,
// plus the path for custom subresources.
func markerPrefix(m string) string {
	switch {
	case strings.HasPrefix(m, "+subresource:rest:"):
		return strings.SplitN(m, ",", 2)[0] // +subresource:rest:path=<name>
	case strings.HasPrefix(m, "+subresource:scale"):
		return "+subresource:scale"
	}
	return strings.SplitN(m, "=", 2)[0]
}
