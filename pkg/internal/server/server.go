// Package server is the extension apiserver of a generated project, behind
// pkg/apiserver's Main: k8s.io/apiserver's generic server serving the
// project's groups, storing in a backend of pkg/internal/storage (etcd,
// embedded unless --etcd-servers is given, or SQL through kine with
// --datastore-endpoint), and secured in one of two modes (mode.go):
// standalone (pkg/internal/standalone: self-signed TLS and a bearer token,
// for `apiserver-boot run local`) or delegated to a kube-apiserver when
// aggregated. As in k8s.io/sample-apiserver, the options go from flags to a
// server in steps: NewOptions, AddFlags, Complete, Validate, then Run
// (Options.Config, Config.New and the server's run, after the storage
// backend is opened).
package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
	baseversion "k8s.io/component-base/version"
	openapicommon "k8s.io/kube-openapi/pkg/common"
	netutils "k8s.io/utils/net"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/private"
	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/adoption"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/apigroup"
	schemaopenapi "github.com/apiserver-boot/apiserver-boot/pkg/internal/openapi"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/standalone"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/storage"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/validation"
)

// Project is what the server serves: the fields of apiserver.Config,
// which converts to it (apiserver.Main), so the compiler keeps both the
// same.
type Project struct {
	// Name names the server in logs, OpenAPI and the kubeconfig it writes.
	Name string
	// Groups are the API groups to serve (generated: apis.Groups()).
	Groups []*builders.APIGroup
	// OpenAPIDefinitions are the generated OpenAPI definitions.
	OpenAPIDefinitions openapicommon.GetOpenAPIDefinitions
}

// NewScheme registers every group in a new scheme, with the meta types every server needs.
func NewScheme(groups []*builders.APIGroup) (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	scheme.AddUnversionedTypes(unversioned, &metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	for _, g := range groups {
		if err := g.AddToScheme(scheme); err != nil {
			return nil, fmt.Errorf("registering %s: %w", g.Name, err)
		}
		if err := scheme.SetVersionPriority(apigroup.Versions(g)...); err != nil {
			return nil, err
		}
		for _, r := range g.Resources {
			if r.Scale != nil {
				addScaleToScheme(scheme)
			}
		}
	}
	return scheme, nil
}

// selfSignedCerts makes, without --tls-cert-file, a self-signed serving
// certificate in --cert-dir (0700), and refuses its key when group or
// others may read it.
func (o *Options) selfSignedCerts() error {
	if o.SecureServing.ServerCert.CertKey.CertFile != "" {
		return nil // the user's certificate (in cluster, a mounted Secret)
	}
	if dir := o.SecureServing.ServerCert.CertDirectory; dir != "" {
		if err := private.Dir(dir); err != nil {
			return fmt.Errorf("--cert-dir: %w", err)
		}
	}
	if err := o.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return fmt.Errorf("creating self-signed certificates in --cert-dir: %w", err)
	}
	return private.Check("--cert-dir", o.SecureServing.ServerCert.CertKey.KeyFile)
}

// Run serves until ctx is done, with options validated (newCommand
// completes and validates them): the embedded etcd when no --etcd-servers is
// given, then the server's configuration, the server, and its run.
func Run(ctx context.Context, p Project, o *Options) error {
	o.Complete() // again, for callers that did not: it changes nothing the second time
	stopEtcd, err := o.startStorage(ctx)
	if err != nil {
		return err
	}
	defer stopEtcd()
	c, err := o.Config(p)
	if err != nil {
		return err
	}
	server, err := c.New()
	if err != nil {
		return err
	}
	return server.PrepareRun().RunWithContext(ctx)
}

// Config is everything the server is made of: k8s.io/apiserver's
// configuration, the scheme of the project's groups, and the mode
// (standalone or delegated) applied to them. Options.Config makes it, New
// makes the server.
type Config struct {
	cfg            Project
	generic        *genericapiserver.RecommendedConfig
	scheme         *runtime.Scheme
	codecs         serializer.CodecFactory
	mode           mode
	host, certFile string
	// etcd and etcdPrefix are the storage backend's, where the adoption
	// API keeps its floors.
	etcd       storage.Etcd
	etcdPrefix string
}

