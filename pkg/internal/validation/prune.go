package validation

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// A kind whose schema is a CRD manifest's (builders.Schema.Manifest) is
// pruned as kube-apiserver prunes the custom resources of that CRD: a field
// the schema does not declare is not kept, also where the Go type has it (a
// standard channel's manifest served from Go types holding experimental
// fields). A kind whose schema is derived from its markers declares the
// fields its Go type has: it is not pruned, and nothing here changes for it.
//
// The pruning is done in two places, which together cover every way an
// object comes into the server:
//
//   - On every decode of a versioned object (applySchemaDefaults, which the
//     generated SetDefaults_<Kind> calls through builders.ApplySchemaDefaults):
//     the object is encoded, pruned, defaulted and decoded into a zeroed
//     object. Every write's object is decoded and defaulted so (create,
//     update, JSON and merge patch through the codec; strategic merge patch
//     and server-side apply call the defaulter on their result), /status
//     and /scale included, and so is every object read from storage, in
//     JSON or protobuf: an object stored before the kind's schema was its
//     manifest's is served, and written again, without the fields the
//     manifest leaves out.
//   - On a request's body, before it is decoded into the Go types
//     (PruningSerializer, the API groups' JSON and YAML decoders): the
//     fields the schema does not declare are pruned there and reported as
//     kube-apiserver's CRD handler reports them, per the request's
//     fieldValidation (a strict decoding error `unknown field "spec.x"`:
//     Strict refuses the request with 400, Warn, the default, answers with a
//     warning, Ignore says nothing). It covers create, update and /status
//     bodies, and JSON and merge patches (whose result the handler decodes
//     with the same decoders). The decode-time pruning above would keep
//     none of these fields either, but cannot tell the request what it
//     dropped: once decoded into the Go types, a field the Go type has is
//     indistinguishable from one the client sent.

// manifestKinds counts the kinds registered in manifestSchemas, so that
// decoding stays as cheap as before in a server that has none.
var (
	manifestSchemas sync.Map // schema.GroupVersionKind -> *structuralschema.Structural
	manifestKinds   atomic.Int64
)

// registerManifestSchema makes PruningSerializer prune the objects of gvk by
// s when the kind's schema is its manifest's (manifest), and no longer
// otherwise (a server started again with the kind's schema from markers).
// Like the schema defaults (defaults.go), the registry is the process's: a
// process serves one generated apiserver, whose kinds are registered once
// when it starts (tests start servers one after another).
func registerManifestSchema(gvk schema.GroupVersionKind, s *structuralschema.Structural, manifest bool) {
	if manifest {
		if _, loaded := manifestSchemas.Swap(gvk, s); !loaded {
			manifestKinds.Add(1)
		}
		return
	}
	if _, loaded := manifestSchemas.LoadAndDelete(gvk); loaded {
		manifestKinds.Add(-1)
	}
}

