package validation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/jsoncontent"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/utils/ptr"
)

// Validator validates the objects of one kind exactly as kube-apiserver
// validates custom resources: k8s.io/apiextensions-apiserver's own strategy
// (object metadata as a DNS subdomain name, the schema, list sets and maps,
// x-kubernetes-validations CEL rules within the Kubernetes cost limits, and
// ratcheting on update: a value left unchanged is not re-rejected), run on
// the object in the version it was sent in, as the client sent it (Record).
// It is the kind's builders.SchemaValidation.
type Validator struct {
	scheme *runtime.Scheme
	// nameRule replaces the DNS subdomain rule of metadata.name when the
	// kind's strategy declares a ValidateName hook.
	nameRule func(name string, prefix bool) []string
	status   bool // /status is served: a create carries no status
	group    string
	plural   string
	storage  string
	versions map[string]*crVersion
}

type crVersion struct {
	gvk        schema.GroupVersionKind
	structural *structuralschema.Structural
	main       strategyValidation
	status     strategyValidation
	// goType is the versioned Go type (a strategic merge patch applies by
	// the patch strategies of its fields).
	goType reflect.Type
	// zeros: where its Go type writes a field left out in the type's own
	// zero form (metav1.Duration's "0s"), which the request's form tells
	// from a value sent.
	zeros *zeroForms
	// parseAll: the kind has fields whose absence or null its encoding
	// hides, so every body is read (not only those holding a zero value);
	// fill: it has such fields with a default (defaultAbsent).
	parseAll, fill bool
	// manifest: the schema is a CRD manifest's, which prunes the fields it
	// does not declare (prune.go).
	manifest bool
	// defaultsIn: the schema has defaults inside spec, or status
	// (defaultSent).
	defaultsIn map[string]bool
}

// strategyValidation is what Validator uses of the custom resource
// strategies.
type strategyValidation interface {
	Validate(ctx context.Context, obj runtime.Object) field.ErrorList
	ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList
}

// New compiles the schemas of resource r of group (CEL programs included)
// once, at start-up, and registers their defaults for
// builders.ApplySchemaDefaults. It refuses schemas kube-apiserver would
// refuse in a CRD, naming the kind and the path. nameRule, when not nil,
// replaces the DNS subdomain rule of metadata.name (the kind's ValidateName
// hook).
func New(scheme *runtime.Scheme, group string, r *builders.Resource, nameRule func(name string, prefix bool) []string) (*Validator, error) {
	gk := schema.GroupKind{Group: group, Kind: r.Kind}
	namespaced, status, scale, storage := r.Namespaced, r.StatusSubresource, r.Scale, r.StorageVersion
	schemas := map[string]*apiextensions.JSONSchemaProps{}
	for version, s := range r.Schemas {
		var props apiextensionsv1.JSONSchemaProps
		if err := json.Unmarshal([]byte(s.OpenAPIV3), &props); err != nil {
			return nil, fmt.Errorf("%s: schema: %w", gk.WithVersion(version), err)
		}
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&props, internal, nil); err != nil {
			return nil, fmt.Errorf("%s: schema: %w", gk.WithVersion(version), err)
		}
		schemas[version] = internal
	}
	if err := checkSchemas(group, r, schemas); err != nil {
		return nil, err
	}
	v := &Validator{scheme: scheme, nameRule: nameRule, status: status, group: gk.Group, plural: r.Plural, storage: storage, versions: map[string]*crVersion{}}
	for version, internal := range schemas {
		gvk := gk.WithVersion(version)
		structural, err := structuralschema.NewStructural(internal)
		if err != nil {
			return nil, fmt.Errorf("%s: schema is not structural: %w", gvk, err)
		}
		versioned, err := scheme.New(gvk)
		if err != nil {
			return nil, err
		}
		requireTop(scheme, gk, versioned, structural, version == storage)
		manifest := r.Schemas[version].Manifest != ""
		if err := registerSchemaDefaults(versioned, structural, manifest); err != nil {
			return nil, fmt.Errorf("%s: defaults: %w", gvk, err)
		}
		registerManifestSchema(gvk, structural, manifest)
		schemaValidator, _, err := apiservervalidation.NewSchemaValidator(internal)
		if err != nil {
			return nil, fmt.Errorf("%s: schema: %w", gvk, err)
		}
		var statusSpec *apiextensions.CustomResourceSubresourceStatus
		var statusValidator apiservervalidation.SchemaValidator
		if status {
			statusSpec = &apiextensions.CustomResourceSubresourceStatus{}
			if st, ok := internal.Properties["status"]; ok {
				if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&st); err != nil {
					return nil, fmt.Errorf("%s: status schema: %w", gvk, err)
				}
			}
		}
		var scaleSpec *apiextensions.CustomResourceSubresourceScale
		if scale != nil {
			scaleSpec = &apiextensions.CustomResourceSubresourceScale{SpecReplicasPath: scale.SpecReplicasPath, StatusReplicasPath: scale.StatusReplicasPath}
			if scale.LabelSelectorPath != "" {
				p := scale.LabelSelectorPath
				scaleSpec.LabelSelectorPath = &p
			}
		}
		// The CEL programs of the schema's x-kubernetes-validations are
		// compiled here, once.
		main := customresource.NewStrategy(scheme, namespaced, gvk, schemaValidator, statusValidator, structural, statusSpec, scaleSpec, nil)
		cv := &crVersion{gvk: gvk, structural: structural, main: main, goType: reflect.TypeOf(versioned), zeros: zeroFormsOf(reflect.TypeOf(versioned)), manifest: manifest}
		required, defaults := absentFields(cv.goType, structural)
		// Own zero forms ("0s") are values the byte scan does not see.
		cv.parseAll, cv.fill = required || defaults || nullable(structural) || cv.zeros != nil, defaults
		cv.defaultsIn = defaultsInside(structural)
		if status {
			cv.status = customresource.NewStatusStrategy(main)
		}
		v.versions[version] = cv
	}
	return v, nil
}