// startStorage opens the storage backend of the options (storage.Open:
// kine with --datastore-endpoint, else the embedded etcd unless
// --etcd-servers is given) and points the storage at it; the returned
// function stops it.
func (o *Options) startStorage(ctx context.Context) (stop func(), err error) {
	t := &o.Etcd.StorageConfig.Transport
	// The embedded etcd's certificates go beside the serving ones.
	certDir := o.SecureServing.ServerCert.CertDirectory
	if certDir == "" {
		certDir = o.EmbeddedEtcd.DataDir + "-certs"
	}
	etcd, stop, err := storage.Open(ctx, storage.Backend{
		SQL:             &o.SQL,
		Etcd:            storage.Etcd{Servers: t.ServerList, CAFile: t.TrustedCAFile, CertFile: t.CertFile, KeyFile: t.KeyFile},
		Embedded:        &o.EmbeddedEtcd,
		EmbeddedCertDir: certDir,
	})
	if err != nil {
		return nil, err
	}
	t.ServerList, t.CertFile, t.KeyFile, t.TrustedCAFile = etcd.Servers, etcd.CertFile, etcd.KeyFile, etcd.CAFile
	return stop, nil
}

// Config builds the server's configuration from the options: scheme and
// storage, OpenAPI, serving, then authentication and admission of the mode.
func (o *Options) Config(p Project) (*Config, error) {
	c := &Config{cfg: p, mode: o.mode()}
	if err := c.newScheme(); err != nil {
		return nil, err
	}
	c.generic = genericapiserver.NewRecommendedConfig(c.codecs)
	c.generic.EffectiveVersion = kubeShapedVersion{basecompatibility.NewEffectiveVersionFromString(baseversion.DefaultKubeBinaryVersion, "", "")}
	c.generic.FeatureGate = utilfeature.DefaultFeatureGate
	c.applyOpenAPI()
	if err := o.applyServing(c); err != nil {
		return nil, err
	}
	if err := o.applyStorage(c); err != nil {
		return nil, err
	}
	t := o.Etcd.StorageConfig.Transport
	c.etcd = storage.Etcd{Servers: t.ServerList, CAFile: t.TrustedCAFile, CertFile: t.CertFile, KeyFile: t.KeyFile}
	c.etcdPrefix = o.Etcd.StorageConfig.Prefix
	if err := c.mode.ApplyTo(c.generic); err != nil {
		return nil, err
	}
	// Writes keep their body for the schema validation (validation.Record);
	// inside every filter, so only for authorized requests.
	c.generic.BuildHandlerChainFunc = func(h http.Handler, gc *genericapiserver.Config) http.Handler {
		return genericapiserver.DefaultBuildHandlerChain(validation.RecordWrites(h), gc)
	}
	c.generic.ShutdownDelayDuration = o.ShutdownDelay
	c.generic.ShutdownSendRetryAfter = o.ShutdownSendRetryAfter
	if err := o.Audit.ApplyTo(&c.generic.Config); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return c, nil
}

// newScheme registers the project's groups, and what the mode serves.
func (c *Config) newScheme() error {
	scheme, err := NewScheme(c.cfg.Groups)
	if err != nil {
		return err
	}
	if err := c.mode.AddToScheme(scheme); err != nil {
		return err
	}
	c.scheme, c.codecs = scheme, serializer.NewCodecFactory(scheme)
	return nil
}

