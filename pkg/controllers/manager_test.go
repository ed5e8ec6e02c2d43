package controllers

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"
)

type fakeController struct{ name string }

func (f fakeController) Name() string                         { return f.name }
func (f fakeController) Init(*rest.Config, Informers) error   { return nil }
func (f fakeController) Run(ctx context.Context, workers int) {}

func TestManagerFlags(t *testing.T) {
	cmd := newManagerCommand("crontab", nil, []Controller{fakeController{"crontab"}, fakeController{"calendar"}})
	for _, name := range []string{"concurrent-crontab-syncs", "concurrent-calendar-syncs", "leader-elect", "bind-address", "kubeconfig"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("no --%s flag", name)
		}
	}
	if v := cmd.Flags().Lookup("leader-elect").DefValue; v != "true" {
		t.Errorf("--leader-elect defaults to %s; in cluster it must be on", v)
	}
	if err := cmd.Flags().Parse([]string{"--concurrent-crontab-syncs", "7"}); err != nil {
		t.Fatal(err)
	}
	if v, _ := cmd.Flags().GetInt("concurrent-crontab-syncs"); v != 7 {
		t.Errorf("--concurrent-crontab-syncs = %d", v)
	}
}
