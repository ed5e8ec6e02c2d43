//go:build faults

// Package faults is the fault tier: a generated project's apiserver, two
// replicas on a three-member etcd cluster, everything on loopback, under
// writing clients while processes are killed. It measures what a failure
// costs and writes the figures to docs/reliability.md.
package faults

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// member is one etcd of the cluster.
type member struct {
	*harness.Process
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
		peers[i] = fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
		initial = append(initial, fmt.Sprintf("m%d=%s", i, peers[i]))
	}
	for i := range n {
		client := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
		name := fmt.Sprintf("m%d", i)
		p := harness.Start(t, dir, bin,
			"--name", name, "--data-dir", filepath.Join(dir, name),
			"--listen-client-urls", client, "--advertise-client-urls", client,
			"--listen-peer-urls", peers[i], "--initial-advertise-peer-urls", peers[i],
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new", "--initial-cluster-token", "faults",
			"--log-level", "error")
		members = append(members, &member{Process: p, name: name, client: client})
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
	*harness.Process
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

// onEtcd is the storage flag of a replica on the etcd cluster.
func onEtcd(etcd []*member) []string {
	var urls []string
	for _, m := range etcd {
		urls = append(urls, m.client)
	}
	return []string{"--etcd-servers", strings.Join(urls, ",")}
}

// startReplica runs the project's apiserver on the storage the flags
// storage name (onEtcd, or --datastore-endpoint), in standalone mode with
// the token the replicas share.
func startReplica(t *testing.T, name, bin, state string, storage []string) *replica {
	t.Helper()
	kubeconfig := filepath.Join(state, name+".kubeconfig")
	os.Remove(kubeconfig)
	args := append([]string{"--secure-port", fmt.Sprint(harness.FreePort(t))}, storage...)
	args = append(args,
		"--token-file", filepath.Join(state, "token"), "--cert-dir", filepath.Join(state, name+"-certs"),
		"--write-kubeconfig", kubeconfig,
		"--shutdown-delay-duration", "2s", "--shutdown-send-retry-after")
	p := harness.Start(t, state, bin, args...)
	r := &replica{Process: p, name: name}
	if !harness.WaitUntil(2*time.Minute, func() bool {
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
		t.Fatalf("replica %s not ready:\n%s", name, p.Out.String())
	}
	return r
}
