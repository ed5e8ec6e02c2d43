package project

import (
	"fmt"
	"go/token"
	gotypes "go/types"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/gengo/v2/namer"
	"k8s.io/gengo/v2/types"
)

var (
	groupRE   = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	versionRE = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)
	kindRE    = regexp.MustCompile(`^[A-Z][a-zA-Z0-9]*$`)
)

// ValidateDomain checks --domain: a DNS name, with or without a dot (sh,
// example.com). Kubernetes asks the dot of an API group, not of the domain:
// the groups <group>.<domain> have it whatever the domain (a group that is
// the domain itself is checked as a group, by ValidateAPIGroup).
func ValidateDomain(domain string) error {
	if errs := validation.IsDNS1123Subdomain(domain); len(errs) > 0 {
		return fmt.Errorf("--domain %q is not valid: want a lowercase DNS name, such as example.com or sh (group stable is then served as stable.example.com or stable.sh): %s", domain, strings.Join(errs, "; "))
	}
	return nil
}

// ValidateAPIGroup checks an API group name given in full as kube-apiserver
// checks a CustomResourceDefinition's spec.group: a DNS subdomain with at
// least one dot.
func ValidateAPIGroup(flag, group string) error {
	if errs := validation.IsDNS1123Subdomain(group); len(errs) > 0 {
		return fmt.Errorf("%s %q is not a valid API group name: %s (an API group is a lowercase DNS name with a dot, as a CRD's spec.group)", flag, group, strings.Join(errs, "; "))
	}
	if !strings.Contains(group, ".") {
		return fmt.Errorf("%s %q is not a valid API group name: an API group is a DNS name with at least one dot, as a CRD's spec.group", flag, group)
	}
	return nil
}

// CreateGroup reads create's --group and returns the group's package name
// (its folder under pkg/apis). --group is either a package name, served as
// <group>.<domain> (stable), or an API group name in full that is the domain
// itself or outside it (example.com in a project of domain example.com,
// widgets.sh): that group is served under its name, from the package named
// by its first label (example, widgets), and recorded in p.Groups. A first
// label with dashes, which an API group may have (cert-manager.io, or
// --group cert-manager for cert-manager.<domain>), names the package
// without them (certmanager), as Kubernetes projects do. taken tells
// whether a package folder already exists.
func (p *Project) CreateGroup(group string, taken func(dir string) bool) (string, error) {
	if dir, ok := p.recordedGroup(group); ok {
		return dir, nil
	}
	full := group
	if !strings.Contains(group, ".") || strings.HasSuffix(group, "."+p.Domain) {
		if !strings.Contains(group, "-") || len(validation.IsDNS1123Label(group)) > 0 {
			if err := ValidateGroup(group, p.Domain); err != nil {
				return "", err
			}
			return group, nil
		}
		// cert-manager: the group cert-manager.<domain>, from package certmanager.
		full = group + "." + p.Domain
		if errs := validation.IsDNS1123Subdomain(full); len(errs) > 0 {
			return "", fmt.Errorf("--group %q: %s is not a valid API group name: %s", group, full, strings.Join(errs, "; "))
		}
	} else if err := ValidateAPIGroup("--group", group); err != nil {
		return "", err
	}
	dir, label := GroupPackage(full), "first label"
	if strings.Contains(GroupLabel(full), "-") {
		label += ", without dashes"
	}
	if err := ValidateGroup(dir, p.Domain); err != nil {
		return "", fmt.Errorf("--group %s is served from the Go package pkg/apis/<%s>, and %w", group, label, err)
	}
	if _, recorded := p.Groups[dir]; recorded || taken(dir) || slices.ContainsFunc(p.Resources, func(r *Resource) bool { return r.Group == dir && !r.External }) {
		return "", fmt.Errorf("--group %s is served from the Go package pkg/apis/%s (its %s), which is group %s already: one package serves one group", group, dir, label, p.FullGroup(dir))
	}
	if p.Groups == nil {
		p.Groups = map[string]string{}
	}
	p.Groups[dir] = full
	return dir, nil
}

// recordedGroup finds the package of a group PROJECT records, named by
// --group in full (cert-manager.io) or, for a group of the domain, without
// it (cert-manager for cert-manager.<domain>).
func (p *Project) recordedGroup(group string) (string, bool) {
	for dir, full := range p.Groups {
		if group == full || group+"."+p.Domain == full {
			return dir, true
		}
	}
	return "", false
}

