package deploy

// The rights of an apiserver in delegated mode (aggregated behind
// kube-apiserver), which the cluster configuration grants.

import rbacv1 "k8s.io/api/rbac/v1"

// Besides the ClusterRole below, the identity of an apiserver in delegated
// mode needs two roles every cluster has.
const (
	// AuthDelegatorClusterRole allows TokenReviews and SubjectAccessReviews.
	AuthDelegatorClusterRole = "system:auth-delegator"
	// AuthenticationReaderRole, in kube-system, allows reading the
	// extension-apiserver-authentication ConfigMap (client CA, front-proxy CA,
	// allowed names and header names).
	AuthenticationReaderRole = "extension-apiserver-authentication-reader"
)

// ClusterRoleRules are what the apiserver reads through its core API client
// in delegated mode: namespaces for the NamespaceLifecycle admission plugin,
// webhook configurations and admission policies for the admission plugins of
// the same names, and FlowSchemas and PriorityLevelConfigurations for
// priority and fairness. Without them the admission plugins never become
// ready. (The same rules as k8s.io/sample-apiserver's, plus mutating
// admission policies.)
func ClusterRoleRules() []rbacv1.PolicyRule {
	read := []string{"get", "list", "watch"}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: read},
		{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{
			"mutatingwebhookconfigurations", "validatingwebhookconfigurations",
			"mutatingadmissionpolicies", "mutatingadmissionpolicybindings",
			"validatingadmissionpolicies", "validatingadmissionpolicybindings",
		}, Verbs: read},
		{APIGroups: []string{"flowcontrol.apiserver.k8s.io"}, Resources: []string{"flowschemas", "prioritylevelconfigurations"}, Verbs: []string{"list", "watch"}},
	}
}
