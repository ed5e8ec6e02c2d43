// Package adoption serves the adoption API (internal/shared/adoption: group
// adoption.apiserver-boot.io) in every generated apiserver: what
// `apiserver-boot adopt` uses to move a live CRD's objects into the
// project's store with their identity, and to make clients that hold the
// CRD's resourceVersions relist.
//
//   - NewAuthorizer authorizes every request of the API as the verb adopt on
//     the resource it names, by the server's own authorizer: nobody else can
//     write a uid or creationTimestamp (the ordinary create and update paths
//     keep resetting them).
//   - Install serves the API on the server's NonGoRestfulMux, behind the whole
//     handler chain: a resource's State (GET), its schemas by version (GET
//     of <resource>.<group>/schemas: what `adopt` compares with the live
//     CRD's), and a Batch (POST) that
//     validates objects through the real create path (dry run), or stores
//     them with their identity straight into the resource's storage, removes
//     stale copies and seals the resource.
//   - Guard wraps a resource's storage so that a LIST or WATCH at a
//     resourceVersion the store never gave (above its revision, or below the
//     Floor that Seal recorded in the store, see Floors) answers 410 Gone,
//     on which clients relist.
package adoption

import (
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
)

// Resource is one resource of the project, as the adoption API serves it.
type Resource struct {
	// Group, Kind and Plural name it: adopt.example.com, Widget, widgets.
	Group, Kind, Plural string
	// Namespaced: its objects live in a namespace.
	Namespaced bool
	// Versions are the versions that serve it, most preferred first.
	Versions       []string
	StorageVersion string
	// Store is the resource's main store, its storage wrapped by Guard.
	Store *genericregistry.Store
	// Schemas are the schemas by version (builders.Resource's Schemas),
	// which GET of adoption.SchemasPath answers for each of Versions.
	Schemas map[string]Schema
}

// Schema is a resource's schema in one version (builders.Schema's).
type Schema struct {
	// OpenAPIV3 is JSON of an apiextensions/v1 JSONSchemaProps.
	OpenAPIV3 string
	// Manifest is the project-relative path of the CRD manifest it was
	// read from; empty when derived from the types and markers.
	Manifest string
}

func (r *Resource) groupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.Group, Resource: r.Plural}
}

// Config is what the API needs of the server.
type Config struct {
	Resources []*Resource
	Floors    *Floors
	// Codecs decode objects (into the internal version) and encode errors.
	Codecs runtime.NegotiatedSerializer
	// Decoder decodes an object of any served version into its internal
	// version, as the storage decodes it.
	Decoder runtime.Decoder
	// RequestInfo resolves the RequestInfo of the dry-run creates that
	// Validate sends to Create.
	RequestInfo request.RequestInfoResolver
	// Create is the server's handler without its filters, behind which
	// the create of an object is served as a client's is, with the
	// request's Record (validation.RecordWrites).
	Create http.Handler
}

// api is the handler of the adoption API.
type api struct {
	Config
	resources map[schema.GroupResource]*Resource
}

// Install serves the adoption API on server: /apis/adoption.apiserver-boot.io
// and everything under it, on its NonGoRestfulMux, so that requests pass
// the whole handler chain (authentication, authorization by NewAuthorizer,
// audit, priority and fairness).
func Install(server *genericapiserver.GenericAPIServer, c Config) {
	a := &api{Config: c, resources: map[schema.GroupResource]*Resource{}}
	for _, r := range c.Resources {
		a.resources[r.groupResource()] = r
	}
	server.Handler.NonGoRestfulMux.Handle(groupPath, a)
	server.Handler.NonGoRestfulMux.HandlePrefix(groupPath+"/", a)
}

const groupPath = "/apis/" + adoption.Group