// GroupLabel is the first label of an API group name (cert-manager of
// cert-manager.io).
func GroupLabel(fullGroup string) string {
	return strings.SplitN(fullGroup, ".", 2)[0]
}

// GroupPackage is the Go package that serves a group given in full: its
// first label without dashes (cert-manager.io -> certmanager).
func GroupPackage(fullGroup string) string {
	return strings.ReplaceAll(GroupLabel(fullGroup), "-", "")
}

// GroupGoName is the Go name the typed clients give a group (the
// CertManagerV1() of the clientset, the CertManager() of the informer
// factory): its first label in UpperCamelCase. client-gen derives the same
// name by itself unless the label has a dash (GroupGoNameMarker).
func GroupGoName(fullGroup string) string {
	return GoName(GroupLabel(fullGroup))
}

// GroupGoNameMarker is the value of the +groupGoName marker a group's
// version packages need, or "" when client-gen's own name for the group
// (its first label, capitalised) is a Go identifier already.
func GroupGoNameMarker(fullGroup string) string {
	if strings.Contains(GroupLabel(fullGroup), "-") {
		return GroupGoName(fullGroup)
	}
	return ""
}

// reservedGroups would shadow packages that generated code imports by name.
var reservedGroups = map[string]bool{"runtime": true, "schema": true, "builders": true, "apis": true, "openapi": true, "field": true, "metav1": true, "controllers": true, "conformance": true, "testing": true}

// goReserved tells why name cannot name a Go package or identifier of the
// generated code: a Go keyword, or a predeclared identifier (a package
// named string would shadow the type in every file that imports it), or "".
func goReserved(name string) string {
	if token.IsKeyword(name) {
		return "a Go keyword"
	}
	if gotypes.Universe.Lookup(name) != nil {
		return "a predeclared Go identifier"
	}
	return ""
}

// CheckGroupWithoutDomain refuses a --group given with the project's domain
// (stable.example.com for stable in a project of domain example.com): the
// flag names the group as pkg/apis/<group> does, the domain is added.
func CheckGroupWithoutDomain(group, domain string) error {
	if short, ok := strings.CutSuffix(group, "."+domain); ok && short != "" && domain != "" {
		return fmt.Errorf("--group %s: give the group without the project's domain: --group %s (it is served as %s)", group, short, group)
	}
	return nil
}

// ValidateGroup checks --group (it becomes a Go package name and the first label of <group>.<domain>).
func ValidateGroup(group, domain string) error {
	if err := CheckGroupWithoutDomain(group, domain); err != nil {
		return err
	}
	if !groupRE.MatchString(group) {
		hint := ""
		if fixed := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(group)); fixed != group && groupRE.MatchString(fixed) {
			// A Go package name: no capitals, no dashes.
			hint = fmt.Sprintf("; did you mean --group %s?", fixed)
		}
		return fmt.Errorf("--group %q is not valid: want lowercase letters and digits starting with a letter, such as stable or batch2 (it names a Go package)%s", group, hint)
	}
	if why := goReserved(group); why != "" {
		return fmt.Errorf("--group %q is not valid: it is %s, and the group names a Go package; choose another group", group, why)
	}
	if reservedGroups[group] {
		return fmt.Errorf("--group %q is reserved: generated code imports a package of that name; choose another group", group)
	}
	// Generated code imports <group>/<version> as <group><version>: a group
	// named like that (stablev1) could collide with it.
	if loc := regexp.MustCompile(`v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`).FindStringIndex(group); loc != nil && loc[0] > 0 {
		return fmt.Errorf("--group %q is not valid: it may not end in a version (%s)", group, group[loc[0]:])
	}
	if errs := validation.IsDNS1123Subdomain(group + "." + domain); len(errs) > 0 {
		return fmt.Errorf("--group %q: %s.%s is not a valid API group name: %s", group, group, domain, strings.Join(errs, "; "))
	}
	return nil
}

// ValidateVersion checks --version.
func ValidateVersion(version string) error {
	if !versionRE.MatchString(version) {
		return fmt.Errorf("--version %q is not valid: want a Kubernetes API version such as v1, v1alpha1 or v2beta3%s", version, versionHint(version))
	}
	if why := goReserved(version); why != "" {
		return fmt.Errorf("--version %q is not valid: it is %s, and the version names a Go package", version, why)
	}
	return nil
}

