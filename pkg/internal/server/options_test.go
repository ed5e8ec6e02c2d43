package server

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

func parse(t *testing.T, args ...string) (*Options, *pflag.FlagSet, []string) {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("apiserver", pflag.ContinueOnError)
	delegatedOnly := o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o, fs, delegatedOnly
}

func TestModeFlags(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		delegated bool
		err       string
	}{
		{nil, false, ""},
		{[]string{"--write-kubeconfig", "k"}, false, ""},
		{[]string{"--delegated-auth"}, true, ""},
		{[]string{"--authentication-kubeconfig", "k"}, true, ""},
		{[]string{"--authorization-kubeconfig", "k"}, true, ""},
		{[]string{"--kubeconfig", "k"}, true, ""},
		{[]string{"--kubeconfig", "k", "--enable-admission-plugins", "NamespaceLifecycle"}, true, ""},
		// Flags of one mode are refused in the other rather than ignored.
		{[]string{"--enable-admission-plugins", "NamespaceLifecycle"}, false, "--enable-admission-plugins applies only in delegated mode"},
		{[]string{"--requestheader-client-ca-file", "ca.crt"}, false, "--requestheader-client-ca-file applies only in delegated mode"},
		{[]string{"--enable-priority-and-fairness=true"}, false, "--enable-priority-and-fairness applies only in delegated mode"},
		{[]string{"--kubeconfig", "k", "--write-kubeconfig", "out"}, true, "--write-kubeconfig applies only in standalone mode"},
		{[]string{"--delegated-auth", "--token-file", "t"}, true, "--token-file applies only in standalone mode"},
	} {
		o, fs, delegatedOnly := parse(t, tc.args...)
		if o.delegated() != tc.delegated {
			t.Errorf("%v: delegated %v, want %v", tc.args, o.delegated(), tc.delegated)
		}
		err := o.validateFlags(fs, delegatedOnly)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
		}
	}
}

func TestOneKubeconfigServesEveryClient(t *testing.T) {
	for _, tc := range []struct {
		args                  []string
		authn, authz, coreAPI string
	}{
		{[]string{"--kubeconfig", "k"}, "k", "k", "k"},
		{[]string{"--authentication-kubeconfig", "a", "--authorization-kubeconfig", "z"}, "a", "z", "a"},
		{[]string{"--kubeconfig", "k", "--authorization-kubeconfig", "z"}, "k", "z", "k"},
		{[]string{"--kubeconfig", "k", "--authentication-kubeconfig", "a"}, "a", "k", "k"},
		// In a cluster: every client from the in-cluster configuration.
		{[]string{"--delegated-auth"}, "", "", ""},
	} {
		o, _, _ := parse(t, tc.args...)
		o.Complete()
		if got := [3]string{o.Authentication.RemoteKubeConfigFile, o.Authorization.RemoteKubeConfigFile, o.CoreAPI.CoreAPIKubeconfigPath}; got != [3]string{tc.authn, tc.authz, tc.coreAPI} {
			t.Errorf("%v: authentication, authorization, core API kubeconfigs %q, want %q", tc.args, got, [3]string{tc.authn, tc.authz, tc.coreAPI})
		}
	}
}

// --feature-gates sets k8s.io/apiserver's gates, which the server reads
// (CBOR serving: docs/upgrading.md).
func TestFeatureGatesFlag(t *testing.T) {
	gate := utilfeature.DefaultMutableFeatureGate
	t.Cleanup(func() {
		if err := gate.Set(string(features.CBORServingAndStorage) + "=false"); err != nil {
			t.Fatal(err)
		}
	})
	if gate.Enabled(features.CBORServingAndStorage) {
		t.Fatalf("%s is on by default", features.CBORServingAndStorage)
	}
	parse(t, "--feature-gates", string(features.CBORServingAndStorage)+"=true")
	if !gate.Enabled(features.CBORServingAndStorage) {
		t.Errorf("--feature-gates %s=true did not turn the gate on", features.CBORServingAndStorage)
	}
}
