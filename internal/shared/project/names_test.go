package project

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestValidation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		wantErr string // substring; "" means valid
	}{
		{"domain ok", ValidateDomain("example.com"), ""},
		{"domain caps", ValidateDomain("Example.com"), "--domain"},
		{"domain without a dot, as the groups have one", ValidateDomain("sh"), ""},
		{"domain with an underscore", ValidateDomain("my_domain.com"), "--domain"},
		{"API group without a dot", ValidateAPIGroup("--group", "sh"), `--group "sh" is not a valid API group name: an API group is a DNS name with at least one dot, as a CRD's spec.group`},
		{"API group with capitals", ValidateAPIGroup("--group", "Widgets.sh"), `--group "Widgets.sh" is not a valid API group name`},
		{"API group ok", ValidateAPIGroup("--group", "widgets.sh"), ""},
		{"group ok", ValidateGroup("stable", "example.com"), ""},
		{"group dash", ValidateGroup("my-group", "example.com"), "--group"},
		{"group caps", ValidateGroup("Stable", "example.com"), "--group"},
		{"group reserved", ValidateGroup("runtime", "example.com"), "reserved"},
		{"group ends in a version", ValidateGroup("stablev1", "example.com"), "may not end in a version"},
		{"group with digits", ValidateGroup("batch2", "example.com"), ""},
		{"group with the domain", ValidateGroup("stable.example.com", "example.com"), "--group stable.example.com: give the group without the project's domain: --group stable"},
		{"group with capitals", ValidateGroup("Stable", "example.com"), "did you mean --group stable?"},
		{"group with a dash", ValidateGroup("my-group", "example.com"), "did you mean --group mygroup?"},
		{"version without its number", ValidateVersion("v1beta"), "did you mean --version v1beta1?"},
		{"version capitalised", ValidateVersion("V2"), "did you mean --version v2?"},
		{"version without v", ValidateVersion("1"), "did you mean --version v1?"},
		{"version semver", ValidateVersion("v1.0"), "did you mean --version v1?"},
		{"kind lowercase", ValidateKind("crontab"), "did you mean --kind Crontab?"},
		{"kind snake case", ValidateKind("cron_tab"), "did you mean --kind CronTab?"},
		{"resource capitalised", ValidateName("--resource", "CronTabs"), "did you mean --resource crontabs?"},
		{"group a Go keyword", ValidateGroup("func", "example.com"), `--group "func" is not valid: it is a Go keyword`},
		{"group a predeclared identifier", ValidateGroup("string", "example.com"), `--group "string" is not valid: it is a predeclared Go identifier`},
		{"version v1", ValidateVersion("v1"), ""},
		{"version v1alpha1", ValidateVersion("v1alpha1"), ""},
		{"version v2beta3", ValidateVersion("v2beta3"), ""},
		{"version 1", ValidateVersion("1"), "--version"},
		{"version v1gamma1", ValidateVersion("v1gamma1"), "--version"},
		{"version v0", ValidateVersion("v0"), "--version"},
		{"kind ok", ValidateKind("CronTab"), ""},
		{"kind lower", ValidateKind("cronTab"), "--kind"},
		{"kind list", ValidateKind("CronTabList"), "List"},
		{"kind a Go keyword lowercased", ValidateKind("Func"), `--kind "Func" is not valid: its lowercase form "func" is a Go keyword`},
		{"kind a predeclared identifier lowercased", ValidateKind("Error"), `--kind "Error" is not valid: its lowercase form "error" is a predeclared Go identifier`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch {
			case tc.wantErr == "" && tc.err != nil:
				t.Errorf("unexpected error: %v", tc.err)
			case tc.wantErr != "" && (tc.err == nil || !strings.Contains(tc.err.Error(), tc.wantErr)):
				t.Errorf("want an error containing %q, got %v", tc.wantErr, tc.err)
			}
		})
	}
}

