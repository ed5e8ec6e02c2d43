package testdb

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// The servers not closed yet, killed and closed when the test process is
// interrupted (Ctrl-C, SIGTERM), which runs no test cleanup: the servers
// would die with the process anyway (their parent-death signal), but their
// folders would stay.
var (
	liveMu sync.Mutex
	live   = map[*Server]bool{}
	notify sync.Once
)

func track(s *Server) {
	notify.Do(func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt, syscall.SIGTERM)
		go func() {
			sig := <-c
			closeAll()
			// End as the signal would have: with no other handler of
			// it, the runtime's own (another, a benchmark's say, gets
			// it instead and ends the process its way).
			signal.Stop(c)
			_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		}()
	})
	liveMu.Lock()
	live[s] = true
	liveMu.Unlock()
}

func untrack(s *Server) {
	liveMu.Lock()
	delete(live, s)
	liveMu.Unlock()
}

// closeAll kills every live server, and the command Run is running for it
// (an install that runs a server of its own, say), and closes it.
func closeAll() {
	liveMu.Lock()
	servers := make([]*Server, 0, len(live))
	for s := range live {
		servers = append(servers, s)
	}
	liveMu.Unlock()
	for _, s := range servers {
		s.mu.Lock()
		setup := s.setup
		s.mu.Unlock()
		if setup != nil {
			_ = setup.Signal(syscall.SIGKILL)
		}
		_ = s.Kill()
		_ = s.Close()
	}
}
