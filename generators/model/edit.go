package model

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"

	"sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// FindResource is FindKind for a served kind: its type must carry a
// +resource marker.
func FindResource(dir, kind string) (*KindFile, error) {
	k, err := FindKind(dir, kind)
	if err != nil {
		return nil, err
	}
	if _, ok := resourceOf(kind, k.Markers); !ok {
		return nil, fmt.Errorf("%s: type %s has no +resource marker", k.Path, kind)
	}
	return k, nil
}

// AddTypeMarker adds marker (such as "+subresource:status") on its own line
// after the +resource marker of kind's type in src. Markers are told apart
// as generate tells them, through the registry: changed is false when the
// type already carries the same marker in any spelling (//+storageversion),
// and for a custom subresource, one with the same path.
func AddTypeMarker(path string, src []byte, kind, marker string) (out []byte, changed bool, err error) {
	def := Registry.Lookup(marker, markers.DescribesType)
	if def == nil {
		return nil, false, fmt.Errorf("%s is not a type marker", marker)
	}
	want, err := def.Parse(marker)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", marker, err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, false, err
	}
	var groups []*ast.CommentGroup
	found := false
	_ = eachTypeSpec(fset, f, func(ts *ast.TypeSpec, g []*ast.CommentGroup) error {
		if ts.Name.Name == kind {
			found, groups = true, g
		}
		return nil
	})
	if !found {
		return nil, false, fmt.Errorf("%s: no type %s", path, kind)
	}
	vals, err := markerValues(fset, markers.DescribesType, groups...)
	if err != nil {
		return nil, false, err
	}
	var after *ast.Comment
	for name, vs := range vals {
		for _, mv := range vs {
			if canonicalName(name) == canonicalName(def.Name) && sameMarker(mv.Value, want) {
				return src, false, nil
			}
			if _, ok := resourceOf(kind, MarkerValues{canonicalName(name): {mv}}); ok && (after == nil || mv.comment.Pos() > after.Pos()) {
				after = mv.comment
			}
		}
	}
	if after == nil {
		return nil, false, fmt.Errorf("%s: type %s has no +resource marker", path, kind)
	}
	at := fset.Position(after.End()).Offset
	return []byte(string(src[:at]) + "\n// " + marker + string(src[at:])), true, nil
}

// sameMarker tells whether two parsed markers of one name mark the same
// thing: custom subresources are one per path, every other type marker one
// per type.
func sameMarker(a, b any) bool {
	if ra, ok := a.(RESTSubresource); ok {
		rb, ok := b.(RESTSubresource)
		return ok && ra.Path == rb.Path
	}
	return true
}

// MarkStorageVersion applies the rule that a kind served in several
// versions has exactly one +storageversion: unless one of versions already
// carries it, it marks kind in version. It returns the edited file, or
// nothing when there is nothing to do.
func MarkStorageVersion(root, group, kind, version string, versions []string) (path string, src []byte, err error) {
	for _, v := range versions {
		k, err := FindKind(filepath.Join(root, project.APIs(group, v)), kind)
		if err != nil {
			continue // a version not written yet carries no marker
		}
		if k.Markers.Has("storageversion") {
			return "", nil, nil
		}
	}
	k, err := FindResource(filepath.Join(root, project.APIs(group, version)), kind)
	if err != nil {
		return "", nil, err
	}
	marked, changed, err := AddTypeMarker(k.Path, k.Src, kind, "+storageversion")
	if err != nil || !changed {
		return "", nil, err
	}
	return k.Path, marked, nil
}