// applyOpenAPI publishes the generated definitions with the schemas the
// server enforces (what the schemas enforce is what the OpenAPI publishes).
func (c *Config) applyOpenAPI() {
	namer := openapi.NewDefinitionNamer(c.scheme)
	definitions := schemaopenapi.WithSchemas(c.cfg.OpenAPIDefinitions, c.cfg.Groups)
	definitions = c.mode.Definitions(definitions)
	c.generic.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(definitions, namer)
	c.generic.OpenAPIConfig.Info.Title = c.cfg.Name
	c.generic.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(definitions, namer)
	c.generic.OpenAPIV3Config.Info.Title = c.cfg.Name
}

// applyServing sets up TLS serving, with a self-signed certificate unless
// one is given.
func (o *Options) applyServing(c *Config) error {
	if err := o.selfSignedCerts(); err != nil {
		return err
	}
	// SecureServingOptionsWithLoopback.ApplyTo's steps, its loopback
	// certificate with a faster key (applyLoopback).
	if err := o.SecureServing.SecureServingOptions.ApplyTo(&c.generic.SecureServing); err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("port %d is taken: choose another with --secure-port: %w", o.SecureServing.BindPort, err)
		}
		return err
	}
	if err := applyLoopback(c.generic.SecureServing, &c.generic.LoopbackClientConfig); err != nil {
		return err
	}
	c.host = net.JoinHostPort(o.SecureServing.BindAddress.String(), strconv.Itoa(o.SecureServing.BindPort))
	c.certFile = o.SecureServing.ServerCert.CertKey.CertFile
	return nil
}

// applyStorage stores each resource in its own storage version (newStorage's
// options); the default codec serves what is not a resource's.
func (o *Options) applyStorage(c *Config) error {
	var storageVersions []schema.GroupVersion
	for _, g := range c.cfg.Groups {
		storageVersions = append(storageVersions, schema.GroupVersion{Group: g.Name, Version: g.StorageVersion})
	}
	o.Etcd.StorageConfig.Codec = storage.Codec(c.codecs, schema.GroupVersions(storageVersions))
	if errs := o.Etcd.Validate(); len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	return o.Etcd.ApplyTo(&c.generic.Config)
}

// New makes the server, once per Config: k8s.io/apiserver's generic
// server with the project's groups installed, what the mode installs, and
// the adoption API (pkg/internal/adoption), whose authorizer wraps the
// mode's.
func (c *Config) New() (*genericapiserver.GenericAPIServer, error) {
	c.generic.Authorization.Authorizer = adoption.NewAuthorizer(c.generic.Authorization.Authorizer, c.served())
	server, err := c.generic.Complete().New(c.cfg.Name, genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	client, err := storage.NewClient(c.etcd)
	if err != nil {
		return nil, fmt.Errorf("the adoption API's client of the storage backend: %w", err)
	}
	server.RegisterDestroyFunc(func() { client.Close() })
	floors := adoption.NewFloors(client, c.etcdPrefix)
	namespaced, adopted, err := c.installGroups(server, floors)
	if err != nil {
		return nil, err
	}
	err = c.mode.Install(server, standalone.Served{
		Name: c.cfg.Name, Scheme: c.scheme, Codecs: c.codecs, RESTOptions: c.generic.RESTOptionsGetter,
		Namespaced: namespaced, Host: c.host, CertFile: c.certFile,
	})
	if err != nil {
		return nil, err
	}
	adoption.Install(server, adoption.Config{
		Resources: adopted, Floors: floors, Codecs: c.codecs, Decoder: c.codecs.UniversalDecoder(),
		RequestInfo: c.generic.RequestInfoResolver, Create: validation.RecordWrites(server.UnprotectedHandler()),
	})
	return server, nil
}

// served are the project's resources.
func (c *Config) served() map[schema.GroupResource]bool {
	served := map[schema.GroupResource]bool{}
	for _, g := range c.cfg.Groups {
		for _, r := range g.Resources {
			served[schema.GroupResource{Group: g.Name, Resource: r.Plural}] = true
		}
	}
	return served
}

// absentForms are how the versioned Go types of g's kinds write their spec
// and status.
func (c *Config) absentForms(g *builders.APIGroup) *absentForms {
	forms := &absentForms{}
	for _, r := range g.Resources {
		for _, v := range r.Versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v}
			obj, err := c.scheme.New(gv.WithKind(r.Kind))
			if err != nil {
				continue
			}
			list, _ := c.scheme.New(gv.WithKind(r.Kind + "List"))
			forms.add(obj, list)
		}
	}
	return forms
}

