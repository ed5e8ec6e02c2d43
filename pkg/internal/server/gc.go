package server

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
)

// The garbage collector's defaults for the server. With Go's GOGC=100 a
// collection starts whenever the heap has grown by as much as is live: an
// apiserver whose live heap is a few tens of MB while it serves writes
// collects several times a second, and marking and the allocations it slows
// took about a quarter of the CPU of a create (docs/benchmarks.md, notes on
// item 4). Unless GOGC is set, the server lets the heap grow by up to
// gcHeadroom past what is live before collecting, within gcPercentMin and
// gcPercentMax of the live heap (gcPercent, adjusted after every
// collection): a small heap is collected up to four times less often, a
// large one as with GOGC=100. Unless GOMEMLIMIT is set, the memory limit of
// the container (its cgroup) caps the heap: nine tenths of it is the
// runtime's soft limit, under which it collects as often as it must
// whatever the percentage.
const (
	gcHeadroom   = 256 << 20
	gcPercentMin = 100
	gcPercentMax = 400
	// memoryLimitShare is the part of the container's memory limit given to
	// the Go runtime's soft limit (the rest: memory outside it and slack).
	memoryLimitShare = 0.9
)

// gcPercent is the GOGC the server uses after a collection left live bytes
// live: the heap may grow by gcHeadroom, as a percentage of the live heap,
// within [gcPercentMin, gcPercentMax].
func gcPercent(live uint64) int {
	if live == 0 {
		return gcPercentMax
	}
	p := uint64(gcHeadroom) * 100 / live
	switch {
	case p > gcPercentMax:
		return gcPercentMax
	case p < gcPercentMin:
		return gcPercentMin
	}
	return int(p)
}

// cgroupMemoryFiles are where a container's memory limit is read: cgroup
// v2, then v1.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// cgroupMemoryLimit is the memory limit of the process's cgroup, from the
// first of files that exists, and whether there is one ("max" in v2, or
// v1's page-rounded maximum, is none).
func cgroupMemoryLimit(files []string) (int64, bool, error) {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return 0, false, err
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("%s: %q is not a number of bytes or max", f, s)
		}
		if n <= 0 || n >= 1<<62 { // v1 writes an unlimited group as about 2^63
			return 0, false, nil
		}
		return n, true, nil
	}
	return 0, false, nil
}

// gcSettings are what tuneGC applies: whether to adjust GOGC after each
// collection, and the soft memory limit to set (0: none).
type gcSettings struct {
	adaptive    bool
	memoryLimit int64
}

// gcSettingsFor decides the settings from the environment (getenv) and the
// cgroup's memory limit: what GOGC or GOMEMLIMIT set is left as it is.
func gcSettingsFor(getenv func(string) string, files []string) (gcSettings, error) {
	s := gcSettings{adaptive: getenv("GOGC") == ""}
	if getenv("GOMEMLIMIT") != "" {
		return s, nil
	}
	limit, ok, err := cgroupMemoryLimit(files)
	if err != nil || !ok {
		return s, err
	}
	s.memoryLimit = int64(float64(limit) * memoryLimitShare)
	return s, nil
}

// tuneGC applies the server's garbage collector defaults (see gcHeadroom)
// to this process.
func tuneGC() error {
	s, err := gcSettingsFor(os.Getenv, cgroupMemoryFiles)
	if s.memoryLimit > 0 {
		debug.SetMemoryLimit(s.memoryLimit)
	}
	if s.adaptive {
		debug.SetGCPercent(gcPercentMax) // until the first collection measures the live heap
		startGCTuner()
	}
	return err
}

// gcTuner sets GOGC from the live heap after each collection: its
// finalizer runs once the collector found it unreachable, then arms a new
// one for the next collection.
type gcTuner struct{ sample []metrics.Sample }

func startGCTuner() {
	t := &gcTuner{sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.arm()
}

func (t *gcTuner) arm() {
	sentinel := new([16]byte) // not tiny-allocated: its finalizer runs
	runtime.SetFinalizer(sentinel, func(*[16]byte) { t.collected() })
}

func (t *gcTuner) collected() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		debug.SetGCPercent(gcPercent(t.sample[0].Value.Uint64()))
	}
	t.arm()
}