// requireTop records which of the spec and status the schema of a version
// requires: never absent (jsoncontent.Absent) in that version's Go type,
// nor, for the storage version (storage), in the internal one, which is
// what is stored.
func requireTop(scheme *runtime.Scheme, gk schema.GroupKind, versioned runtime.Object, structural *structuralschema.Structural, storage bool) {
	var required []string
	if structural.ValueValidation != nil {
		required = structural.ValueValidation.Required
	}
	internal, _ := scheme.New(gk.WithVersion(runtime.APIVersionInternal))
	for _, k := range jsoncontent.AbsentFields {
		jsoncontent.Require(reflect.TypeOf(versioned), k, slices.Contains(required, k))
		if storage && internal != nil && reflect.TypeOf(internal) != reflect.TypeOf(versioned) {
			jsoncontent.Require(reflect.TypeOf(internal), k, slices.Contains(required, k))
		}
	}
}

// defaultsInside tells, of the spec and status, which have defaults inside
// (defaultSent).
func defaultsInside(structural *structuralschema.Structural) map[string]bool {
	in := map[string]bool{}
	for _, k := range jsoncontent.AbsentFields {
		if p, ok := structural.Properties[k]; ok {
			in[k] = hasDefaults(&p)
		}
	}
	return in
}

// version picks the version an object is validated in: the request's, or
// the storage version for calls from within the server.
func (v *Validator) version(ctx context.Context) *crVersion {
	if info, ok := request.RequestInfoFrom(ctx); ok && info.APIGroup == v.group {
		if cv := v.versions[info.APIVersion]; cv != nil {
			return cv
		}
	}
	return v.versions[v.storage]
}

// unstructured converts an internal object into its form in cv's version,
// as a custom resource would hold it: a zero spec or status is absent
// (jsoncontent.Absent), empty structs tagged omitempty are left out
// (dropEmptyStructs), and the nulls Go writes for nil slices, maps
// and pointers without omitempty are dropped where the schema does not allow
// null, as kube-apiserver drops them from a custom resource it decodes.
func (v *Validator) unstructured(obj runtime.Object, cv *crVersion) (*unstructured.Unstructured, error) {
	return v.unstructuredSent(obj, cv, nil)
}

