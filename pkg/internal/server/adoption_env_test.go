package server

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	authnunion "k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
)

// The group the adoption tests serve: adopt.example.com in v1 and v2,
// stored in v2, with Widget (ConfigMap's Go type; namespaced; a validation
// hook and a schema) and Gadget (ReplicationController's; cluster-scoped,
// with a status subresource).
const adoptGroupName = "adopt.example.com"

var (
	adoptWidgets = schema.GroupVersionResource{Group: adoptGroupName, Version: "v1", Resource: "widgets"}
	adoptGadgets = schema.GroupVersionResource{Group: adoptGroupName, Version: "v1", Resource: "gadgets"}
)

// adoptWidgetSchema: every value of data is at most 8 characters.
const adoptWidgetSchema = `{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "data":{"type":"object","additionalProperties":{"type":"string","maxLength":8}}}}`

// adoptWidgetHooks refuses a widget whose data.size is huge.
type adoptWidgetHooks struct{ builders.DefaultStrategy }

func (*adoptWidgetHooks) Validate(_ context.Context, obj *corev1.ConfigMap) field.ErrorList {
	if obj.Data["size"] == "huge" {
		return field.ErrorList{field.Invalid(field.NewPath("data", "size"), "huge", "a widget may not be huge")}
	}
	return nil
}

func adoptGroup() *builders.APIGroup {
	versions := []string{"v2", "v1"}
	widgetSchemas := map[string]builders.Schema{"v1": {OpenAPIV3: adoptWidgetSchema}, "v2": {OpenAPIV3: adoptWidgetSchema}}
	return &builders.APIGroup{
		Name: adoptGroupName, Versions: versions, StorageVersion: "v2",
		AddToScheme: func(s *runtime.Scheme) error {
			for _, v := range []string{"v1", "v2", runtime.APIVersionInternal} {
				gv := schema.GroupVersion{Group: adoptGroupName, Version: v}
				s.AddKnownTypeWithName(gv.WithKind("Widget"), &corev1.ConfigMap{})
				s.AddKnownTypeWithName(gv.WithKind("WidgetList"), &corev1.ConfigMapList{})
				s.AddKnownTypeWithName(gv.WithKind("Gadget"), &corev1.ReplicationController{})
				s.AddKnownTypeWithName(gv.WithKind("GadgetList"), &corev1.ReplicationControllerList{})
				if v != runtime.APIVersionInternal {
					metav1.AddToGroupVersion(s, gv)
				}
			}
			return nil
		},
		Resources: []*builders.Resource{
			builders.NewResource[*corev1.ConfigMap](builders.Resource{
				Kind: "Widget", Plural: "widgets", Singular: "widget", Namespaced: true, Versions: versions, StorageVersion: "v2",
				Schemas: widgetSchemas,
				New:     func() runtime.Object { return &corev1.ConfigMap{} },
				NewList: func() runtime.Object { return &corev1.ConfigMapList{} },
			}, &adoptWidgetHooks{}),
			builders.NewResource[*corev1.ReplicationController](builders.Resource{
				Kind: "Gadget", Plural: "gadgets", Singular: "gadget", Versions: versions, StorageVersion: "v2", StatusSubresource: true,
				New:     func() runtime.Object { return &corev1.ReplicationController{} },
				NewList: func() runtime.Object { return &corev1.ReplicationControllerList{} },
			}, nil),
		},
	}
}

