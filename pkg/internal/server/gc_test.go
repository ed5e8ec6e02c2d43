package server

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, gcPercentMax},
		{16 << 20, gcPercentMax},       // 256 MiB headroom is 1600%: capped
		{64 << 20, 400},                // exactly 4x
		{128 << 20, 200},               // 256 MiB over 128 MiB live
		{200 << 20, 128},               // 256/200
		{256 << 20, gcPercentMin},      // as GOGC=100
		{4 << 30, gcPercentMin},        // a large heap: never below 100
		{(256 << 20) * 100 / 150, 150}, // in between
	} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

func TestCgroupMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := filepath.Join(dir, "missing")
	v2 := write("memory.max", "536870912\n")
	v2max := write("memory.max.unlimited", "max\n")
	v1 := write("memory.limit_in_bytes", "1073741824\n")
	v1max := write("memory.limit_in_bytes.unlimited", "9223372036854771712\n")
	bad := write("memory.max.bad", "lots\n")
	for _, c := range []struct {
		files   []string
		want    int64
		ok      bool
		errPart string
	}{
		{[]string{missing, missing}, 0, false, ""},
		{[]string{v2, v1}, 512 << 20, true, ""},
		{[]string{missing, v1}, 1 << 30, true, ""},
		{[]string{v2max, v1}, 0, false, ""},
		{[]string{missing, v1max}, 0, false, ""},
		{[]string{bad}, 0, false, bad + `: "lots" is not a number of bytes or max`},
	} {
		got, ok, err := cgroupMemoryLimit(c.files)
		if c.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), c.errPart) {
				t.Errorf("%v: error %v, want one containing %q", c.files, err, c.errPart)
			}
			continue
		}
		if err != nil || got != c.want || ok != c.ok {
			t.Errorf("%v: %d, %t, %v; want %d, %t", c.files, got, ok, err, c.want, c.ok)
		}
	}
}

func TestGCSettingsFor(t *testing.T) {
	limit := filepath.Join(t.TempDir(), "memory.max")
	if err := os.WriteFile(limit, []byte("1000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, c := range []struct {
		name string
		env  map[string]string
		want gcSettings
	}{
		{"nothing set: adaptive GOGC under nine tenths of the container's limit", nil, gcSettings{adaptive: true, memoryLimit: 900000000}},
		{"GOGC set: kept", map[string]string{"GOGC": "50"}, gcSettings{memoryLimit: 900000000}},
		{"GOMEMLIMIT set: kept", map[string]string{"GOMEMLIMIT": "2GiB"}, gcSettings{adaptive: true}},
		{"both set", map[string]string{"GOGC": "off", "GOMEMLIMIT": "2GiB"}, gcSettings{}},
	} {
		got, err := gcSettingsFor(env(c.env), []string{limit})
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

// The tuner sets GOGC after a collection (from then on, in this test
// process, GOGC stays within [gcPercentMin, gcPercentMax]).
func TestGCTunerSetsPercentAfterCollection(t *testing.T) {
	debug.SetGCPercent(37)
	startGCTuner()
	for i := 0; i < 100; i++ {
		runtime.GC() // the sentinel's finalizer runs after a collection, on the finalizer goroutine
		runtime.Gosched()
		p := debug.SetGCPercent(37)
		if p != 37 {
			if p < gcPercentMin || p > gcPercentMax {
				t.Fatalf("GOGC after a collection: %d, want within [%d, %d]", p, gcPercentMin, gcPercentMax)
			}
			debug.SetGCPercent(p)
			return
		}
	}
	t.Fatal("GOGC still 37 after 100 collections: the tuner did not run")
}
