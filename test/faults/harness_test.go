//go:build faults

// Package faults is the fault tier: a generated project's apiserver, two
// replicas on a three-member etcd cluster, everything on loopback, under
// writing clients while processes are killed. It measures what a failure
// costs and writes the figures to docs/reliability.md.
package faults

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/freeport"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// syncBuffer collects a child's output.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freePort returns a free loopback port, never one given before in this
// test binary.
func freePort(t *testing.T) int {
	t.Helper()
	p, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// process is a child in its own process group, always stopped at the end.
type process struct {
	name string
	args []string
	dir  string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

func start(t *testing.T, dir, name string, args ...string) *process {
	t.Helper()
	p := &process{name: name, args: args, dir: dir}
	p.run(t)
	t.Cleanup(func() { p.kill(syscall.SIGKILL) })
	return p
}

// run starts (or starts again) the process with its arguments.
func (p *process) run(t *testing.T) {
	t.Helper()
	p.out, p.done = &syncBuffer{}, make(chan struct{})
	p.cmd = exec.Command(p.name, p.args...)
	p.cmd.Dir, p.cmd.Stdin = p.dir, nil
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := p.done
	go func() { _ = p.cmd.Wait(); close(done) }()
}

// kill signals the process group and waits for the process to end.
func (p *process) kill(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

func sh(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// member is one etcd of the cluster.
type member struct {
	*process
	name   string
	client string // client URL
}

// etcdCluster starts n etcd members on loopback.
func etcdCluster(t *testing.T, bin string, n int) []*member {
	t.Helper()
	dir := t.TempDir()
	var members []*member
	var initial []string
	peers := make([]string, n)
	for i := range n {
		peers[i] = fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
		initial = append(initial, fmt.Sprintf("m%d=%s", i, peers[i]))
	}
	for i := range n {
		client := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
		name := fmt.Sprintf("m%d", i)
		p := start(t, dir, bin,
			"--name", name, "--data-dir", filepath.Join(dir, name),
			"--listen-client-urls", client, "--advertise-client-urls", client,
			"--listen-peer-urls", peers[i], "--initial-advertise-peer-urls", peers[i],
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new", "--initial-cluster-token", "faults",
			"--log-level", "error")
		members = append(members, &member{process: p, name: name, client: client})
	}
	return members
}

// status is a member's view: whether it answers, its raft index and the leader.
func status(m *member) (ok bool, raftIndex, leader, id uint64) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.client}, DialTimeout: 2 * time.Second})
	if err != nil {
		return false, 0, 0, 0
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	st, err := cli.Status(ctx, m.client)
	if err != nil {
		return false, 0, 0, 0
	}
	return true, st.RaftIndex, st.Leader, st.Header.MemberId
}

// replica is one apiserver.
type replica struct {
	*process
	name   string
	config *rest.Config
	client *http.Client
}

// ready tells whether the replica's /readyz answers 200.
func (r *replica) ready() bool {
	resp, err := r.client.Get(r.config.Host + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// startReplica runs the project's apiserver on the etcd cluster, in
// standalone mode with the token the replicas share.
func startReplica(t *testing.T, name, bin, state string, etcd []*member) *replica {
	t.Helper()
	var urls []string
	for _, m := range etcd {
		urls = append(urls, m.client)
	}
	kubeconfig := filepath.Join(state, name+".kubeconfig")
	os.Remove(kubeconfig)
	p := start(t, state, bin,
		"--secure-port", fmt.Sprint(freePort(t)), "--etcd-servers", strings.Join(urls, ","),
		"--token-file", filepath.Join(state, "token"), "--cert-dir", filepath.Join(state, name+"-certs"),
		"--write-kubeconfig", kubeconfig,
		"--shutdown-delay-duration", "2s", "--shutdown-send-retry-after")
	r := &replica{process: p, name: name}
	if !waitUntil(2*time.Minute, func() bool {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return false
		}
		cfg.QPS, cfg.Burst = 1000, 1000
		client, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return false
		}
		r.config, r.client = cfg, client
		return r.ready()
	}) {
		t.Fatalf("replica %s not ready:\n%s", name, p.out.String())
	}
	return r
}

func waitUntil(timeout time.Duration, f func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if f() {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}