// unstructuredSent is unstructured, with the top-level fields sent allows
// kept even when absent: an empty spec or status a protobuf body carries
// (sentEmpty).
func (v *Validator) unstructuredSent(obj runtime.Object, cv *crVersion, sent func(string) bool) (*unstructured.Unstructured, error) {
	out, err := v.scheme.ConvertToVersion(obj, cv.gvk.GroupVersion())
	if err != nil {
		return nil, err
	}
	m, err := jsoncontent.ToMap(out)
	if err != nil {
		return nil, err
	}
	for _, k := range jsoncontent.AbsentFields {
		if jsoncontent.Absent(out, k) && (sent == nil || !sent(k)) {
			delete(m, k) // restoreSent puts back one sent in JSON
		}
	}
	dropEmptyStructs(m, reflect.ValueOf(out))
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(m, cv.structural)
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(cv.gvk)
	return u, nil
}

// sentForm is the request's form of the object u (sent.go), when ctx is a
// write of this kind through the API (its Record), and whether it is the
// whole object the client wrote; old is the stored object, on update.
func (v *Validator) sentForm(ctx context.Context, u, old map[string]any, cv *crVersion) (map[string]any, sentShape, bool) {
	s := RecordFrom(ctx)
	if s == nil {
		return nil, sentNone, false
	}
	info, ok := request.RequestInfoFrom(ctx)
	if !ok || info.APIGroup != v.group || info.APIVersion != cv.gvk.Version || info.Resource != v.plural {
		return nil, sentNone, false // a write made by a hook, of another kind or version
	}
	switch info.Subresource {
	case "", "status":
	case "scale":
		if s.scale == nil {
			return nil, sentNone, false
		}
	default:
		return nil, sentNone, false // a custom subresource: its body is its request's
	}
	if info.Name != "" {
		if name, _, _ := unstructured.NestedString(u, "metadata", "name"); name != info.Name {
			return nil, sentNone, false
		}
	}
	var oldJSON func() ([]byte, error)
	if old != nil {
		oldJSON = func() ([]byte, error) { return json.Marshal(old) }
	}
	m, shape := s.form(oldJSON, deref(cv.goType), cv.parseAll)
	if shape == sentNone {
		return nil, sentNone, false
	}
	if av, ok := m["apiVersion"]; ok && av != cv.gvk.GroupVersion().String() {
		return nil, sentNone, false
	}
	if k, ok := m["kind"]; ok && k != cv.gvk.Kind {
		return nil, sentNone, false
	}
	// The whole object: a body or a patch applied to the stored object, or
	// an apply to a missing one; not /scale's replicas, not an apply merged
	// into a stored object.
	whole := s.scale == nil && (shape == sentObject || shape == sentApply && old == nil)
	return m, shape, whole
}

// restoreSent puts back into u, the encoding of the object validated, the
// values of the request's body that the encoding dropped, and takes out of
// it the zero values of fields the client left out (sent.go), when ctx is a
// write of this kind through the API; old is the stored object, on update.
func (v *Validator) restoreSent(ctx context.Context, u, old *unstructured.Unstructured, cv *crVersion, keep func(string) bool) {
	var oldObject map[string]any
	if old != nil {
		oldObject = old.Object
	}
	m, shape, whole := v.sentForm(ctx, u.Object, oldObject, cv)
	if shape == sentNone {
		return
	}
	restoreSent(u.Object, m, shape, whole, oldObject, cv.structural, cv.zeros, keep)
}

// Prune removes from obj, an object about to be stored, the fields its
// storage version's manifest does not declare, when the kind's schema is its
// CRD manifest's (a kind of markers is left as it is): decoding pruned what
// the client sent, but a hook (PrepareForCreate, PrepareForUpdate,
// Canonicalize) may set such a field, which a CRD would not store.
// The strategy's Canonicalize calls it last, before the object is stored.
func (v *Validator) Prune(obj runtime.Object) {
	cv := v.versions[v.storage]
	if cv == nil || !cv.manifest {
		return
	}
	if err := v.prune(obj, cv); err != nil {
		utilruntime.HandleError(fmt.Errorf("%s: pruning the fields its manifest does not declare: %w", cv.gvk, err))
	}
}