// versionHint guesses the version meant by one that is not valid: v1beta
// (v1beta1), V1 (v1), 1 (v1), v1.0 (v1).
func versionHint(version string) string {
	guess := strings.ToLower(version)
	if !strings.HasPrefix(guess, "v") {
		guess = "v" + guess
	}
	guess = strings.TrimSuffix(strings.TrimSuffix(guess, ".0"), ".0")
	if strings.HasSuffix(guess, "alpha") || strings.HasSuffix(guess, "beta") {
		guess += "1"
	}
	if guess != version && versionRE.MatchString(guess) {
		return fmt.Sprintf("; did you mean --version %s?", guess)
	}
	return ""
}

// ValidateKind checks --kind.
func ValidateKind(kind string) error {
	if !kindRE.MatchString(kind) {
		return fmt.Errorf("--kind %q is not valid: want an UpperCamelCase Go identifier such as CronTab%s", kind, kindHint(kind))
	}
	// The lowercased kind names the controller's package and the files.
	if why := goReserved(strings.ToLower(kind)); why != "" {
		return fmt.Errorf("--kind %q is not valid: its lowercase form %q is %s, and it names the controller's Go package; choose another kind", kind, strings.ToLower(kind), why)
	}
	if strings.HasSuffix(kind, "List") {
		return fmt.Errorf("--kind %q is not valid: a kind may not end in List (the list kind %sList is generated)", kind, kind)
	}
	return nil
}

// ValidateName checks a resource name given by flag (plural, singular, short
// name, category): lowercase DNS-1035 labels, as discovery requires.
func ValidateName(flag, name string) error {
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		if lower := strings.ToLower(name); lower != name && len(validation.IsDNS1035Label(lower)) == 0 {
			return fmt.Errorf("%s %q is not valid: want a lowercase name of letters, digits and '-', starting with a letter; did you mean %s %s?", flag, name, flag, lower)
		}
		return fmt.Errorf("%s %q is not valid: want a lowercase name of letters, digits and '-', starting with a letter (%s)", flag, name, strings.Join(errs, "; "))
	}
	return nil
}

// Plural derives the resource name of a kind the way Kubernetes does (CronTab -> crontabs, Policy -> policies).
func Plural(kind string) string {
	plural, _ := meta.UnsafeGuessKindToResource(schema.GroupVersionKind{Kind: kind})
	return plural.Resource
}

// Singular is the lowercased kind.
func Singular(kind string) string { return strings.ToLower(kind) }

// names lists the names a resource takes in its group's value space (seed
// 001: kind, list kind, plural, singular and short names must not collide).
func names(x *Resource) map[string]string {
	out := map[string]string{
		strings.ToLower(x.Kind): "kind", strings.ToLower(x.Kind + "List"): "list kind",
		x.Plural: "plural", x.Singular: "singular",
	}
	for _, s := range x.ShortNames {
		out[s] = "short name"
	}
	return out
}

// CheckClash refuses a new resource whose names collide with another kind of
// the same group, or with a built-in Kubernetes resource of the same group.
func (p *Project) CheckClash(r *Resource) error {
	mine := names(r)
	for _, o := range p.Resources {
		if o.Group != r.Group || o.Kind == r.Kind || o.External {
			continue
		}
		for n, what := range names(o) {
			if myWhat, ok := mine[n]; ok {
				return fmt.Errorf("--kind %s: its %s %q clashes with the %s of kind %s in group %s", r.Kind, myWhat, n, what, o.Kind, p.FullGroup(r.Group))
			}
		}
	}
	for n, what := range builtinNames(p.FullGroup(r.Group)) {
		if myWhat, ok := mine[n]; ok {
			return fmt.Errorf("--kind %s: its %s %q clashes with the %s of a built-in Kubernetes resource in group %s", r.Kind, myWhat, n, what, p.FullGroup(r.Group))
		}
	}
	return nil
}

// Naming rules of generated code, one home for each.

// ControllerPackage is the folder name of a kind's controller.
func ControllerPackage(kind string) string { return strings.ToLower(kind) }