// TestCreateGroupAnyAPIGroup: any group a CRD can have is servable: with
// --domain sh, --group widgets is widgets.sh; a group given in full, the
// domain itself or outside it, is served under its name from the package of
// its first label, recorded in PROJECT; a name kube-apiserver would refuse
// for a CRD is refused naming --group.
func TestCreateGroupAnyAPIGroup(t *testing.T) {
	none := func(string) bool { return false }
	sh := &Project{Domain: "sh"}
	if dir, err := sh.CreateGroup("widgets", none); err != nil || dir != "widgets" || sh.FullGroup(dir) != "widgets.sh" || sh.Groups != nil {
		t.Errorf("--domain sh --group widgets: got %q (%s), %v, groups %v; want widgets served as widgets.sh", dir, sh.FullGroup(dir), err, sh.Groups)
	}
	p := &Project{Domain: "example.com", Resources: []*Resource{{KindDescriptor: KindDescriptor{Group: "stable", Version: "v1", Kind: "CronTab"}}}}
	for _, tc := range []struct{ flag, dir, full string }{
		{"example.com", "example", "example.com"},
		{"widgets.sh", "widgets", "widgets.sh"},
		{"widgets.sh", "widgets", "widgets.sh"}, // again: the recorded group
		{"ops", "ops", "ops.example.com"},
	} {
		dir, err := p.CreateGroup(tc.flag, none)
		if err != nil || dir != tc.dir || p.FullGroup(dir) != tc.full {
			t.Errorf("--group %s: got package %q served as %s, %v; want %s served as %s", tc.flag, dir, p.FullGroup(dir), err, tc.dir, tc.full)
		}
		if got, err := p.ResolveGroup(tc.flag); err != nil || got != tc.dir {
			t.Errorf("ResolveGroup(%s) = %q, %v; want %s", tc.flag, got, err, tc.dir)
		}
	}
	for flag, want := range map[string]string{
		"stable.example.org": "--group stable.example.org is served from the Go package pkg/apis/stable (its first label), which is group stable.example.com already",
		"3scale.net":         "--group 3scale.net is served from the Go package pkg/apis/<first label>, and --group \"3scale\" is not valid",
		"stable.example.com": "give the group without the project's domain: --group stable",
		"a..b":               `--group "a..b" is not a valid API group name`,
		// A package PROJECT records for another group, its folder not
		// written yet: not taken over.
		"widgets.io": "--group widgets.io is served from the Go package pkg/apis/widgets (its first label), which is group widgets.sh already",
	} {
		if _, err := p.CreateGroup(flag, none); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--group %s: want an error containing %q, got %v", flag, want, err)
		}
	}
	if _, err := (&Project{Domain: "example.com"}).CreateGroup("extra.io", func(dir string) bool { return dir == "extra" }); err == nil || !strings.Contains(err.Error(), "pkg/apis/extra") {
		t.Errorf("a package folder that exists: want an error naming it, got %v", err)
	}
}

// TestCreateGroupWithDashes: a group whose first label has a dash, as CRDs
// allow (cert-manager.io), is served under its name from the package of
// that label without dashes (certmanager), as Kubernetes projects do; so is
// --group cluster-api, served as cluster-api.<domain>. The typed clients
// are told its Go name (+groupGoName=CertManager). A package taken already
// stays an error naming --group.
func TestCreateGroupWithDashes(t *testing.T) {
	none := func(string) bool { return false }
	p := &Project{Domain: "example.com", Resources: []*Resource{{KindDescriptor: KindDescriptor{Group: "stable", Version: "v1", Kind: "CronTab"}}}}
	for _, tc := range []struct{ flag, dir, full, goName string }{
		{"cert-manager.io", "certmanager", "cert-manager.io", "CertManager"},
		{"cert-manager.io", "certmanager", "cert-manager.io", "CertManager"}, // again: the recorded group
		{"acme.cert-manager.io", "acme", "acme.cert-manager.io", ""},
		{"cluster-api", "clusterapi", "cluster-api.example.com", "ClusterApi"},
		{"cluster-api", "clusterapi", "cluster-api.example.com", "ClusterApi"},
		{"a-b-c.sh", "abc", "a-b-c.sh", "ABC"},
	} {
		dir, err := p.CreateGroup(tc.flag, none)
		if err != nil || dir != tc.dir || p.FullGroup(dir) != tc.full {
			t.Errorf("--group %s: got package %q served as %s, %v; want %s served as %s", tc.flag, dir, p.FullGroup(dir), err, tc.dir, tc.full)
		}
		for _, flag := range []string{tc.flag, tc.full, tc.dir} {
			if got, err := p.ResolveGroup(flag); err != nil || got != tc.dir {
				t.Errorf("ResolveGroup(%s) = %q, %v; want %s", flag, got, err, tc.dir)
			}
		}
		if got := GroupGoNameMarker(tc.full); got != tc.goName {
			t.Errorf("GroupGoNameMarker(%s) = %q, want %q", tc.full, got, tc.goName)
		}
	}
	if got := GroupGoName("stable.example.com"); got != "Stable" {
		t.Errorf("GroupGoName(stable.example.com) = %q, want Stable", got)
	}
	for flag, want := range map[string]string{
		"cert-manager.dev":         "--group cert-manager.dev is served from the Go package pkg/apis/certmanager (its first label, without dashes), which is group cert-manager.io already",
		"clusterapi.io":            "--group clusterapi.io is served from the Go package pkg/apis/clusterapi (its first label), which is group cluster-api.example.com already",
		"st-able":                  "--group st-able is served from the Go package pkg/apis/stable (its first label, without dashes), which is group stable.example.com already",
		"3-scale.net":              "--group 3-scale.net is served from the Go package pkg/apis/<first label, without dashes>, and --group \"3scale\" is not valid",
		"run-time":                 `--group run-time is served from the Go package pkg/apis/<first label, without dashes>, and --group "runtime" is reserved`,
		"cert-manager-.io":         `--group "cert-manager-.io" is not a valid API group name`,
		"cert-manager.example.com": "give the group without the project's domain: --group cert-manager",
		"Cert-Manager":             "--group \"Cert-Manager\" is not valid",
	} {
		if _, err := p.CreateGroup(flag, none); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--group %s: want an error containing %q, got %v", flag, want, err)
		}
	}
	if _, err := (&Project{Domain: "example.com"}).CreateGroup("cert-manager.io", func(dir string) bool { return dir == "certmanager" }); err == nil || !strings.Contains(err.Error(), "--group cert-manager.io is served from the Go package pkg/apis/certmanager") {
		t.Errorf("a package folder that exists: want an error naming it, got %v", err)
	}
}