func (v *Validator) prune(obj runtime.Object, cv *crVersion) (err error) {
	defer jsoncontent.RecoverConversion(&err, "pruning", obj)
	out, err := v.scheme.ConvertToVersion(obj, cv.gvk.GroupVersion())
	if err != nil {
		return err
	}
	u, err := jsoncontent.ToMap(out)
	if err != nil {
		return err
	}
	if paths, err := pruneUnknown(u, cv.structural, true); err != nil || len(paths) == 0 {
		return err
	}
	switch {
	case out == obj:
		return fromMapZeroed(u, obj)
	case reflect.TypeOf(out) == reflect.TypeOf(obj):
		if err := fromMapZeroed(u, out); err != nil {
			return err
		}
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(out).Elem())
		return nil
	}
	if err := fromMapZeroed(u, out); err != nil {
		return err
	}
	return v.scheme.Convert(out, obj, nil)
}

// unknownPatched reports, per the request's fieldValidation, the fields a
// strategic merge patch sets that the kind's manifest does not declare
// (which decoding pruned: prune.go), as the patch handler reports a field
// its Go type lacks: Strict refuses the patch (a strict decoding error on
// the field "patch"), Warn (the default) answers with a warning each,
// Ignore says nothing. The other writes are reported as they are decoded
// (PruningSerializer). A CRD takes no strategic merge patch; the Go types
// served here do.
//
// Server-side apply refuses such a field whatever fieldValidation says, as
// kube-apiserver's does for a CRD (".spec.x: field not declared in
// schema"): its type converter reads the published models, which leave out
// what the manifest does not declare, unless another kind sharing the Go
// type declares it (openapi's pruning); the applied configuration is
// checked here too, so that a shared type does not let the field through
// to be pruned in silence.
func (v *Validator) unknownPatched(ctx context.Context, u, old *unstructured.Unstructured, cv *crVersion) field.ErrorList {
	r := RecordFrom(ctx)
	if !cv.manifest || r == nil {
		return nil
	}
	apply := strings.HasPrefix(mediaType(r.contentType), "application/apply-patch")
	if !apply && (mediaType(r.contentType) != "application/strategic-merge-patch+json" || r.fieldValidation == metav1.FieldValidationIgnore) {
		return nil
	}
	if !apply && r.overflow && r.fieldValidation == metav1.FieldValidationStrict {
		// Not kept, so not checked: refused rather than let an undeclared
		// field be pruned in silence under Strict.
		return field.ErrorList{field.Forbidden(field.NewPath("patch"), fmt.Sprintf("a strategic merge patch over %d bytes cannot be checked for fields the kind's CRD manifest does not declare under fieldValidation=Strict: send it as a merge or JSON patch, or with fieldValidation=Warn", maxSentBody))}
	}
	var oldObject map[string]any
	if old != nil {
		oldObject = old.Object
	}
	m, shape, _ := v.sentForm(ctx, u.Object, oldObject, cv)
	if shape == sentNone {
		return nil
	}
	paths, _ := pruneUnknown(m, cv.structural, true)
	if len(paths) == 0 {
		return nil
	}
	if apply {
		var errs field.ErrorList
		for _, p := range paths {
			errs = append(errs, field.Invalid(field.NewPath("patch"), "."+p, "."+p+": field not declared in schema"))
		}
		return errs
	}
	var errs []error
	for _, p := range paths {
		errs = append(errs, fmt.Errorf(`unknown field "%s"`, p))
	}
	if r.fieldValidation == metav1.FieldValidationStrict {
		return field.ErrorList{field.Invalid(field.NewPath("patch"), string(r.buf), runtime.NewStrictDecodingError(errs).Error())}
	}
	for _, e := range errs {
		warning.AddWarning(ctx, "", e.Error())
	}
	return nil
}