// adoptDefinitions are widgetDefinitions and Gadget's, whose spec and
// status keep any field.
func adoptDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := widgetDefinitions(ref)
	str := spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}}}
	free := spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}}, VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-preserve-unknown-fields": true}}}
	defs[corev1.ReplicationController{}.OpenAPIModelName()] = common.OpenAPIDefinition{Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
		"apiVersion": str, "kind": str,
		"metadata": {SchemaProps: spec.SchemaProps{Default: map[string]any{}, Ref: ref(metav1.ObjectMeta{}.OpenAPIModelName())}},
		"spec":     free, "status": free,
	}}}, Dependencies: []string{metav1.ObjectMeta{}.OpenAPIModelName()}}
	defs[corev1.ReplicationControllerList{}.OpenAPIModelName()] = common.OpenAPIDefinition{Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
		"apiVersion": str, "kind": str,
		"metadata": {SchemaProps: spec.SchemaProps{Default: map[string]any{}, Ref: ref(metav1.ListMeta{}.OpenAPIModelName())}},
		"items":    {SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: ref(corev1.ReplicationController{}.OpenAPIModelName())}}}}},
	}}}, Dependencies: []string{metav1.ListMeta{}.OpenAPIModelName(), corev1.ReplicationController{}.OpenAPIModelName()}}
	return defs
}

// adoptEnv is a standalone server of adoptGroup with two more users
// besides the administrator: alice may do everything but the verb adopt,
// bob only adopt.
type adoptEnv struct {
	admin, alice, bob *rest.Config
	o                 *Options
}

var adoptTestUsers = map[string]user.Info{
	"alice-token": &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}},
	"bob-token":   &user.DefaultInfo{Name: "bob", Groups: []string{user.AllAuthenticated}},
}

// adoptTestAuthorizer allows alice everything but adopt, and bob adopt only;
// inner (the standalone authorizer) decides the rest.
func adoptTestAuthorizer(inner authorizer.Authorizer) authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		switch {
		case a.GetUser() == nil:
		case a.GetUser().GetName() == "alice" && a.GetVerb() != adoption.Verb:
			return authorizer.DecisionAllow, "", nil
		case a.GetUser().GetName() == "bob" && a.GetVerb() == adoption.Verb:
			return authorizer.DecisionAllow, "", nil
		}
		return inner.Authorize(ctx, a)
	})
}

// startAdoption starts the server, with tune changing its options (the
// watch cache, the backend), and stops it when the test ends.
func startAdoption(t *testing.T, tune func(o *Options, dir string)) *adoptEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("starts an apiserver")
	}
	dir := t.TempDir()
	o := standaloneOptions(t, dir)
	if tune != nil {
		tune(o, dir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopStorage, err := o.startStorage(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("the server did not stop within a minute")
		}
		stopStorage()
	})
	c, err := o.Config(Project{Name: "adopt", Groups: []*builders.APIGroup{adoptGroup()}, OpenAPIDefinitions: adoptDefinitions})
	if err != nil {
		close(done)
		t.Fatal(err)
	}
	tokens := bearertoken.New(authenticator.TokenFunc(func(_ context.Context, token string) (*authenticator.Response, bool, error) {
		u, ok := adoptTestUsers[token]
		return &authenticator.Response{User: u}, ok, nil
	}))
	c.generic.Authentication.Authenticator = authnunion.New(tokens, c.generic.Authentication.Authenticator)
	c.generic.Authorization.Authorizer = adoptTestAuthorizer(c.generic.Authorization.Authorizer)
	server, err := c.New()
	if err != nil {
		close(done)
		t.Fatal(err)
	}
	var runErr error
	go func() {
		defer close(done)
		runErr = server.PrepareRun().RunWithContext(ctx)
	}()
	cfg := waitServing(t, o.WriteKubeconfig, done, func() error { return runErr })
	return &adoptEnv{admin: cfg, alice: withToken(cfg, "alice-token"), bob: withToken(cfg, "bob-token"), o: o}
}

func withToken(cfg *rest.Config, token string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.BearerToken, c.BearerTokenFile = token, ""
	return c
}

// raw is a client of cfg for the adoption API's paths.
func raw(t *testing.T, cfg *rest.Config) *rest.RESTClient {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	client, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func dynamicFor(t *testing.T, cfg *rest.Config) *dynamic.DynamicClient {
	t.Helper()
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
