package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apiserver-boot/apiserver-boot/bench/internal/proc"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
)

// Item 10, second part: the generated apiserver built as go build and
// build container build it, and as run local builds it when it stores in
// etcd: without kine (the build tag datastore.NoKineTag, which leaves
// pkg/internal/storage's kine files out and keeps its flags): the same
// apiserver, every other file the same.

// kineBuild builds the serving project's apiserver with and without kine,
// alternating, and adds the size and build time rows.
func (b *bench) kineBuild(p *servingProject) error {
	bins := map[bool]string{true: filepath.Join(b.tmp, "apiserver-kine"), false: filepath.Join(b.tmp, "apiserver-nokine")}
	took := map[bool][]time.Duration{}
	// A first untimed round compiles what the tag changes; then both
	// builds find every package in the build cache and link.
	for i := -1; i < b.runs; i++ {
		for _, kine := range []bool{true, false} {
			args := []string{"build", "-o", bins[kine], "-ldflags=-w"} // as run local links
			if !kine {
				args = append(args, "-tags="+datastore.NoKineTag) // as run local builds on etcd
			}
			// go build does nothing when the output is up to date: link anew.
			if err := os.Remove(bins[kine]); err != nil && !os.IsNotExist(err) {
				return err
			}
			d, _, err := proc.TimedCommand(b.ctx, p.dir, nil, "go", append(args, "./cmd/apiserver")...)
			if err != nil {
				return err
			}
			if i >= 0 {
				took[kine] = append(took[kine], d)
			}
		}
	}
	size := map[bool]float64{}
	for kine, bin := range bins {
		m, err := proc.Command(b.ctx, b.tmp, nil, "go", "version", "-m", bin)
		if err != nil {
			return err
		}
		if strings.Contains(m, "github.com/k3s-io/kine") != kine {
			return fmt.Errorf("%s: kine linked: %v, want %v", bin, !kine, kine)
		}
		st, err := os.Stat(bin)
		if err != nil {
			return err
		}
		size[kine] = float64(st.Size()) / 1e6
	}
	b.add(row{Item: "10", Measure: "storage: binary size of the generated apiserver, with kine", Value: fmt.Sprintf("%.1f MB", size[true]),
		Ref: fmt.Sprintf("%.1f MB (without kine)", size[false]), Ratio: fmt.Sprintf("%.2fx", size[true]/size[false])})
	with, without := median(took[true]), median(took[false])
	b.add(row{Item: "10", Measure: "storage: go build of the generated apiserver, warm build cache, with kine", Value: secs(with),
		Ref: secs(without) + " (without kine)", Ratio: fmt.Sprintf("%.2fx", ratio(with, without))})
	b.note("10", "builds: `go build -o BIN -ldflags=-w ./cmd/apiserver` in the serving project (the environment's CGO_ENABLED and GOFLAGS, and without DWARF, as run local builds), with kine, as go build and build container build it, and without it, as run local builds on etcd (`-tags="+datastore.NoKineTag+"`: pkg/internal/storage's kine files left out, its flags kept); `go version -m` shows github.com/k3s-io/kine in the first binary only. Runs alternate after one untimed round, so both find every package compiled and the time is mostly the link (the output removed before each build, which go build would otherwise leave as up to date): with kine %s, without %s. What kine adds to a first build with an empty cache (its packages, pgx, the MySQL driver, modernc.org/sqlite and modernc.org/libc) is not measured here: docs/storage.md gives a measurement by hand", millis(took[true]), millis(took[false]))
	return nil
}
