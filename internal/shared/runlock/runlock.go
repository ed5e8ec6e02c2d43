// Package runlock keeps one `run local` per project. The instance that runs
// holds an exclusive flock(2) on .apiserver-boot/run-local.lock, which also
// records who it is (pid, ports, kubeconfig); another instance is refused
// before it touches anything, naming the one that runs. The kernel releases
// the lock when its process ends, however it ends (kill -9 too), so a record
// left behind never blocks: a lock that can be taken means nothing runs.
package runlock

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/private"
)

// FileName is the lock and record of the running instance, in the project's
// state folder (private.StateDir).
const FileName = "run-local.lock"

// Record is what the running instance says about itself.
type Record struct {
	PID int `json:"pid"`
	// APIServer is the apiserver's URL, e.g. https://127.0.0.1:9443.
	APIServer string `json:"apiserver"`
	// ControllerManager is the address of the controller-manager's
	// /healthz, /readyz and /metrics; empty when it does not run.
	ControllerManager string `json:"controllerManager,omitempty"`
	// Etcd is "embedded" or the --etcd-servers URLs.
	Etcd string `json:"etcd"`
	// Kubeconfig is the kubeconfig run local writes, as given (./kubeconfig).
	Kubeconfig string    `json:"kubeconfig"`
	Watch      bool      `json:"watch,omitempty"`
	Started    time.Time `json:"started"`
}

// Lock is the held lock of the running instance.
type Lock struct {
	f *os.File
}

// HeldError is returned by Acquire when another instance runs.
type HeldError struct {
	// Path is the lock file.
	Path string
	// Record is the running instance's record; nil when it could not be read.
	Record *Record
	// ReadErr says why Record is nil.
	ReadErr error
}

func (e *HeldError) Error() string {
	r := e.Record
	if r == nil {
		return fmt.Sprintf("run local is already running in this project (it holds %s, whose record could not be read: %v): stop it first (Ctrl-C in its terminal; `fuser %s` names its pid)", e.Path, e.ReadErr, e.Path)
	}
	parts := []string{fmt.Sprintf("pid %d", r.PID), "apiserver " + r.APIServer}
	if r.ControllerManager != "" {
		parts = append(parts, "controller-manager "+r.ControllerManager)
	}
	if r.Etcd != "" && r.Etcd != "embedded" {
		parts = append(parts, "etcd "+r.Etcd)
	}
	parts = append(parts, "kubeconfig "+r.Kubeconfig)
	if r.Watch {
		parts = append(parts, "--watch")
	}
	if !r.Started.IsZero() {
		parts = append(parts, "since "+r.Started.Local().Format("15:04:05"))
	}
	return fmt.Sprintf("run local is already running in this project (%s): stop it first (Ctrl-C in its terminal, or kill %d)", strings.Join(parts, ", "), r.PID)
}

// Acquire takes the lock of the project whose state folder is stateDir
// (created 0700 if missing) and writes rec in it, without waiting: when
// another process holds it, it returns a *HeldError naming that process and
// changes nothing.
func Acquire(stateDir string, rec Record) (*Lock, error) {
	if err := private.Dir(stateDir); err != nil {
		return nil, err
	}
	path := filepath.Join(stateDir, FileName)
	// Not O_TRUNC: the record belongs to whoever holds the lock.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, held(path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		f.Close()
		return nil, err
	}
	b = append(b, '\n')
	// One write after truncating: a reader sees nothing or the whole
	// record, and held retries on nothing.
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt(b, 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// held reads the record of the instance that holds path. The holder writes
// it just after locking: an empty or partial record is read again for a
// moment.
func held(path string) *HeldError {
	e := &HeldError{Path: path}
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err == nil {
			var r Record
			if err = json.Unmarshal(b, &r); err == nil && r.PID > 0 {
				e.Record, e.ReadErr = &r, nil
				return e
			}
			if err == nil {
				err = errors.New("no pid in it")
			}
		}
		e.ReadErr = err
		if time.Now().After(deadline) {
			return e
		}
	}
}

// Release empties the record and releases the lock. The file stays: removing
// it could let a process that opened it before the removal lock the removed
// file while another locks a new one.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	return err
}

// Holder says whether another process holds a flock(2) on path (as etcd's
// bbolt database is held by the etcd that has it open), and when /proc/locks
// names it, which process. A missing file is held by nobody.
func Holder(path string) (held bool, pid int, err error) {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return false, 0, nil
		}
		return false, 0, err
	}
	defer f.Close()
	// A shared lock conflicts only with an exclusive one, a writer's.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false, 0, nil
	} else if !errors.Is(err, syscall.EWOULDBLOCK) {
		return false, 0, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return true, 0, nil
	}
	return true, lockOwner(st.Dev, st.Ino), nil
}

// HeldBy says who holds an exclusive flock on path: "process 1234
// (/path/to/exe)", or "another process" when its pid cannot be read; held
// is false when nobody does (or path cannot be read: the caller's own use of
// it will say why).
func HeldBy(path string) (who string, pid int, held bool) {
	held, pid, err := Holder(path)
	if err != nil || !held {
		return "", 0, false
	}
	if pid == 0 {
		return "another process", 0, true
	}
	who = fmt.Sprintf("process %d", pid)
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil {
		who += " (" + exe + ")"
	}
	return who, pid, true
}

// lockOwner finds the pid of the exclusive flock on the file (dev, ino) in
// /proc/locks; 0 when not found (not Linux, another pid namespace).
func lockOwner(dev, ino uint64) int {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	// Linux's new_encode_dev split: the minor's low 8 bits, the major's 12
	// bits, the minor's high bits.
	major := (dev >> 8) & 0xfff
	minor := (dev & 0xff) | ((dev >> 12) & 0xfff00)
	want := fmt.Sprintf("%02x:%02x:%d", major, minor, ino)
	// On an overlay file system the lock is on the inode of the layer
	// below, whose device differs: then a lone match of the inode number.
	sameIno := []int{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF
		fields := strings.Fields(s.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[3] != "WRITE" {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil {
			continue
		}
		if fields[5] == want {
			return pid
		}
		if strings.HasSuffix(fields[5], fmt.Sprintf(":%d", ino)) {
			sameIno = append(sameIno, pid)
		}
	}
	if len(sameIno) == 1 {
		return sameIno[0]
	}
	return 0
}