// installGroups installs every group's resources, each version served by
// the storage of the resource's storage version guarded by floors
// (adoption.Guard), and returns the stores of namespaced resources (what a
// namespace holds) and every resource as the adoption API serves it.
func (c *Config) installGroups(server *genericapiserver.GenericAPIServer, floors *adoption.Floors) (namespaced []*genericregistry.Store, adopted []*adoption.Resource, err error) {
	for _, g := range c.cfg.Groups {
		info := genericapiserver.NewDefaultAPIGroupInfo(g.Name, c.scheme, metav1.ParameterCodec, c.codecs)
		// Request bodies of the kinds whose schema is a CRD manifest's are
		// pruned by it before they are decoded into the Go types, and what
		// is pruned is reported per fieldValidation, as kube-apiserver does
		// for a custom resource (validation.PruningSerializer).
		info.NegotiatedSerializer = validation.PruningSerializer(info.NegotiatedSerializer)
		// A zero spec or status is left out of JSON and YAML answers, as a
		// custom resource has none unless one was sent (absent.go).
		info.NegotiatedSerializer = withoutAbsent(info.NegotiatedSerializer, c.absentForms(g))
		for _, r := range g.Resources {
			gv := apigroup.StorageVersion(g, r)
			opts := storage.VersionOptions{RESTOptionsGetter: c.generic.RESTOptionsGetter, Codec: storage.Codec(c.codecs, gv), GroupVersion: gv}
			storage, err := newStorage(r, g.Name, c.scheme, opts, floors)
			if err != nil {
				return nil, nil, err
			}
			store := storage[r.Plural].(*resourceREST).Store
			if r.Namespaced {
				namespaced = append(namespaced, store)
			}
			adopted = append(adopted, &adoption.Resource{Group: g.Name, Kind: r.Kind, Plural: r.Plural, Namespaced: r.Namespaced,
				Versions: r.Versions, StorageVersion: gv.Version, Store: store, Schemas: adoptionSchemas(r.Schemas)})
			for _, v := range r.Versions {
				if info.VersionedResourcesStorageMap[v] == nil {
					info.VersionedResourcesStorageMap[v] = map[string]rest.Storage{}
				}
				maps.Copy(info.VersionedResourcesStorageMap[v], storage)
			}
		}
		if err := server.InstallAPIGroup(&info); err != nil {
			return nil, nil, fmt.Errorf("installing %s: %w", g.Name, err)
		}
	}
	return namespaced, adopted, nil
}

// adoptionSchemas are a resource's schemas as the adoption API answers them.
func adoptionSchemas(schemas map[string]builders.Schema) map[string]adoption.Schema {
	out := map[string]adoption.Schema{}
	for v, s := range schemas {
		out[v] = adoption.Schema{OpenAPIV3: s.OpenAPIV3, Manifest: s.Manifest}
	}
	return out
}

// kubeShapedVersion reports the Kubernetes library version the server is
// built on when the binary carries no stamped version (a plain `go build`),
// so that clients such as `kubectl version` can parse /version.
type kubeShapedVersion struct {
	basecompatibility.EffectiveVersion
}

func (v kubeShapedVersion) Info() *apimachineryversion.Info {
	info := v.EffectiveVersion.Info()
	if info != nil && strings.HasPrefix(info.GitVersion, "v0.0.0-master") {
		info.GitVersion = fmt.Sprintf("v%d.%d.0", v.BinaryVersion().Major(), v.BinaryVersion().Minor())
		info.GitCommit, info.GitTreeState = "", ""
	}
	return info
}