// pruneUnknown removes from u, an object of schema s, the fields s does not
// declare, as kube-apiserver's CRD handler does (unstructuredSchemaCoercer):
// the pruning of k8s.io/apiextensions-apiserver, which keeps the root's
// apiVersion, kind and metadata, then the coercion of the metadata of the
// embedded resources (x-kubernetes-embedded-resource), whose unknown fields
// it drops too. It returns the paths of what it removed (`spec.x`,
// `spec.items[0].x`). dropInvalid drops an embedded metadata field of the
// wrong type, as kube-apiserver does when it reads from storage; otherwise
// that is the error returned.
func pruneUnknown(u map[string]any, s *structuralschema.Structural, dropInvalid bool) ([]string, error) {
	paths := pruning.PruneWithOptions(u, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	ferr, metaPaths := schemaobjectmeta.CoerceWithOptions(nil, u, s, false, schemaobjectmeta.CoerceOptions{DropInvalidFields: dropInvalid, ReturnUnknownFieldPaths: true})
	if ferr != nil {
		return paths, ferr
	}
	return append(paths, metaPaths...), nil
}

// PruningSerializer is ns with JSON and YAML decoders that prune, from the
// objects of the kinds whose schema is a CRD manifest's, the fields the
// schema does not declare, before the object is decoded into its Go type,
// and report them as kube-apiserver reports those of a custom resource: the
// strict decoders return a strict decoding error (`unknown field "spec.x"`)
// beside the decoded object, which the request handlers turn into a 400
// (fieldValidation=Strict) or a warning (Warn). The server serves its API
// groups with it. A body with nothing to prune is decoded as it was sent.
func PruningSerializer(ns runtime.NegotiatedSerializer) runtime.NegotiatedSerializer {
	return WithSerializers(ns, func(info *runtime.SerializerInfo) {
		yamlBody := false
		switch info.MediaType {
		case runtime.ContentTypeJSON:
		case runtime.ContentTypeYAML:
			yamlBody = true
		default:
			// Protobuf (and CBOR) bodies are pruned when decoded
			// (applySchemaDefaults), without a report.
			return
		}
		if info.Serializer != nil {
			info.Serializer = pruningDecoder{Serializer: info.Serializer, yaml: yamlBody}
		}
		if info.StrictSerializer != nil {
			info.StrictSerializer = pruningDecoder{Serializer: info.StrictSerializer, yaml: yamlBody, strict: true}
		}
	})
}

// WithSerializers is ns with the serializers of each of its media types as
// wrap makes them.
func WithSerializers(ns runtime.NegotiatedSerializer, wrap func(info *runtime.SerializerInfo)) runtime.NegotiatedSerializer {
	infos := slices.Clone(ns.SupportedMediaTypes())
	for i := range infos {
		wrap(&infos[i])
	}
	return mediaTypes{NegotiatedSerializer: ns, infos: infos}
}

// mediaTypes is a NegotiatedSerializer with other serializers.
type mediaTypes struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

func (m mediaTypes) SupportedMediaTypes() []runtime.SerializerInfo { return m.infos }

// pruningDecoder is a JSON or YAML serializer whose Decode prunes first.
type pruningDecoder struct {
	runtime.Serializer
	yaml   bool
	strict bool // the strict serializer: what was pruned is reported
}

func (d pruningDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if manifestKinds.Load() == 0 {
		return d.Serializer.Decode(data, defaults, into)
	}
	body := data
	if d.yaml {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return d.Serializer.Decode(data, defaults, into) // it says what is wrong
		}
		body = j
	}
	// The kind first (what the JSON serializer reads of it), the whole
	// body only for a manifest kind's.
	gvk, err := kjson.DefaultMetaFactory.Interpret(body)
	if err != nil {
		return d.Serializer.Decode(data, defaults, into)
	}
	s := manifestSchemaOf(*gvk, defaults)
	if s == nil {
		return d.Serializer.Decode(data, defaults, into)
	}
	var u map[string]any
	if err := utiljson.Unmarshal(body, &u); err != nil {
		return d.Serializer.Decode(data, defaults, into)
	}
	unknown, err := pruneUnknown(u, s, false)
	if err != nil {
		return nil, defaults, err
	}
	if len(unknown) == 0 {
		return d.Serializer.Decode(data, defaults, into)
	}
	pruned, err := json.Marshal(u)
	if err != nil {
		return nil, defaults, err
	}
	obj, gvk, err := d.Serializer.Decode(pruned, defaults, into)
	if !d.strict {
		return obj, gvk, err
	}
	var strictErrs []error
	if err != nil {
		strictErr, ok := runtime.AsStrictDecodingError(err)
		if !ok || obj == nil {
			return obj, gvk, err
		}
		strictErrs = strictErr.Errors()
	}
	// What the strict decoder finds in the body as sent, which its pruned
	// form no longer shows (a duplicate field), first, as kube-apiserver
	// reports it; a body the Go types cannot decode as sent (a pruned
	// field of another type) has only the pruned form's.
	if _, _, sentErr := d.Serializer.Decode(data, defaults, nil); sentErr != nil {
		if sent, ok := runtime.AsStrictDecodingError(sentErr); ok {
			strictErrs = sent.Errors()
		}
	}
	// Then the fields pruned, in kube-apiserver's words
	// (schemaCoercingDecoder), each once.
	var out []error
	seen := map[string]bool{}
	for _, p := range unknown {
		seen[fmt.Sprintf(`unknown field "%s"`, p)] = true
	}
	for _, e := range strictErrs {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	for _, p := range unknown {
		out = append(out, fmt.Errorf(`unknown field "%s"`, p))
	}
	return obj, gvk, runtime.NewStrictDecodingError(out)
}

// manifestSchemaOf is the manifest schema of the objects of gvk (the
// apiVersion and kind of a body, completed by defaults as the JSON
// serializer completes them), or nil.
func manifestSchemaOf(gvk schema.GroupVersionKind, defaults *schema.GroupVersionKind) *structuralschema.Structural {
	if defaults != nil {
		if gvk.Kind == "" {
			gvk.Kind = defaults.Kind
		}
		if gvk.Version == "" && gvk.Group == "" {
			gvk.Group, gvk.Version = defaults.Group, defaults.Version
		}
	}
	s, ok := manifestSchemas.Load(gvk)
	if !ok {
		return nil
	}
	return s.(*structuralschema.Structural)
}
