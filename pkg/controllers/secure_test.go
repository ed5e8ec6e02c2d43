package controllers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/path"
	genericapiserver "k8s.io/apiserver/pkg/server"
)

// TestSecureHandler: behind the secure port, /metrics needs an
// authenticated user allowed to get it; health endpoints need nothing.
func TestSecureHandler(t *testing.T) {
	authn := authenticator.RequestFunc(func(r *http.Request) (*authenticator.Response, bool, error) {
		switch r.Header.Get("Authorization") {
		case "Bearer reader":
			return &authenticator.Response{User: &user.DefaultInfo{Name: "reader"}}, true, nil
		case "Bearer nobody":
			return &authenticator.Response{User: &user.DefaultInfo{Name: "nobody"}}, true, nil
		case "":
			// Delegated authentication lets anonymous requests through, as
			// system:anonymous, for authorization to decide.
			return &authenticator.Response{User: &user.DefaultInfo{Name: user.Anonymous}}, true, nil
		}
		return nil, false, nil
	})
	health, err := path.NewAuthorizer(newSecureServingOptions().Authorization.AlwaysAllowPaths)
	if err != nil {
		t.Fatal(err)
	}
	metricsReader := authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetUser().GetName() == "reader" && a.GetPath() == "/metrics" && a.GetVerb() == "get" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
	var ready atomic.Bool
	ready.Store(true)
	h := secureHandler(endpoints(&ready), genericapiserver.AuthenticationInfo{Authenticator: authn},
		genericapiserver.AuthorizationInfo{Authorizer: authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
			if d, _, _ := health.Authorize(ctx, a); d == authorizer.DecisionAllow {
				return d, "", nil
			}
			return metricsReader.Authorize(ctx, a)
		})})
	for _, tc := range []struct {
		path, token string
		want        int
	}{
		{"/metrics", "", http.StatusForbidden},
		{"/metrics", "wrong", http.StatusUnauthorized},
		{"/metrics", "nobody", http.StatusForbidden},
		{"/metrics", "reader", http.StatusOK},
		{"/healthz", "", http.StatusOK},
		{"/readyz", "", http.StatusOK},
	} {
		req := httptest.NewRequest("GET", tc.path, nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("GET %s as %q: %d, want %d", tc.path, tc.token, rec.Code, tc.want)
		}
	}
}

// TestEndpointsOnLoopbackByDefault: without flags, health and metrics are
// served on loopback only, and the secure port is off (it needs a
// kube-apiserver to authenticate and authorize through).
func TestEndpointsOnLoopbackByDefault(t *testing.T) {
	f := newManagerCommand("crontab", nil, nil).Flags()
	if got := f.Lookup("bind-address").DefValue; got != "127.0.0.1:8080" {
		t.Errorf("--bind-address defaults to %q, want 127.0.0.1:8080", got)
	}
	if got := f.Lookup("secure-port").DefValue; got != "0" {
		t.Errorf("--secure-port defaults to %q, want 0 (off)", got)
	}
	for _, name := range []string{"secure-bind-address", "authentication-kubeconfig", "authorization-kubeconfig", "tls-cert-file"} {
		if f.Lookup(name) == nil {
			t.Errorf("no --%s", name)
		}
	}
}
