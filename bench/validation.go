package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apiserver-boot/apiserver-boot/bench/internal/proc"
)

// Item 9: what validating what the client sent costs a create. The schema
// validation of one create, in process (pkg/internal/server's
// BenchmarkSchemaValidationCreate), with the request body kept and read back
// (sent.go) against the same validation of the Go object's encoding alone,
// the path before the body was kept.

// validationPairs are the sub-benchmarks compared: what runs, and its
// reference in the same run.
var validationPairs = []struct{ measure, value, ref, refName string }{
	{"schema validation of a create, body kept, no zero value in it (not parsed)", "sent", "encoded", "the Go object's encoding alone"},
	{"schema validation of a create, body kept, a zero value restored from it", "sent_with_a_zero_value", "encoded", "the Go object's encoding alone"},
	{"schema validation of a create, a kind with fields without omitempty (every body parsed; a default filled in)", "absent-fields_sent", "absent-fields_encoded", "the same kind, the Go object's encoding alone"},
}

var benchLine = regexp.MustCompile(`^BenchmarkSchemaValidationCreate/(\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op\s+\d+ B/op\s+(\d+) allocs/op`)

// validation is item 9.
func (b *bench) validation() error {
	test := filepath.Join(b.tmp, "apiserver.test")
	if _, err := proc.Command(b.ctx, b.repo, nil, "go", "test", "-c", "-o", test, "./pkg/internal/server"); err != nil {
		return err
	}
	b.logf("BenchmarkSchemaValidationCreate (pkg/internal/server), %d runs after one warm-up run", b.runs)
	times, allocs := map[string][]time.Duration{}, map[string]string{}
	for run := 0; run <= b.runs; run++ {
		out, err := proc.Command(b.ctx, b.repo, nil, test, "-test.run", "^$", "-test.bench", "^BenchmarkSchemaValidationCreate$",
			"-test.benchtime", "3000x", "-test.benchmem")
		if err != nil {
			return err
		}
		for _, line := range strings.Split(out, "\n") {
			m := benchLine.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil {
				continue
			}
			ns, err := strconv.ParseFloat(m[3], 64)
			if err != nil {
				return fmt.Errorf("%q: %w", line, err)
			}
			if run > 0 {
				times[m[1]] = append(times[m[1]], time.Duration(ns))
			}
			allocs[m[1]] = m[4]
		}
	}
	for _, p := range validationPairs {
		if len(times[p.value]) == 0 || len(times[p.ref]) == 0 {
			return fmt.Errorf("BenchmarkSchemaValidationCreate printed no %s or %s", p.value, p.ref)
		}
		v, r := median(times[p.value]), median(times[p.ref])
		b.add(row{Item: "9", Measure: p.measure,
			Value: fmt.Sprintf("%.1f µs, %s allocs", float64(v.Nanoseconds())/1000, allocs[p.value]),
			Ref:   fmt.Sprintf("%.1f µs, %s allocs (%s)", float64(r.Nanoseconds())/1000, allocs[p.ref], p.refName),
			Ratio: fmt.Sprintf("%.2fx", float64(v)/float64(r))})
	}
	b.note("9", "in process, one goroutine: the test binary of pkg/internal/server runs BenchmarkSchemaValidationCreate %d times after one warm-up run, 3,000 validations per sub-benchmark; medians of the runs; allocations per validation are exact, the times follow the machine's load", b.runs)
	return nil
}
