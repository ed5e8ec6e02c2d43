package generators

import (
	"reflect"
	"testing"

	"k8s.io/gengo/v2/types"
)

// TestSettlePatchTags: a member's +patchMergeKey and +patchStrategy comment
// tags become its struct tags', once, whatever was written (repeated,
// disagreeing, missing), so that openapi-gen never stops on them.
func TestSettlePatchTags(t *testing.T) {
	u := types.Universe{}
	pkg := u.Package("example.com/x/pkg/apis/x/v1")
	typ := &types.Type{Name: types.Name{Package: pkg.Path, Name: "Spec"}, Kind: types.Struct, Members: []types.Member{
		{Name: "Repeated", CommentLines: []string{"Repeated.", "+patchMergeKey=type", "+patchStrategy=merge", "+patchMergeKey=type", "+listType=map"}, Tags: `json:"repeated" patchStrategy:"merge" patchMergeKey:"type"`},
		{Name: "Disagrees", CommentLines: []string{"+patchMergeKey=name", "+patchStrategy=merge"}, Tags: `json:"disagrees" patchStrategy:"merge" patchMergeKey:"port"`},
		{Name: "CommentOnly", CommentLines: []string{"+patchStrategy=merge", "+optional"}, Tags: `json:"commentOnly"`},
		{Name: "TagOnly", CommentLines: []string{"TagOnly."}, Tags: `json:"tagOnly" patchStrategy:"retainKeys"`},
		{Name: "Plain", CommentLines: []string{"+optional"}, Tags: `json:"plain"`},
	}}
	pkg.Types["Spec"] = typ
	settlePatchTags(u, []string{pkg.Path})
	want := [][]string{
		{"Repeated.", "+patchStrategy=merge", "+listType=map", "+patchMergeKey=type"},
		{"+patchStrategy=merge", "+patchMergeKey=port"},
		{"+optional"},
		{"TagOnly.", "+patchStrategy=retainKeys"},
		{"+optional"},
	}
	for i, m := range typ.Members {
		if !reflect.DeepEqual(m.CommentLines, want[i]) {
			t.Errorf("%s: comment lines %q, want %q", m.Name, m.CommentLines, want[i])
		}
	}
}
