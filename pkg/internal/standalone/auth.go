package standalone

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/private"
)

// Standalone mode: no kube-apiserver to delegate to. Requests must carry the
// bearer token from --token-file (a random one is created on first run);
// anonymous callers may only reach the health endpoints.

// loadOrCreateToken reads the token file, creating it with a random token first if missing.
func loadOrCreateToken(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		if err := private.Check("--token-file", path); err != nil {
			return "", err
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("--token-file %s is empty", path)
		}
		return tok, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw)
	if err := private.Dir(filepath.Dir(path)); err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	return tok, nil
}

func isHealthPath(p string) bool {
	for _, h := range []string{"/healthz", "/livez", "/readyz"} {
		if p == h || strings.HasPrefix(p, h+"/") {
			return true
		}
	}
	return false
}

// adminUser is who holds the local token: a cluster administrator.
var adminUser = &user.DefaultInfo{Name: "apiserver-boot-admin", Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}

// newAuthenticator authenticates the holder of token as adminUser, and
// anyone as anonymous on the health endpoints.
func newAuthenticator(token string) authenticator.Request {
	tokenAuth := bearertoken.New(authenticator.TokenFunc(func(ctx context.Context, got string) (*authenticator.Response, bool, error) {
		if subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1 {
			return &authenticator.Response{User: adminUser}, true, nil
		}
		return nil, false, nil
	}))
	healthAnonymous := authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		if isHealthPath(req.URL.Path) {
			return &authenticator.Response{User: &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}}, true, nil
		}
		return nil, false, nil
	})
	return union.New(tokenAuth, healthAnonymous)
}

// newAuthorizer allows administrators everything and anyone the health endpoints.
func newAuthorizer() authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if u := a.GetUser(); u != nil {
			for _, g := range u.GetGroups() {
				if g == user.SystemPrivilegedGroup {
					return authorizer.DecisionAllow, "", nil
				}
			}
		}
		if !a.IsResourceRequest() && isHealthPath(a.GetPath()) {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "only the holder of the --token-file token may use this server", nil
	})
}
