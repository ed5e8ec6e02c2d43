// Package freeport picks free loopback TCP ports for servers started by
// this process (an embedded etcd, test and benchmark servers).
//
// A port is free when the kernel hands it out, but it is given back as soon
// as the probing listener closes, and the next probe often gets the same
// one. Ports picked here are therefore remembered for the life of the
// process and never handed out twice, so two servers started one after the
// other cannot be given the same port. Another process can still take a
// port before its server listens; callers that picked a port retry then.
package freeport

import (
	"net"
	"sync"
)

var (
	mu    sync.Mutex
	given = map[int]bool{}
)

// Port returns a free loopback port not returned before in this process.
func Port() (int, error) {
	ports, err := Ports(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// Ports returns n distinct free loopback ports, none returned before in
// this process.
func Ports(n int) ([]int, error) {
	mu.Lock()
	defer mu.Unlock()
	ports := make([]int, 0, n)
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		// Held open until all n are chosen, so the kernel does not repeat
		// one of them.
		defer l.Close()
		p := l.Addr().(*net.TCPAddr).Port
		if given[p] {
			continue
		}
		given[p] = true
		ports = append(ports, p)
	}
	return ports, nil
}