// DefaultAbsent puts into obj (on update, old is the stored object) the
// schema's defaults of the fields the client left out that the Go types
// write as their zero value (no omitempty): decoding cannot tell them from
// a zero sent, and a CRD stores the default. Called before the
// PrepareForCreate and PrepareForUpdate hooks, for the kinds that have such
// fields. The object is read and written as its JSON (jsoncontent); an
// object that cannot be fails the request's validation (the prepare hooks
// return nothing): step 4 of the package documentation's order.
func (v *Validator) DefaultAbsent(ctx context.Context, obj, old runtime.Object) {
	RecordFrom(ctx).defaulted(v.defaultAbsent(ctx, obj, old, func(k string) bool { return !v.status || k != "status" }))
}

// DefaultAbsentStatus is DefaultAbsent for a write to /status: its status only.
func (v *Validator) DefaultAbsentStatus(ctx context.Context, obj, old runtime.Object) {
	RecordFrom(ctx).defaulted(v.defaultAbsent(ctx, obj, old, func(k string) bool { return k == "status" }))
}

func (v *Validator) defaultAbsent(ctx context.Context, obj, old runtime.Object, keep func(string) bool) (err error) {
	cv := v.version(ctx)
	if cv == nil || RecordFrom(ctx) == nil {
		return nil
	}
	defer jsoncontent.RecoverConversion(&err, "defaulting", obj)
	if err := v.defaultSent(ctx, obj, old, cv, keep); err != nil || !cv.fill {
		return err
	}
	f, err := v.writeForm(ctx, obj, old, cv)
	if err != nil || f.shape == sentNone || !fillDefaults(f.u, f.sent, f.shape, f.whole, f.old, cv.structural, cv.zeros, keep) {
		return err
	}
	if err := jsoncontent.FromMap(f.u, f.out); err != nil {
		return fmt.Errorf("%s: the defaults of fields left out: %w", cv.gvk, err)
	}
	if err := v.setFrom(obj, f.out); err != nil {
		return fmt.Errorf("%s: the defaults of fields left out: %w", cv.gvk, err)
	}
	return nil
}

// writeForm is what a write's defaulting reads: the object in cv's version
// (out) and its encoding (u), the stored object's encoding (old), and the
// request's form of the object (sent, shape, whole: sentForm).
type writeForm struct {
	out    runtime.Object
	u, old map[string]any
	sent   map[string]any
	shape  sentShape
	whole  bool
}

func (v *Validator) writeForm(ctx context.Context, obj, old runtime.Object, cv *crVersion) (writeForm, error) {
	out, err := v.scheme.ConvertToVersion(obj, cv.gvk.GroupVersion())
	if err != nil {
		return writeForm{}, err
	}
	f := writeForm{out: out}
	if f.u, err = jsoncontent.ToMap(out); err != nil {
		return writeForm{}, err
	}
	if old != nil {
		uOld, err := v.unstructured(old, cv)
		if err != nil {
			return writeForm{}, err
		}
		f.old = uOld.Object
	}
	f.sent, f.shape, f.whole = v.sentForm(ctx, f.u, f.old, cv)
	return f, nil
}

// setFrom sets obj, an object of the kind, to out, the same in a version.
func (v *Validator) setFrom(obj, out runtime.Object) error {
	switch {
	case out == obj:
	case reflect.TypeOf(out) == reflect.TypeOf(obj):
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(out).Elem())
	default:
		return v.scheme.Convert(out, obj, nil)
	}
	return nil
}

