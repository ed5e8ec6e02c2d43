package deploy

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"

	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit/policy"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// TestAuditPolicy: the policy build config ships loads as the apiserver
// loads --audit-policy-file, and logs writes of the project's kinds with
// their bodies, reads and other writes with their metadata, health checks
// not at all.
func TestAuditPolicy(t *testing.T) {
	o := &Options{Name: "crontab", Namespace: "crontab-system", Kinds: []Kind{{FullGroup: "stable.example.com", KindDescriptor: project.KindDescriptor{Plural: "crontabs"}}, {FullGroup: "ops.example.com", KindDescriptor: project.KindDescriptor{Plural: "backups"}}}}
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

// TestProbesNameTheirContainersPorts: every probe's named port is a port of
// its container (the API server does not check it; the kubelet would fail
// the probe forever).
func TestProbesNameTheirContainersPorts(t *testing.T) {
	o := &Options{Name: "crontab", Namespace: "crontab-system", Image: "r.example.com/c:v1", EtcdImage: "gcr.io/etcd-development/etcd:v3.7.0",
		Project: &project.Project{Resources: []*project.Resource{{KindDescriptor: project.KindDescriptor{Group: "stable", Version: "v1", Kind: "CronTab"}, Controller: true}}},
		Kinds:   []Kind{{FullGroup: "stable.example.com", KindDescriptor: project.KindDescriptor{Plural: "crontabs"}}}}
	var specs []corev1.PodSpec
	specs = append(specs, o.apiserverDeployment().Spec.Template.Spec, o.controllerManagerDeployment().Spec.Template.Spec)
	for _, obj := range o.etcdObjects() {
		if s, ok := obj.(*appsv1.StatefulSet); ok {
			specs = append(specs, s.Spec.Template.Spec)
		}
	}
	if len(specs) != 3 {
		t.Fatalf("%d pod specs, want 3 (apiserver, controller-manager, etcd)", len(specs))
	}
	for _, spec := range specs {
		for _, c := range spec.Containers {
			ports := map[string]bool{}
			for _, p := range c.Ports {
				ports[p.Name] = true
			}
			for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
				if p == nil || p.HTTPGet == nil || p.HTTPGet.Port.Type != intstr.String {
					continue
				}
				if !ports[p.HTTPGet.Port.StrVal] {
					t.Errorf("container %s: %s probe names port %q, which it does not have", c.Name, name, p.HTTPGet.Port.StrVal)
				}
			}
		}
	}
}

// TestMetricsReaderBoundOnlyWhenAsked: the metrics-reader ClusterRole is
// always written; it is bound only to the identity --metrics-reader names.
func TestMetricsReaderBoundOnlyWhenAsked(t *testing.T) {
	o := &Options{Name: "crontab", Namespace: "crontab-system",
		Project: &project.Project{Resources: []*project.Resource{{KindDescriptor: project.KindDescriptor{Group: "stable", Version: "v1", Kind: "CronTab"}, Controller: true}}}}
	count := func() (roles, bindings int) {
		for _, obj := range o.rbac() {
			switch r := obj.(type) {
			case *rbacv1.ClusterRole:
				if r.Name == MetricsReaderName(o.Name) {
					roles++
				}
			case *rbacv1.ClusterRoleBinding:
				if r.Name == MetricsReaderName(o.Name) {
					bindings++
				}
			}
		}
		return
	}
	if roles, bindings := count(); roles != 1 || bindings != 0 {
		t.Errorf("without --metrics-reader: %d roles, %d bindings; want 1 and 0", roles, bindings)
	}
	o.MetricsReaders = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "monitoring", Name: "prometheus-k8s"}}
	if roles, bindings := count(); roles != 1 || bindings != 1 {
		t.Errorf("with --metrics-reader: %d roles, %d bindings; want 1 and 1", roles, bindings)
	}
}
