// Package testenv starts a project's apiserver in the test process, on an
// embedded etcd in a temporary folder, and hands out a *rest.Config for it:
// no binaries to download, nothing to install. Generated tests use it
// through Main:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, config)) }
//
// and get the config with testenv.Config(t).
package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiserver-boot/apiserver-boot/pkg/apiserver"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/server"
)

// environment is a running apiserver.
type environment struct {
	// Config reaches the apiserver as an administrator.
	Config *rest.Config
	dir    string
	cancel context.CancelFunc
	done   chan error
}

// start runs the apiserver described by cfg until stop.
func start(cfg apiserver.Config) (*environment, error) {
	dir, err := os.MkdirTemp("", "testenv-")
	if err != nil {
		return nil, err
	}
	// The apiserver serves on a listener held from here, so no other
	// process (nor the embedded etcd's port pick) can take its port.
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	o := server.NewOptions()
	o.SecureServing.Listener = listener
	o.SecureServing.BindPort = listener.Addr().(*net.TCPAddr).Port
	o.SecureServing.ServerCert.CertDirectory = filepath.Join(dir, "certs")
	o.EmbeddedEtcd.DataDir = filepath.Join(dir, "etcd")
	o.TokenFile = filepath.Join(dir, "token")
	o.WriteKubeconfig = filepath.Join(dir, "kubeconfig")

	o.Complete()
	if err := o.Validate(); err != nil {
		listener.Close()
		os.RemoveAll(dir)
		return nil, err
	}

	ctx, cancel := context.WithCancel(context.Background())
	env := &environment{dir: dir, cancel: cancel, done: make(chan error, 1)}
	go func() {
		err := server.Run(ctx, server.Project(cfg), o)
		listener.Close() // when Run failed before serving on it
		env.done <- err
	}()
	if err := env.waitReady(o.WriteKubeconfig, 2*time.Minute); err != nil {
		env.stop()
		return nil, err
	}
	return env, nil
}

func (e *environment) waitReady(kubeconfig string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-e.done:
			e.done <- err
			return fmt.Errorf("apiserver stopped before it was ready: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			continue // not written yet
		}
		client, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return err
		}
		resp, err := client.Get(cfg.Host + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				e.Config = cfg
				return nil
			}
		}
	}
	return fmt.Errorf("apiserver not ready after %s", timeout)
}

// stop shuts the apiserver and its etcd down and removes their files.
func (e *environment) stop() error {
	e.cancel()
	var err error
	select {
	case err = <-e.done:
	case <-time.After(time.Minute):
		err = errors.New("apiserver did not stop within a minute")
	}
	if rmErr := os.RemoveAll(e.dir); rmErr != nil && err == nil {
		err = rmErr
	}
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

var shared *environment

// Main starts one environment for a test binary, runs its tests and stops
// it: the apiserver's libraries keep process-wide state, so one server per
// process is what works.
func Main(m *testing.M, cfg apiserver.Config) int {
	env, err := start(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	shared = env
	code := m.Run()
	if err := env.stop(); err != nil {
		fmt.Fprintln(os.Stderr, "testenv: stopping:", err)
	}
	return code
}

// Config returns a copy of the shared environment's config, for tests run through Main.
func Config(t testing.TB) *rest.Config {
	t.Helper()
	if shared == nil {
		t.Fatal("testenv: no environment; call testenv.Main from TestMain")
	}
	return rest.CopyConfig(shared.Config)
}