// defaultSent defaults inside a spec or status the client sent that holds
// the Go zero value (`spec: {}`, or a protobuf body, which always carries
// one), as a CRD defaults what it was sent: decoding took it for absent
// (applySchemaDefaults), as it takes one the client left out, which stays so.
func (v *Validator) defaultSent(ctx context.Context, obj, old runtime.Object, cv *crVersion, keep func(string) bool) error {
	var candidates []string
	for _, k := range jsoncontent.AbsentFields {
		if keep(k) && cv.defaultsIn[k] && jsoncontent.Zero(obj, k) {
			candidates = append(candidates, k)
		}
	}
	if candidates == nil {
		return nil
	}
	out, err := v.scheme.ConvertToVersion(obj, cv.gvk.GroupVersion())
	if err != nil {
		return err
	}
	var sent map[string]bool
	for _, k := range candidates {
		// Absent in the request's version (whose schema may require it
		// where another's does not).
		if jsoncontent.Absent(out, k) && v.sentField(ctx, obj, old, cv, k) {
			if sent == nil {
				sent = map[string]bool{}
			}
			sent[k] = true
		}
	}
	if sent == nil {
		return nil
	}
	defaultObject(out, sent)
	if err := v.setFrom(obj, out); err != nil {
		return fmt.Errorf("%s: the defaults of a %s sent empty: %w", cv.gvk, strings.Join(slices.Sorted(maps.Keys(sent)), " and "), err)
	}
	return nil
}

// sentEmpty is, for a write whose body is protobuf (which always carries
// the spec and status, an empty one as its zero value), the top-level fields
// keep allows, which validation sees as sent; nil for any other write.
func sentEmpty(ctx context.Context, keep func(string) bool) func(string) bool {
	r := RecordFrom(ctx)
	if r == nil || mediaType(r.contentType) != runtime.ContentTypeProtobuf {
		return nil
	}
	return keep
}

// sentField tells whether the write of ctx holds the top-level field k of
// obj: a protobuf body always does (go-to-protobuf writes every message
// field); another holds it when its form does, which a body that does not
// name k cannot.
func (v *Validator) sentField(ctx context.Context, obj, old runtime.Object, cv *crVersion, k string) bool {
	r := RecordFrom(ctx)
	if r.scale != nil {
		return k == "spec"
	}
	if mediaType(r.contentType) == runtime.ContentTypeProtobuf {
		return true // however large
	}
	if r.overflow || len(r.buf) == 0 {
		return false
	}
	if !bytes.Contains(r.buf, []byte(k)) {
		return false
	}
	all := *cv
	all.parseAll = true // a body without zero values is read too
	f, err := v.writeForm(ctx, obj, old, &all)
	if err != nil {
		return false
	}
	sv, ok := f.sent[k]
	return ok && sv != nil
}

// Validate validates a new object (step 5 of the package documentation's
// order).
func (v *Validator) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	defaulting := RecordFrom(ctx).validating()
	cv := v.version(ctx)
	if cv == nil {
		return nil
	}
	if defaulting != nil {
		return defaulting
	}
	keep := func(k string) bool { return !v.status || k != "status" }
	u, err := v.unstructuredSent(obj, cv, sentEmpty(ctx, keep))
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	if errs := v.unknownPatched(ctx, u, nil, cv); len(errs) > 0 {
		return errs
	}
	v.restoreSent(ctx, u, nil, cv, keep)
	if v.status {
		// A custom resource is created without status when /status is
		// served; the Go object always has one, emptied.
		delete(u.Object, "status")
	}
	errs := cv.main.Validate(ctx, u)
	if v.nameRule == nil {
		return errs
	}
	// The kind's own name rule, instead of a DNS subdomain.
	errs = errs.Filter(func(e error) bool {
		fe, ok := e.(*field.Error)
		return ok && (fe.Field == "metadata.name" || fe.Field == "metadata.generateName") && fe.Type == field.ErrorTypeInvalid
	})
	for _, n := range []struct {
		field, value string
		prefix       bool
	}{{"name", u.GetName(), false}, {"generateName", u.GetGenerateName(), true}} {
		if n.value == "" {
			continue
		}
		for _, msg := range v.nameRule(n.value, n.prefix) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", n.field), n.value, msg))
		}
	}
	return errs
}

// ValidateUpdate validates an update of the main resource (step 5 of the
// package documentation's order).
func (v *Validator) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return v.validateUpdate(ctx, obj, old, false)
}

// ValidateStatusUpdate validates an update through /status (step 5 of the
// package documentation's order).
func (v *Validator) ValidateStatusUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return v.validateUpdate(ctx, obj, old, true)
}

