package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// storedSize is the size of one Widget (a key under prefix naming the
// widgets resource) the generated apiserver stored: its etcd value,
// encoding included.
func storedSize(ctx context.Context, etcdURL, prefix string) (int, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return 0, err
	}
	for _, kv := range resp.Kvs {
		if !strings.Contains(string(kv.Key), "/widgets/") {
			continue
		}
		v, err := cli.Get(ctx, string(kv.Key))
		if err != nil {
			return 0, err
		}
		if len(v.Kvs) == 1 {
			return len(v.Kvs[0].Value), nil
		}
	}
	return 0, fmt.Errorf("no Widget stored under %s", prefix)
}

// rawCreates writes n values of size bytes with c concurrent writers, as
// the apiserver's storage writes a create: one transaction putting the key
// if it does not exist (mod revision 0), on one client connection. It is
// the ceiling a create through any apiserver on this etcd stays under.
func rawCreates(ctx context.Context, etcdURL, prefix string, size, n, c int) (time.Duration, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	value := string(make([]byte, size))
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				key := fmt.Sprintf("%s/%d", prefix, i)
				resp, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).Then(clientv3.OpPut(key, value)).Commit()
				if err == nil && !resp.Succeeded {
					err = fmt.Errorf("%s exists", key)
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start), firstErr
}
