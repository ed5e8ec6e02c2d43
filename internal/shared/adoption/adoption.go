// Package adoption is the wire protocol of the adoption API that every
// generated apiserver serves (group adoption.apiserver-boot.io) and that
// `apiserver-boot adopt` uses to move a live CRD's objects into the
// project's store with their identity: the names, paths and types both sides
// share. The server (pkg/internal/adoption) owns it; the CLI only uses it.
package adoption

import (
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

const (
	// Group is the adoption API's group.
	Group = "adoption.apiserver-boot.io"
	// Version is the adoption API's one version.
	Version = "v1alpha1"
	// Verb is what a user needs on a resource (cluster-wide, in the
	// resource's own group) to read its State and send it a Batch.
	Verb = "adopt"
	// MaxBatch is the most objects one Batch may hold.
	MaxBatch = 500
	// MaxBody is the largest Batch body the server reads, in bytes.
	MaxBody = 64 << 20
)

// Path is where a resource's adoption endpoint is:
// /apis/adoption.apiserver-boot.io/v1alpha1/<resource>.<group>.
func Path(group, resource string) string {
	return "/apis/" + Group + "/" + Version + "/" + resource + "." + group
}

// SchemasPath is where a resource's schemas are read (GET), the State's
// path followed by /schemas. Apiservers built before it answer 404.
func SchemasPath(group, resource string) string {
	return Path(group, resource) + "/" + SchemasSuffix
}

// SchemasSuffix is the last segment of SchemasPath.
const SchemasSuffix = "schemas"

// ParseResource splits "<resource>.<group>" (the first dot-separated label
// is the resource); ok is false when either part is empty.
func ParseResource(s string) (group, resource string, ok bool) {
	resource, group, _ = strings.Cut(s, ".")
	return group, resource, resource != "" && group != ""
}

// State is the answer to GET Path(group, resource).
type State struct {
	// TypeMeta is apiVersion adoption.apiserver-boot.io/v1alpha1, kind State.
	metav1.TypeMeta `json:",inline"`
	Group           string `json:"group"`
	Resource        string `json:"resource"`
	// KindName is the resource's kind, e.g. CronTab.
	KindName       string `json:"kindName"`
	Namespaced     bool   `json:"namespaced"`
	StorageVersion string `json:"storageVersion"`
	// Versions are the served versions, most preferred first.
	Versions []string `json:"versions"`
	// ResourceVersion is the store's current revision.
	ResourceVersion string `json:"resourceVersion"`
	// Floor is the revision below which LIST and WATCH of the resource
	// answer 410 Gone (set by Seal).
	Floor string `json:"floor,omitempty"`
	// Objects are every object of the resource now in the project's store.
	Objects []Key `json:"objects"`
}

// Key names one object of a resource.
type Key struct {
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid,omitempty"`
}

// Batch is the body of POST Path(group, resource).
type Batch struct {
	// TypeMeta is kind Batch.
	metav1.TypeMeta `json:",inline"`
	// Validate dry-run creates each object through the real create path;
	// it stores and removes nothing.
	Validate bool `json:"validate,omitempty"`
	// Objects are whole objects (JSON) in any served version of the group.
	Objects []runtime.RawExtension `json:"objects,omitempty"`
	// Remove are stale copies removed from the store (not with Validate).
	Remove []Key `json:"remove,omitempty"`
	// Seal records, after the batch's writes, Floor = the store's revision
	// now (not with Validate). adopt seals with a batch of its own before it
	// stores the first copy, so that every copy's resourceVersion is at or
	// above the floor while the CRD's older ones are below it.
	Seal bool `json:"seal,omitempty"`
}

// BatchResult answers a Batch: one Result per object, in order.
type BatchResult struct {
	// TypeMeta is kind BatchResult.
	metav1.TypeMeta `json:",inline"`
	Results         []Result `json:"results"`
	// ResourceVersion is the store's revision after the batch.
	ResourceVersion string `json:"resourceVersion"`
	Floor           string `json:"floor,omitempty"`
}

// Result is what became of one object of a Batch.
type Result struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// ResourceVersion is the stored copy's, when stored.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Error is why this object was refused (with causes: field, message).
	Error *metav1.Status `json:"error,omitempty"`
}

// Schemas is the answer to GET SchemasPath(group, resource): the schema the
// project's apiserver validates, defaults and prunes each served version of
// the resource with.
type Schemas struct {
	// TypeMeta is apiVersion adoption.apiserver-boot.io/v1alpha1, kind Schemas.
	metav1.TypeMeta `json:",inline"`
	Group           string `json:"group"`
	Resource        string `json:"resource"`
	// Versions are one per served version, most preferred first.
	Versions []VersionSchema `json:"versions"`
}

// VersionSchema is the schema of one served version.
type VersionSchema struct {
	Version string `json:"version"`
	// OpenAPIV3Schema is the version's schema, JSON of an apiextensions/v1
	// JSONSchemaProps (a CRD's openAPIV3Schema); absent when the project
	// has none for the version.
	OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema,omitempty"`
	// Manifest is the project-relative path of the CRD manifest the schema
	// was read from; empty when it was derived from the types and markers.
	Manifest string `json:"manifest,omitempty"`
}