// OpenAPIModelPackage is the +k8s:openapi-model-package of a version: the
// package path in the reverse-domain form Kubernetes uses for definition
// names (example.com/crontab -> com.example.crontab.pkg.apis.stable.v1).
func OpenAPIModelPackage(module, group, version string) string {
	parts := strings.Split(module, "/")
	host := strings.Split(parts[0], ".")
	for i, j := 0, len(host)-1; i < j; i, j = i+1, j-1 {
		host[i], host[j] = host[j], host[i]
	}
	out := append(host, parts[1:]...)
	out = append(out, strings.Split(APIsDir, "/")...)
	out = append(out, group, version)
	return strings.Join(out, ".")
}

// ClientPlural is the method name the generated clientset gives a resource
// (CronTabs, or Oxen for --resource oxen), from the same rule client-gen applies.
func ClientPlural(kind, plural string) string {
	if namer.NewAllLowercasePluralNamer(nil).Name(&types.Type{Name: types.Name{Name: kind}}) == plural {
		return namer.NewPublicPluralNamer(nil).Name(&types.Type{Name: types.Name{Name: kind}})
	}
	return strings.ToUpper(plural[:1]) + plural[1:]
}

// ImportAlias is the conventional import name of a package: metav1 for
// k8s.io/apimachinery/pkg/apis/meta/v1, corev1 for k8s.io/api/core/v1.
func ImportAlias(path string) string {
	parts := strings.Split(path, "/")
	last := parts[len(parts)-1]
	if len(parts) > 1 && versionLike(last) {
		return strings.ReplaceAll(parts[len(parts)-2], "-", "") + last
	}
	return strings.ReplaceAll(last, "-", "")
}

func versionLike(s string) bool {
	return len(s) > 1 && s[0] == 'v' && s[1] >= '0' && s[1] <= '9'
}

// The project's folders and files that generate and the commands share,
// relative to the project root (slash-separated, as in messages; join
// them with filepath.FromSlash).
const (
	// BoilerplateFile is the license header of every generated Go file.
	BoilerplateFile = "hack/boilerplate.go.txt"
	// APIsDir holds a package per group, a package per version below it.
	APIsDir = "pkg/apis"
	// ControllerDir holds a package per controller.
	ControllerDir = "pkg/controller"
	// OpenAPIDir holds the generated OpenAPI definitions.
	OpenAPIDir = "pkg/openapi"
)

// Boilerplate reads the license header of the project at root
// (BoilerplateFile), which every generated and scaffolded Go file starts with.
func Boilerplate(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(BoilerplateFile)))
	if err != nil {
		return "", fmt.Errorf("reading the license header: %w", err)
	}
	return string(b), nil
}

// Controller is the folder of a controller's package: pkg/controller/<pkg>.
func Controller(pkg string) string {
	return filepath.Join(filepath.FromSlash(ControllerDir), pkg)
}

// APIs is a path under the project's pkg/apis: APIs("stable", "v1") is
// pkg/apis/stable/v1 (relative to the project root).
func APIs(elem ...string) string {
	return filepath.Join(append([]string{filepath.FromSlash(APIsDir)}, elem...)...)
}

// APIsImport is the import path of a package under pkg/apis.
func APIsImport(module string, elem ...string) string {
	return path.Join(append([]string{module, APIsDir}, elem...)...)
}

// GoName is the exported Go name of a group, version or subresource name, as
// generated accessors and handlers spell it: restart-now -> RestartNow.
func GoName(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// ValidateFieldPath accepts simple JSON paths of fields, such as
// .spec.replicas (the paths of the scale subresource).
func ValidateFieldPath(p string) error {
	if !strings.HasPrefix(p, ".") || strings.Contains(p, "..") || strings.ContainsAny(p, "[]*@? ") || strings.HasSuffix(p, ".") {
		return fmt.Errorf("%q is not a JSON path of fields such as .spec.replicas", p)
	}
	return nil
}

// kindHint guesses the kind meant by one that is not UpperCamelCase:
// crontab (Crontab), cron-tab or cron_tab (CronTab).
func kindHint(kind string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(kind, func(r rune) bool { return r == '-' || r == '_' || r == '.' || r == ' ' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	if guess := b.String(); guess != kind && kindRE.MatchString(guess) {
		return fmt.Sprintf("; did you mean --kind %s?", guess)
	}
	return ""
}