func (v *Validator) validateUpdate(ctx context.Context, obj, old runtime.Object, status bool) field.ErrorList {
	defaulting := RecordFrom(ctx).validating()
	cv := v.version(ctx)
	if cv == nil {
		return nil
	}
	if defaulting != nil {
		return defaulting
	}
	// What the request may change: through /status its status only;
	// otherwise all but the status /status serves.
	keep := func(k string) bool { return !v.status || k != "status" }
	if status {
		keep = func(k string) bool { return k == "status" }
	}
	u, err := v.unstructuredSent(obj, cv, sentEmpty(ctx, keep))
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	uOld, err := v.unstructured(old, cv)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	if errs := v.unknownPatched(ctx, u, uOld, cv); len(errs) > 0 {
		return errs
	}
	v.restoreSent(ctx, u, uOld, cv, keep)
	if status && cv.status != nil {
		return cv.status.ValidateUpdate(ctx, u, uOld)
	}
	return cv.main.ValidateUpdate(ctx, u, uOld)
}

// checkSchemas refuses to serve a kind whose schemas kube-apiserver would
// refuse in a CRD: it validates the CRD the kind would be, with
// apiextensions-apiserver's own CRD validation (structural schema, defaults
// valid against it, CEL rules that compile and stay within the cost
// budget), naming the kind and the path of what is wrong.
func checkSchemas(group string, r *builders.Resource, schemas map[string]*apiextensions.JSONSchemaProps) error {
	scope := apiextensions.NamespaceScoped
	if !r.Namespaced {
		scope = apiextensions.ClusterScoped
	}
	crd := &apiextensions.CustomResourceDefinition{
		// The check is of the schema: API review of *.k8s.io groups is the
		// owner's business, not the server's.
		ObjectMeta: metav1.ObjectMeta{Name: r.Plural + "." + group, Annotations: map[string]string{"api-approved.kubernetes.io": "unapproved, served by an aggregated apiserver"}},
		Spec: apiextensions.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensions.CustomResourceDefinitionNames{
				Plural: r.Plural, Singular: r.Singular, Kind: r.Kind, ListKind: r.Kind + "List",
				ShortNames: r.ShortNames, Categories: r.Categories,
			},
			Scope:                 scope,
			Conversion:            &apiextensions.CustomResourceConversion{Strategy: apiextensions.NoneConverter},
			PreserveUnknownFields: ptr.To(false),
		},
		Status: apiextensions.CustomResourceDefinitionStatus{StoredVersions: []string{r.StorageVersion}},
	}
	if r.StatusSubresource {
		crd.Spec.Subresources = &apiextensions.CustomResourceSubresources{Status: &apiextensions.CustomResourceSubresourceStatus{}}
	}
	// As a CRD must: one top-level schema when every version has the same.
	same := true
	for _, v := range r.Versions {
		same = same && reflect.DeepEqual(schemas[v], schemas[r.StorageVersion])
	}
	if same {
		crd.Spec.Validation = &apiextensions.CustomResourceValidation{OpenAPIV3Schema: schemas[r.StorageVersion]}
	}
	for _, v := range r.Versions {
		version := apiextensions.CustomResourceDefinitionVersion{Name: v, Served: true, Storage: v == r.StorageVersion}
		if s, ok := schemas[v]; ok && !same {
			version.Schema = &apiextensions.CustomResourceValidation{OpenAPIV3Schema: s}
		}
		crd.Spec.Versions = append(crd.Spec.Versions, version)
	}
	errs := apiextensionsvalidation.ValidateCustomResourceDefinition(context.Background(), crd)
	if len(errs) == 0 {
		return nil
	}
	var lines []string
	for _, e := range errs {
		line := fmt.Sprintf("  %s: %s", strings.Replace(e.Field, "spec.validation.openAPIV3Schema", "schema", 1), e.Detail)
		if rule, ok := e.BadValue.(string); ok && rule != "" {
			line += fmt.Sprintf(" (%q)", rule)
		}
		lines = append(lines, line)
	}
	return fmt.Errorf("%s.%s: kube-apiserver would refuse this schema (generated from the types and their markers) in a CRD:\n%s", r.Kind, group, strings.Join(lines, "\n"))
}
