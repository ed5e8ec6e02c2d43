package standalone

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

func TestTokenFileIsCreatedOnceAndPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "token")
	tok, err := loadOrCreateToken(path)
	if err != nil || len(tok) != 64 {
		t.Fatalf("token %q, err %v", tok, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	again, _ := loadOrCreateToken(path)
	if again != tok {
		t.Errorf("token changed between runs")
	}
}

func TestStandaloneAuth(t *testing.T) {
	authn := newAuthenticator("secret")
	authz := newAuthorizer()
	for _, tc := range []struct {
		path, token   string
		authenticated bool
		allowed       bool
	}{
		{"/apis/stable.example.com/v1/crontabs", "secret", true, true},
		{"/apis/stable.example.com/v1/crontabs", "wrong", false, false},
		{"/apis/stable.example.com/v1/crontabs", "", false, false},
		{"/readyz", "", true, true},
		{"/livez/etcd", "", true, true},
	} {
		req := httptest.NewRequest("GET", tc.path, nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, ok, _ := authn.AuthenticateRequest(req)
		if ok != tc.authenticated {
			t.Errorf("%s token %q: authenticated=%v, want %v", tc.path, tc.token, ok, tc.authenticated)
			continue
		}
		if !ok {
			continue // 401
		}
		d, _, _ := authz.Authorize(context.Background(), authorizer.AttributesRecord{
			User: resp.User, Path: tc.path, ResourceRequest: tc.path[:5] == "/apis", Verb: "get",
		})
		if (d == authorizer.DecisionAllow) != tc.allowed {
			t.Errorf("%s as %s: decision %v, want allowed=%v", tc.path, resp.User.GetName(), d, tc.allowed)
		}
	}
	// Anonymous users may not reach resources even if a request authenticated them somehow.
	d, _, _ := authz.Authorize(context.Background(), authorizer.AttributesRecord{
		User: &user.DefaultInfo{Name: user.Anonymous}, Path: "/apis", ResourceRequest: true, Verb: "list",
	})
	if d == authorizer.DecisionAllow {
		t.Errorf("anonymous resource request allowed")
	}
}
