package generators

import (
	"bytes"
	"strconv"
	"strings"

	"k8s.io/gengo/v2/codetags"
	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/types"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	validationgen "github.com/apiserver-boot/apiserver-boot/third_party/validation-gen"
)

// validations is k8s.io/code-generator's validation-gen: the declarative
// validation of the +k8s: tags (+k8s:required, +k8s:minimum, +k8s:format,
// +k8s:immutable, ...), zz_generated.validations.go in every version
// package with such tags, registered with the package's scheme builder; the
// kinds' strategies run it as kube-apiserver runs it for built-in kinds.
type validations struct{}

// The tags validation-gen reads from the package and the kinds, given in
// memory where the project has not written them: every kind (a type with
// TypeMeta) is validated, in its main resource and the subresources that
// update it through its strategy.
const (
	validationGenTag   = "k8s:validation-gen"
	supportsSubresTag  = "k8s:supportsSubresource"
	validateKindsValue = "TypesWithField=TypeMeta"
)

func (validations) Name() string                 { return "validations" }
func (validations) Packages(api *State) []string { return nil }
func (validations) Generate(api *State, base *generator.Context) ([]files.File, error) {
	// Only the packages that ask for declarative validation: validation-gen
	// refuses shapes Kubernetes' API conventions do not allow (a map of
	// pointers), which types written for CRDs may have.
	var inputs []string
	for _, p := range api.versionPackages() {
		if pkg := base.Universe.Package(p); hasTag(pkg.Comments, validationGenTag) || hasValidationTags(pkg) {
			inputs = append(inputs, p)
		}
	}
	if len(inputs) == 0 {
		return nil, nil
	}
	c, out := contextFor(base, validationgen.NameSystems(), validationgen.DefaultNameSystem(), inputs)
	// validation-gen reads the tags of the packages the version packages'
	// types use and calls the validation functions they declare, and
	// refuses a type whose package it was not given.
	readonly := referencedPackages(c.Universe, c.Inputs)
	defer tagKinds(api, c.Universe)()
	defer untag(c.Universe, readonly)()
	args := &validationgen.Args{OutputFile: "zz_generated.validations.go", GoHeaderFile: api.headerFile(), ReadOnlyPkgs: readonly}
	list, err := execute("validations", c, out, validationgen.GetTargets(c, args))
	if err != nil {
		return nil, err
	}
	// A package without +k8s: validation tags gets a file with nothing in
	// it: none is written (and an earlier one is removed).
	var kept []files.File
	for _, f := range list {
		if bytes.Contains(f.Content, []byte("\nfunc ")) {
			kept = append(kept, f)
		}
	}
	return kept, nil
}

// tagKinds adds validation-gen's package and kind tags to the universe,
// and returns what puts the comments back as they were.
func tagKinds(api *State, u types.Universe) (restore func()) {
	var undo []func()
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			pkg := u.Package(v.Package)
			if !hasTag(pkg.Comments, validationGenTag) {
				old := pkg.Comments
				pkg.Comments = append(append([]string(nil), old...), "+"+validationGenTag+"="+validateKindsValue)
				undo = append(undo, func() { pkg.Comments = old })
			}
			for _, k := range v.Kinds {
				t := pkg.Types[k.Kind]
				if t == nil {
					continue
				}
				var subresources []string
				if k.StatusSubresource {
					subresources = append(subresources, "/status")
				}
				if k.Scale != nil {
					subresources = append(subresources, "/scale")
				}
				comments := append(append([]string(nil), t.SecondClosestCommentLines...), t.CommentLines...)
				old := t.CommentLines
				added := append([]string(nil), old...)
				for _, s := range subresources {
					if !hasTagValue(comments, supportsSubresTag, s) {
						added = append(added, "+"+supportsSubresTag+"="+strconv.Quote(s))
					}
				}
				if len(added) > len(old) {
					t.CommentLines = added
					undo = append(undo, func() { t.CommentLines = old })
				}
			}
		}
	}
	return func() {
		for _, f := range undo {
			f()
		}
	}
}

// untag hides, in memory, the +k8s: tags of the packages the version
// packages use: their types are validated by the kinds' schemas, not
// declaratively. validation-gen would call the validation functions of
// their tagged types, and neither k8s.io/apimachinery (metav1.Condition)
// nor k8s.io/api declares any (Kubernetes generates them into its own
// tree). It returns what puts the comments back.
func untag(u types.Universe, pkgs []string) (restore func()) {
	var undo []func()
	strip := func(lines *[]string) {
		old := *lines
		var kept []string
		for _, l := range old {
			if !strings.HasPrefix(strings.TrimSpace(l), "+k8s:") {
				kept = append(kept, l)
			}
		}
		if len(kept) < len(old) {
			*lines = kept
			undo = append(undo, func() { *lines = old })
		}
	}
	for _, p := range pkgs {
		for _, t := range u.Package(p).Types {
			strip(&t.CommentLines)
			strip(&t.SecondClosestCommentLines)
			for i := range t.Members {
				strip(&t.Members[i].CommentLines)
			}
		}
	}
	return func() {
		for _, f := range undo {
			f()
		}
	}
}

// hasValidationTags tells whether a type of pkg, or a field, carries a tag
// validation-gen reads.
func hasValidationTags(pkg *types.Package) bool {
	tagged := func(lines []string) bool {
		for name := range codetags.Extract("+", lines) {
			if validationgen.IsValidationTag(name) {
				return true
			}
		}
		return false
	}
	for _, t := range pkg.Types {
		if tagged(t.CommentLines) || tagged(t.SecondClosestCommentLines) {
			return true
		}
		for _, m := range t.Members {
			if tagged(m.CommentLines) {
				return true
			}
		}
	}
	return false
}

func hasTag(comments []string, name string) bool {
	_, ok := codetags.Extract("+", comments)[name]
	return ok
}

func hasTagValue(comments []string, name, value string) bool {
	for _, line := range codetags.Extract("+", comments)[name] {
		if tag, err := codetags.Parse(line); err == nil && strings.Trim(tag.Value, `"`) == value {
			return true
		}
	}
	return false
}