func TestPlural(t *testing.T) {
	for kind, want := range map[string]string{"CronTab": "crontabs", "Policy": "policies", "Class": "classes", "Endpoints": "endpoints"} {
		if got := Plural(kind); got != want {
			t.Errorf("Plural(%s) = %s, want %s", kind, got, want)
		}
	}
}

func TestCheckClash(t *testing.T) {
	p := &Project{Domain: "example.com", Resources: []*Resource{{KindDescriptor: KindDescriptor{Group: "stable", Version: "v1", Kind: "CronTab", Plural: "crontabs", Singular: "crontab"}}}}
	// CronTabs' plural "crontabs" would be the plural of CronTab and clash.
	err := p.CheckClash(&Resource{KindDescriptor: KindDescriptor{Group: "stable", Version: "v1", Kind: "Crontabs", Plural: "crontabses", Singular: "crontabs"}})
	if err == nil || !strings.Contains(err.Error(), `"crontabs"`) {
		t.Errorf("want a clash naming crontabs, got %v", err)
	}
	if err := p.CheckClash(&Resource{KindDescriptor: KindDescriptor{Group: "other", Version: "v1", Kind: "CronTab", Plural: "crontabs", Singular: "crontab"}}); err != nil {
		t.Errorf("another group may reuse names: %v", err)
	}
}

func TestCheckClashShortNamesAndBuiltins(t *testing.T) {
	p := &Project{Domain: "example.com", Resources: []*Resource{{KindDescriptor: KindDescriptor{Group: "stable", Version: "v1", Kind: "CronTab", Plural: "crontabs", Singular: "crontab", ShortNames: []string{"ct"}}}}}
	err := p.CheckClash(&Resource{KindDescriptor: KindDescriptor{Group: "stable", Version: "v1", Kind: "Cat", Plural: "cats", Singular: "cat", ShortNames: []string{"ct"}}})
	if err == nil || !strings.Contains(err.Error(), `short name "ct"`) {
		t.Errorf("want a short-name clash, got %v", err)
	}
	k8s := &Project{Domain: "k8s.io"}
	err = k8s.CheckClash(&Resource{KindDescriptor: KindDescriptor{Group: "networking", Version: "v1", Kind: "Ingress", Plural: "ingresses", Singular: "ingress"}})
	if err == nil || !strings.Contains(err.Error(), "built-in Kubernetes resource in group networking.k8s.io") {
		t.Errorf("want a clash with the built-in Ingress, got %v", err)
	}
	if err := k8s.CheckClash(&Resource{KindDescriptor: KindDescriptor{Group: "networking", Version: "v1", Kind: "Gateway2", Plural: "gateway2s", Singular: "gateway2"}}); err != nil {
		t.Errorf("a new name in a built-in group is fine: %v", err)
	}
}

func TestGeneratedCodeNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{ImportAlias("k8s.io/apimachinery/pkg/apis/meta/v1"), "metav1"},
		{ImportAlias("k8s.io/api/core/v1"), "corev1"},
		{ImportAlias("example.com/crontab/pkg/apis/stable"), "stable"},
		{ClientPlural("CronTab", "crontabs"), "CronTabs"},
		{ClientPlural("Ox", "oxen"), "Oxen"},
		{ControllerPackage("CronTab"), "crontab"},
		{OpenAPIModelPackage("example.com/crontab", "stable", "v1"), "com.example.crontab.pkg.apis.stable.v1"},
		{APIs("stable", "v1"), filepath.Join("pkg", "apis", "stable", "v1")},
		{APIsImport("example.com/crontab", "stable", "v1"), "example.com/crontab/pkg/apis/stable/v1"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestGoName(t *testing.T) {
	for in, want := range map[string]string{"restart": "Restart", "dry-run": "DryRun", "v1beta1": "V1beta1", "a_b.c": "ABC"} {
		if got := GoName(in); got != want {
			t.Errorf("GoName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidateFieldPath(t *testing.T) {
	for p, ok := range map[string]bool{".spec.replicas": true, ".status.labelSelector": true, "spec.replicas": false, ".spec..x": false, ".spec.": false, ".items[0]": false, "": false} {
		if err := ValidateFieldPath(p); (err == nil) != ok {
			t.Errorf("%q: got %v, want ok=%v", p, err, ok)
		}
	}
}
