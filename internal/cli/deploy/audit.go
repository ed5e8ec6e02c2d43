package deploy

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Where the apiserver finds its audit policy.
const (
	auditDir        = "/etc/apiserver/audit"
	auditPolicyFile = "policy.yaml"
)

// AuditPolicyName names the ConfigMap holding the apiserver's audit policy.
func AuditPolicyName(name string) string { return name + "-audit-policy" }

// AuditPolicy is the default audit policy build config ships (an
// audit.k8s.io/v1 Policy; written as data, so that the CLI does not link
// k8s.io/apiserver): writes of the project's kinds with their request and
// response bodies, every other request (reads among them) with its
// metadata, health checks not at all. Edit the ConfigMap (or patch it with
// kustomize) to log otherwise.
func (o *Options) AuditPolicy() map[string]any {
	groups := map[string]bool{}
	for _, k := range o.Kinds {
		groups[k.FullGroup] = true
	}
	var own []map[string]any
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		own = append(own, map[string]any{"group": g})
	}
	return map[string]any{
		"apiVersion": "audit.k8s.io/v1",
		"kind":       "Policy",
		"omitStages": []string{"RequestReceived"},
		"rules": []map[string]any{
			{"level": "None", "nonResourceURLs": []string{"/healthz*", "/livez*", "/readyz*"}},
			{"level": "RequestResponse", "verbs": []string{"create", "update", "patch", "delete", "deletecollection"}, "resources": own},
			{"level": "Metadata"},
		},
	}
}

func (o *Options) auditPolicyConfigMap() (*corev1.ConfigMap, error) {
	b, err := yaml.Marshal(o.AuditPolicy())
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		TypeMeta:   typeMeta("v1", "ConfigMap"),
		ObjectMeta: o.meta(AuditPolicyName(o.Name), componentAPIServer),
		Data:       map[string]string{auditPolicyFile: string(b)},
	}, nil
}
