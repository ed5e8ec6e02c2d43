package controllers

import (
	"context"
	"fmt"
	"net"
	"net/http"

	"github.com/spf13/pflag"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes/scheme"
	netutils "k8s.io/utils/net"
)

// secureServingOptions serve /healthz, /readyz and /metrics over TLS, as
// kube-controller-manager's secure port does: clients are authenticated
// and authorized by kube-apiserver (TokenReview, SubjectAccessReview);
// the health endpoints are open to all, /metrics needs the right to get
// that path (the metrics-reader ClusterRole build config writes). Off
// unless --secure-port is given.
type secureServingOptions struct {
	Serving        *apiserveroptions.SecureServingOptions
	Authentication *apiserveroptions.DelegatingAuthenticationOptions
	Authorization  *apiserveroptions.DelegatingAuthorizationOptions
}

// healthPaths are answered without authentication or authorization.
var healthPaths = []string{"/healthz", "/readyz", "/livez"}

// newSecureServingOptions returns the options with the secure port off.
func newSecureServingOptions() *secureServingOptions {
	s := apiserveroptions.NewSecureServingOptions()
	s.BindPort = 0
	s.BindAddress = netutils.ParseIPSloppy("0.0.0.0")
	s.ServerCert.PairName = "controller-manager"
	authn := apiserveroptions.NewDelegatingAuthenticationOptions()
	authn.RemoteKubeConfigFileOptional = true
	authz := apiserveroptions.NewDelegatingAuthorizationOptions().WithAlwaysAllowPaths(healthPaths...)
	authz.RemoteKubeConfigFileOptional = true
	return &secureServingOptions{Serving: s, Authentication: authn, Authorization: authz}
}

// AddFlags registers the options; the secure bind address is
// --secure-bind-address (--bind-address is the loopback plain port's).
func (o *secureServingOptions) AddFlags(fs *pflag.FlagSet) {
	serving := pflag.NewFlagSet("secure", pflag.ContinueOnError)
	o.Serving.AddFlags(serving)
	serving.VisitAll(func(f *pflag.Flag) {
		switch f.Name {
		case "bind-address":
			f.Name = "secure-bind-address"
			f.Usage = "Address the --secure-port listens on (0.0.0.0 for all interfaces)."
		case "secure-port":
			f.Usage = "Port serving /healthz, /readyz and /metrics over TLS, with delegated authentication and authorization; 0 (the default) turns it off."
		}
		fs.AddFlag(f)
	})
	o.Authentication.AddFlags(fs)
	o.Authorization.AddFlags(fs)
}

// enabled tells whether the secure port is on.
func (o *secureServingOptions) enabled() bool { return o.Serving.BindPort > 0 }

// serve starts the secure port until ctx is done.
func (o *secureServingOptions) serve(ctx context.Context, endpoints http.Handler) error {
	if err := o.Serving.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return fmt.Errorf("--secure-port: self-signed certificate in --cert-dir: %w", err)
	}
	var serving *genericapiserver.SecureServingInfo
	if err := o.Serving.ApplyTo(&serving); err != nil {
		return fmt.Errorf("--secure-port: %w", err)
	}
	var authn genericapiserver.AuthenticationInfo
	if err := o.Authentication.ApplyTo(&authn, serving, nil); err != nil {
		return fmt.Errorf("delegated authentication: %w", err)
	}
	var authz genericapiserver.AuthorizationInfo
	if err := o.Authorization.ApplyTo(&authz); err != nil {
		return fmt.Errorf("delegated authorization: %w", err)
	}
	_, _, err := serving.Serve(secureHandler(endpoints, authn, authz), 0, ctx.Done())
	return err
}

// secureHandler is kube-controller-manager's handler chain
// (k8s.io/controller-manager/app.BuildHandlerChain): authentication, then
// authorization of every request, before the endpoints.
func secureHandler(endpoints http.Handler, authn genericapiserver.AuthenticationInfo, authz genericapiserver.AuthorizationInfo) http.Handler {
	resolver := &apirequest.RequestInfoFactory{}
	handler := genericapifilters.WithAuthorization(endpoints, authz.Authorizer, scheme.Codecs)
	handler = genericapifilters.WithAuthentication(handler, authn.Authenticator, genericapifilters.Unauthorized(scheme.Codecs), nil, nil)
	handler = genericapifilters.WithRequestInfo(handler, resolver)
	handler = genericapifilters.WithCacheControl(handler)
	return genericfilters.WithPanicRecovery(handler, resolver)
}
