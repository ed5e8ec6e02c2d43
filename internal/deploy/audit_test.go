package deploy

import (
	"testing"

	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit/policy"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// TestAuditPolicy: the policy build config ships loads as the apiserver
// loads --audit-policy-file, and logs writes of the project's kinds with
// their bodies, reads and other writes with their metadata, health checks
// not at all.
func TestAuditPolicy(t *testing.T) {
	o := &Options{Name: "crontab", Namespace: "crontab-system", Kinds: []Kind{{Group: "stable.example.com", Plural: "crontabs"}, {Group: "ops.example.com", Plural: "backups"}}}
	cm, err := o.auditPolicyConfigMap()
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.LoadPolicyFromBytes([]byte(cm.Data[auditPolicyFile]))
	if err != nil {
		t.Fatalf("the apiserver refuses the policy: %v\n%s", err, cm.Data[auditPolicyFile])
	}
	eval := policy.NewPolicyRuleEvaluator(p)
	for _, tc := range []struct {
		attrs authorizer.AttributesRecord
		want  auditinternal.Level
	}{
		{authorizer.AttributesRecord{Verb: "create", APIGroup: "stable.example.com", Resource: "crontabs", ResourceRequest: true}, auditinternal.LevelRequestResponse},
		{authorizer.AttributesRecord{Verb: "delete", APIGroup: "ops.example.com", Resource: "backups", ResourceRequest: true}, auditinternal.LevelRequestResponse},
		{authorizer.AttributesRecord{Verb: "patch", APIGroup: "stable.example.com", Resource: "crontabs", Subresource: "status", ResourceRequest: true}, auditinternal.LevelRequestResponse},
		{authorizer.AttributesRecord{Verb: "get", APIGroup: "stable.example.com", Resource: "crontabs", ResourceRequest: true}, auditinternal.LevelMetadata},
		{authorizer.AttributesRecord{Verb: "list", APIGroup: "stable.example.com", Resource: "crontabs", ResourceRequest: true}, auditinternal.LevelMetadata},
		{authorizer.AttributesRecord{Verb: "get", Path: "/readyz"}, auditinternal.LevelNone},
		{authorizer.AttributesRecord{Verb: "get", Path: "/livez/etcd"}, auditinternal.LevelNone},
		{authorizer.AttributesRecord{Verb: "get", Path: "/openapi/v3"}, auditinternal.LevelMetadata},
	} {
		if got := eval.EvaluatePolicyRule(tc.attrs).Level; got != tc.want {
			t.Errorf("%s %s/%s %s: level %s, want %s", tc.attrs.Verb, tc.attrs.APIGroup, tc.attrs.Resource, tc.attrs.Path, got, tc.want)
		}
	}
}
