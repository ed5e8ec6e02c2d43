package adoption

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericfilters "k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
)

// TestSchemasEndpoint: GET <plural>.<group>/schemas, behind the same
// authorization as the rest of the adoption API (verb adopt on the
// resource, asked by NewAuthorizer), answers each served version's schema
// and manifest (none for a version without a schema); a user without adopt is refused naming the verb; another
// method, another sub-path or a resource the project lacks are refused.
func TestSchemasEndpoint(t *testing.T) {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	codecs := serializer.NewCodecFactory(scheme)
	v1 := `{"type":"object","properties":{"spec":{"type":"object","properties":{"image":{"type":"string","format":"ipv4"}}}}}`
	r := &Resource{Group: "stable.example.com", Kind: "CronTab", Plural: "crontabs", Namespaced: true, Versions: []string{"v1", "v2", "v3"}, StorageVersion: "v1",
		Schemas: map[string]Schema{
			"v1": {OpenAPIV3: v1, Manifest: "config/crd/bases/stable.example.com_crontabs.yaml"},
			"v2": {OpenAPIV3: `{"type":"object"}`},
		}}
	a := &api{Config: Config{Resources: []*Resource{r}, Codecs: codecs}, resources: map[schema.GroupResource]*Resource{r.groupResource(): r}}

	var asked []authorizer.Attributes
	inner := authorizer.AuthorizerFunc(func(_ context.Context, at authorizer.Attributes) (authorizer.Decision, string, error) {
		asked = append(asked, at)
		if at.GetUser().GetName() == "admin" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "no RBAC rule", nil
	})
	authz := NewAuthorizer(inner, map[schema.GroupResource]bool{r.groupResource(): true})
	var h http.Handler = genericfilters.WithAuthorization(a, authz, codecs)
	h = genericfilters.WithRequestInfo(h, &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")})
	serve := func(who, method, path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		req = req.WithContext(request.WithUser(req.Context(), &user.DefaultInfo{Name: who}))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}

	path := adoption.SchemasPath("stable.example.com", "crontabs")
	w := serve("admin", http.MethodGet, path)
	if w.Code != http.StatusOK {
		t.Fatalf("admin: %d %s, want 200", w.Code, w.Body)
	}
	var got adoption.Schemas
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, got.Versions[0].OpenAPIV3Schema); err != nil {
		t.Fatal(err)
	}
	if got.Kind != "Schemas" || got.Group != "stable.example.com" || got.Resource != "crontabs" || len(got.Versions) != 3 ||
		got.Versions[0].Version != "v1" || got.Versions[0].Manifest != "config/crd/bases/stable.example.com_crontabs.yaml" ||
		compact.String() != v1 || got.Versions[1].Version != "v2" || got.Versions[1].Manifest != "" ||
		got.Versions[2].Version != "v3" || got.Versions[2].OpenAPIV3Schema != nil {
		t.Errorf("admin: %s, want the resource's schemas by version", w.Body)
	}
	want := authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "admin"}, Verb: "adopt", APIGroup: "stable.example.com", Resource: "crontabs", ResourceRequest: true}
	if len(asked) != 1 || !reflect.DeepEqual(asked[0], want) {
		t.Errorf("asked %+v, want %+v", asked, want)
	}

	w = serve("alice", http.MethodGet, path)
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), `adoption needs verb \"adopt\" on \"crontabs\" in API group \"stable.example.com\"`) || strings.Contains(w.Body.String(), "ipv4") {
		t.Errorf("alice: %d %s, want 403 naming the adopt verb, and no schema", w.Code, w.Body)
	}
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{http.MethodPost, path, http.StatusMethodNotAllowed},
		{http.MethodGet, adoption.Path("stable.example.com", "crontabs") + "/other", http.StatusNotFound},
		{http.MethodGet, path + "/v1", http.StatusNotFound},
	} {
		if w := serve("admin", tc.method, tc.path); w.Code != tc.code {
			t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, w.Code, w.Body, tc.code)
		}
	}
	if w := serve("admin", http.MethodGet, adoption.SchemasPath("batch", "cronjobs")); w.Code != http.StatusForbidden {
		t.Errorf("a resource the project lacks: %d %s, want 403", w.Code, w.Body)
	}
}
