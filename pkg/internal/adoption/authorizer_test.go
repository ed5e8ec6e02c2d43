package adoption

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// TestAuthorizer: a resource request of the adoption API is asked of the
// server's authorizer as the verb adopt on the resource it names (no
// namespace, no name), and refused with a reason naming the verb, the
// resource and the group; a resource the project does not serve is refused
// without asking; any other request is the server's authorizer's.
func TestAuthorizer(t *testing.T) {
	var asked []authorizer.Attributes
	inner := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		asked = append(asked, a)
		if a.GetUser().GetName() == "admin" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "no RBAC rule", nil
	})
	authz := NewAuthorizer(inner, map[schema.GroupResource]bool{{Group: "stable.example.com", Resource: "crontabs"}: true})
	request := func(who, verb, group, resource, namespace, name string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: &user.DefaultInfo{Name: who}, Verb: verb, APIGroup: group, APIVersion: "v1alpha1",
			Resource: resource, Namespace: namespace, Name: name, ResourceRequest: true}
	}

	if d, _, _ := authz.Authorize(context.Background(), request("admin", "create", "adoption.apiserver-boot.io", "crontabs.stable.example.com", "", "")); d != authorizer.DecisionAllow {
		t.Errorf("admin: %v, want allowed", d)
	}
	want := authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "admin"}, Verb: "adopt", APIGroup: "stable.example.com", Resource: "crontabs", ResourceRequest: true}
	if len(asked) != 1 || !reflect.DeepEqual(asked[0], want) {
		t.Errorf("asked %+v, want %+v", asked, want)
	}
	asked = nil
	d, reason, _ := authz.Authorize(context.Background(), request("alice", "get", "adoption.apiserver-boot.io", "crontabs.stable.example.com", "team-a", "x"))
	if d != authorizer.DecisionDeny || !strings.Contains(reason, `verb "adopt" on "crontabs" in API group "stable.example.com"`) || !strings.Contains(reason, "no RBAC rule") {
		t.Errorf("alice: %v %q, want denied naming the verb, resource and group, and the authorizer's reason", d, reason)
	}
	asked = nil
	d, reason, _ = authz.Authorize(context.Background(), request("admin", "list", "adoption.apiserver-boot.io", "cronjobs.batch", "", ""))
	if d != authorizer.DecisionDeny || !strings.Contains(reason, `"cronjobs.batch" is not a resource this apiserver serves`) || len(asked) != 0 {
		t.Errorf("a resource not served: %v %q (asked %v), want denied without asking", d, reason, asked)
	}
	for _, a := range []authorizer.AttributesRecord{
		request("alice", "create", "stable.example.com", "crontabs", "team-a", ""),
		{User: &user.DefaultInfo{Name: "alice"}, Verb: "get", Path: "/apis/adoption.apiserver-boot.io/v1alpha1"},
	} {
		asked = nil
		if d, reason, _ := authz.Authorize(context.Background(), a); d != authorizer.DecisionNoOpinion || reason != "no RBAC rule" || len(asked) != 1 || !reflect.DeepEqual(asked[0], a) {
			t.Errorf("%+v: %v %q (asked %v), want the inner authorizer's answer to the request itself", a, d, reason, asked)
		}
	}
}
