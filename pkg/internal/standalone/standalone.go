// Package standalone is the server's standalone mode, for `apiserver-boot
// run local` and tests: no kube-apiserver to delegate to. Clients present
// the bearer token of --token-file (written at the first start), which
// authenticates a cluster administrator; anyone may reach the health
// endpoints. The server serves core v1 namespaces itself, with
// NamespaceLifecycle admission and their finalization, and writes a
// kubeconfig for kubectl once it serves (--write-kubeconfig). Mode is
// applied to the server's configuration as the delegated mode is, one step
// of each in the server's order: the scheme, the OpenAPI definitions, the
// configuration, and what is installed on the server made from it.
package standalone

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/kube-openapi/pkg/common"
)

// Mode is standalone serving, made from the server's options.
type Mode struct {
	// TokenFile is --token-file: the bearer token clients must present.
	TokenFile string
	// WriteKubeconfig is --write-kubeconfig: where the kubeconfig for
	// this server is written once it serves; empty writes none.
	WriteKubeconfig string
	// Features are the server's feature options, applied without priority
	// and fairness (no kube-apiserver, so no FlowSchemas: the max-in-flight
	// limits apply).
	Features *genericoptions.FeatureOptions

	token     string
	informers *loopbackInformers
}

// Served is what the server made of its configuration, which Install needs.
type Served struct {
	// Name names the server in the kubeconfig it writes.
	Name   string
	Scheme *runtime.Scheme
	Codecs serializer.CodecFactory
	// RESTOptions is the configuration's storage of resources.
	RESTOptions generic.RESTOptionsGetter
	// Namespaced are the stores of the project's namespaced resources: what
	// a namespace holds.
	Namespaced []*genericregistry.Store
	// Host is the server's host:port, CertFile its serving certificate
	// chain, whose CA the kubeconfig trusts.
	Host, CertFile string
}

// AddToScheme registers the core v1 namespaces in scheme (kube-apiserver
// serves them in delegated mode).
func (m *Mode) AddToScheme(scheme *runtime.Scheme) error {
	return addNamespacesToScheme(scheme)
}

// Definitions adds the namespace types to the OpenAPI definitions.
func (m *Mode) Definitions(definitions common.GetOpenAPIDefinitions) common.GetOpenAPIDefinitions {
	return withNamespaceDefinitions(definitions)
}

// Token reads the bearer token of TokenFile, writing a random one there
// (0600, in a 0700 folder) first when the file does not exist; a token
// file group or others may read is refused.
func (m *Mode) Token() (string, error) {
	return loadOrCreateToken(m.TokenFile)
}

// ApplyTo authenticates the bearer token of TokenFile (made if missing),
// authorizes it for everything, applies the features without priority and
// fairness, and admits namespaced objects against the namespaces this
// server serves (a client and informers of the server itself, through its
// loopback).
func (m *Mode) ApplyTo(c *genericapiserver.RecommendedConfig) error {
	token, err := m.Token()
	if err != nil {
		return err
	}
	m.token = token
	c.Authentication.Authenticator = newAuthenticator(token)
	c.Authorization.Authorizer = newAuthorizer()
	features := *m.Features
	features.EnablePriorityAndFairness = false
	if err := features.ApplyTo(&c.Config, nil, nil); err != nil {
		return err
	}
	m.informers, err = namespaceAdmission(c)
	return err
}

// Install serves namespaces on server (the system namespaces created at
// start, terminating ones finalized) and, with WriteKubeconfig, writes the
// kubeconfig once the server serves. ApplyTo must have configured the
// server first.
func (m *Mode) Install(server *genericapiserver.GenericAPIServer, s Served) error {
	if m.informers == nil {
		return fmt.Errorf("standalone: Install before ApplyTo")
	}
	if err := installNamespaces(server, s.Scheme, s.Codecs, s.RESTOptions, m.informers, s.Namespaced); err != nil {
		return err
	}
	m.informers.hangUpOnStop(server)
	if m.WriteKubeconfig != "" {
		server.AddPostStartHookOrDie("write-kubeconfig", func(genericapiserver.PostStartHookContext) error {
			ca, err := caFromChain(s.CertFile)
			if err != nil {
				return err
			}
			return writeKubeconfig(m.WriteKubeconfig, "https://"+s.Host, ca, m.token, s.Name)
		})
	}
	return nil
}
