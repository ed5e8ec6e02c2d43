package server

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/utils/clock"

	"github.com/apiserver-boot/apiserver-boot/pkg/internal/standalone"
)

// mode is how the server is secured and what it serves besides the
// project's groups: standalone (standalone.Mode) or delegated to a
// kube-apiserver (delegated). The server applies it in four steps, in
// this order: the scheme, the OpenAPI definitions, the configuration
// (after serving and storage), and what is installed on the server made
// from that configuration (after the project's groups).
type mode interface {
	AddToScheme(*runtime.Scheme) error
	Definitions(common.GetOpenAPIDefinitions) common.GetOpenAPIDefinitions
	ApplyTo(*genericapiserver.RecommendedConfig) error
	Install(*genericapiserver.GenericAPIServer, standalone.Served) error
}

// mode is the options' mode: delegated with --delegated-auth or a
// kubeconfig of the kube-apiserver, standalone otherwise.
func (o *Options) mode() mode {
	if o.delegated() {
		return delegated{o}
	}
	return &standalone.Mode{TokenFile: o.TokenFile, WriteKubeconfig: o.WriteKubeconfig, Features: o.Features}
}

// delegated is the mode of an apiserver aggregated behind kube-apiserver,
// which serves the namespaces, authenticates, authorizes and admits.
type delegated struct{ o *Options }

// AddToScheme adds nothing: kube-apiserver serves the namespaces.
func (delegated) AddToScheme(*runtime.Scheme) error { return nil }

// Definitions are the project's.
func (delegated) Definitions(d common.GetOpenAPIDefinitions) common.GetOpenAPIDefinitions { return d }

// Install installs nothing besides the project's groups.
func (delegated) Install(*genericapiserver.GenericAPIServer, standalone.Served) error { return nil }

// ApplyTo configures what an aggregated apiserver takes from the
// kube-apiserver, in the order k8s.io/apiserver's RecommendedOptions does:
// authentication (with frontProxyAuthenticator in front of it),
// authorization, the core API client and its informers, priority and
// fairness, then admission (which needs all of them).
func (d delegated) ApplyTo(c *genericapiserver.RecommendedConfig) error {
	o := d.o
	if err := o.Authentication.ApplyTo(&c.Authentication, c.SecureServing, c.OpenAPIConfig); err != nil {
		return err
	}
	// The front proxy's certificate is verified once, not on every request.
	if rh := c.Authentication.RequestHeaderConfig; rh != nil && rh.CAContentProvider != nil && c.Authentication.Authenticator != nil {
		c.Authentication.Authenticator = newFrontProxyAuthenticator(rh, c.Authentication.Authenticator, clock.RealClock{})
	}
	if err := o.Authorization.ApplyTo(&c.Authorization); err != nil {
		return err
	}
	if err := o.CoreAPI.ApplyTo(c); err != nil {
		return fmt.Errorf("core API client (--kubeconfig): %w", err)
	}
	kubeClient, err := kubernetes.NewForConfig(c.ClientConfig)
	if err != nil {
		return err
	}
	dynamicClient, err := dynamic.NewForConfig(c.ClientConfig)
	if err != nil {
		return err
	}
	if err := o.Features.ApplyTo(&c.Config, kubeClient, c.SharedInformerFactory); err != nil {
		return err
	}
	return o.Admission.ApplyTo(&c.Config, c.SharedInformerFactory, kubeClient, dynamicClient, c.FeatureGate, c.EffectiveVersion)
}
