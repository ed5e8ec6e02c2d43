// Package validation validates and defaults the objects of a kind by its
// schemas exactly as kube-apiserver validates and defaults custom resources
// (Validator), on what the client sent (Record).
//
// # What the client sent
//
// A custom resource is validated as kube-apiserver's CRD handler decodes
// it: the request as sent, pruned and defaulted. The object this server
// validates was decoded into the Go types and is encoded again, and a zero
// value the client sent on an omitempty (or omitzero) field is gone from
// that encoding: `replicas: 0`, `tls: {}`, `selector: {matchLabels: {}}`.
// So each write keeps its request body (RecordWrites), and the schema
// validation puts back into the encoded object the values of the body that
// the encoding dropped (restoreSent), with the schema's defaults inside
// them: everything else, and the Go object the hooks see and the store
// keeps, is as before. A value a hook changed is not touched (only values
// the encoding lacks are restored, and only zero values: what a hook cleared
// was not zero when sent).
//
// Per kind of write, the body is read as kube-apiserver reads it:
//   - create and update (JSON, YAML or CBOR): the object as sent;
//   - merge patch and JSON patch: the patch applied to the stored object's
//     encoding, as the patch handler applies it;
//   - server-side apply (YAML or CBOR): the applied configuration, whose values are the
//     result's: its maps, its atomic lists (which the result takes as
//     applied) and the items of its map lists (matched by their keys);
//   - strategic merge patch (which CRDs do not take): the patch applied to
//     the stored object's encoding, by the patch strategies of the Go types,
//     as the patch handler applies it;
//   - /scale: the replicas written at the kind's spec replicas path.
//
// The other way round, a field without omitempty is written as its zero
// value when the client left it out, also one of a type whose own JSON
// form writes its zero value as a value (ownZero). Where the form is the whole object (a
// body, a patch applied to the stored object, an apply creating it), a
// field it lacks is absent, and so is one an apply no longer sets (its
// manager set it before, the stored object held a value): validation sees
// it absent ("Required value"), or with its schema default, which
// DefaultAbsent also puts into the Go object before the prepare hooks, so
// that it is stored as a CRD stores it. A null sent for a nullable field is
// kept, and a spec an apply empties of all it held is null, as server-side
// apply leaves it.
//
// A protobuf body, a write made within the server (a hook's own
// update, a custom subresource's handler), or a body over maxSentBody is
// validated as before, from the Go object's encoding. Over protobuf nothing
// more is lost: go-to-protobuf writes every non-pointer scalar, so a zero and
// an absent field arrive alike.
//
// # A kind whose schema is its CRD manifest's
//
// When a kind's schema was read from the project's CRD manifest
// (builders.Schema.Manifest), the manifest is the kind's contract, and the
// server prunes what it does not declare as kube-apiserver prunes a custom
// resource of that CRD (k8s.io/apiextensions-apiserver's pruning, which
// keeps the root's metadata, follows x-kubernetes-preserve-unknown-fields
// and coerces the metadata of embedded resources), also the fields the Go
// type has (a standard channel served from types that hold experimental
// fields). Where each write is pruned, and why there (prune.go):
//   - every decode of an object, from a request or from storage, through
//     the generated defaulter (applySchemaDefaults): the object is encoded,
//     pruned, defaulted, and decoded into a zeroed object, so that an
//     object stored before is served and written again without the fields;
//   - the JSON and YAML bodies of create, update, /status and JSON and
//     merge patches, before they are decoded into the Go types
//     (PruningSerializer): what is pruned is a strict decoding error
//     `unknown field "spec.x"`, which the handlers turn into a 400 with
//     fieldValidation=Strict, a warning with Warn (the default), nothing
//     with Ignore, as for a custom resource;
//   - a strategic merge patch (which a CRD does not take) is reported by
//     the validation (unknownPatched) from its Record: Strict refuses it
//     as the patch handler refuses a field the Go type lacks, Warn warns;
//   - server-side apply refuses such a field, as kube-apiserver does for the
//     CRD (".spec.x: field not declared in schema"): the published models,
//     which its type converter reads, are the manifest's
//     (pkg/internal/openapi), and where a Go type another kind shares keeps
//     a field published, the validation refuses it from the applied
//     configuration (unknownPatched);
//   - a strategic merge patch too large to keep (over maxSentBody) cannot
//     be checked: under Strict it is refused, saying so;
//   - last, before the object is stored (the strategy's Canonicalize calls
//     Validator.Prune): what a hook set that the storage version's manifest
//     does not declare.
//
// A kind whose schema comes from its markers declares the fields its Go type
// has, and is not pruned. A protobuf or CBOR body is pruned when decoded,
// without a report.
//
// Defaults, of either kind of schema, are applied to the decoded Go
// object's encoding (applySchemaDefaults) on every decode, and on a write
// through the API to what the client's form left out where that encoding
// writes a value (DefaultAbsent): a field without omitempty, also of a
// type whose own JSON form writes its zero value as a value (ownZero: a
// duration's "Never"). A top-level spec or status holding the Go zero value
// that the schema does not require is absent (jsoncontent.Absent): not
// defaulted inside on decode, defaulted inside when the client sent it
// (defaultSent), validated only as sent. Where a Go type's own JSON form
// loses a value sent and writes back something else, the object this
// server stores has lost it too, and every read of it defaults it again.
//
// # The order of a write's steps
//
// One Record per write request carries what each step tells the later
// ones; each of its fields has one writer. The steps, in their order:
//
//  1. RecordWrites, an HTTP filter inside the server's handler chain (so
//     for authorized requests only), creates the Record of each POST, PUT
//     and PATCH with a body to /apis/, with the body's Content-Type
//     (contentType), and puts it into the request's context.
//  2. The handler decodes the body: reading it writes the Record's copy of
//     it (buf, or overflow past maxSentBody).
//  3. On a /scale write, the scale handler's UpdatedObject writes the
//     replicas it sets (Record.Scaled: scale).
//  4. The strategy's PrepareForCreate or PrepareForUpdate, before the kind's
//     own hook, calls DefaultAbsent (DefaultAbsentStatus through /status):
//     it reads the body and the scale, and writes a failed defaulting
//     (defaultErr).
//  5. The strategy's Validate, ValidateUpdate or ValidateStatusUpdate, before
//     the kind's own validation hook, reads the body, the scale and the
//     defaulting's error, which fails the validation.
//
// A store retrying an update (a conflict, or stale data) runs steps 3 to 5
// again, so after a validation any step may come; before it, a step runs
// after those before it: /scale's replicas recorded once defaulting has read
// the Record are an error (Record.Scaled), not a write validated without
// them.
package validation
