package adoption

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
)

// NewAuthorizer wraps the server's authorizer: a resource request of the
// adoption API, /apis/adoption.apiserver-boot.io/v1alpha1/<plural>.<group>[/...],
// whatever its method, is allowed only when inner allows the verb adopt on
// <plural> in <group>, cluster-wide, and <plural>.<group> is one of served;
// everything else (discovery of the API among it) is inner's to decide.
// A refusal's reason names the verb, the resource and the group, which the
// 403 answer carries.
func NewAuthorizer(inner authorizer.Authorizer, served map[schema.GroupResource]bool) authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if !a.IsResourceRequest() || a.GetAPIGroup() != adoption.Group {
			return inner.Authorize(ctx, a)
		}
		group, resource, ok := adoption.ParseResource(a.GetResource())
		if !ok || !served[schema.GroupResource{Group: group, Resource: resource}] {
			return authorizer.DecisionDeny, fmt.Sprintf("%q is not a resource this apiserver serves: adoption takes <plural>.<group> of one of the project's resources", a.GetResource()), nil
		}
		adopt := authorizer.AttributesRecord{User: a.GetUser(), Verb: adoption.Verb, APIGroup: group, Resource: resource, ResourceRequest: true}
		decision, reason, err := inner.Authorize(ctx, adopt)
		if decision == authorizer.DecisionAllow {
			return decision, reason, err
		}
		why := fmt.Sprintf("adoption needs verb %q on %q in API group %q, cluster-wide (RBAC rule {apiGroups: [%s], resources: [%s], verbs: [%s]})",
			adoption.Verb, resource, group, group, resource, adoption.Verb)
		if reason != "" {
			why += ": " + reason
		}
		return authorizer.DecisionDeny, why, err
	})
}
