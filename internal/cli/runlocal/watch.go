package runlocal

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/codegen"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// debounce is how long run local --watch waits after the last change before
// it rebuilds, so that an editor's burst of writes gives one rebuild.
const debounce = 200 * time.Millisecond

// watchAndReload is run local --watch once the servers are ready: on a
// change to the sources under pkg/apis (the types and their hooks), it
// regenerates and rebuilds while the running servers keep serving, then
// restarts them on the same etcd data and kubeconfig.
func (o *Options) watchAndReload(ctx context.Context, s *localServers) error {
	out, info, errOut := s.out, s.info, s.con.Err()
	roots := watchedRoots(s.root)
	w, built, err := watchSources(roots)
	if err != nil {
		return fmt.Errorf("--watch: %w", err)
	}
	defer w.Close()
	if len(roots) > 1 {
		fmt.Fprintln(info, "Watching pkg/apis and config/crd: a change regenerates, rebuilds and restarts.")
	} else {
		fmt.Fprintln(info, "Watching pkg/apis: a change regenerates, rebuilds and restarts.")
	}
	var fire <-chan time.Time
	var timer *time.Timer
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(info, "Stopping...")
			return nil
		case c := <-s.exited:
			// The others are stopped too; a change starts them again.
			s.stop()
			fmt.Fprintf(out, "%s exited: %v. Waiting for a change under pkg/apis to rebuild and start again.\n", c.name, c.Err())
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					_ = watchTree(w, ev.Name)
					// Files may have been written into it before the watch.
				} else if !isWatchedSource(ev.Name) {
					continue
				}
			} else if !isWatchedSource(ev.Name) {
				continue
			}
			if timer == nil {
				timer = time.NewTimer(debounce)
			} else {
				timer.Reset(debounce)
			}
			fire = timer.C
		case err, ok := <-w.Errors:
			if !ok {
				continue
			}
			fmt.Fprintf(errOut, "warning: watching pkg/apis: %v\n", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: compare every source with the last build.
				if timer == nil {
					timer = time.NewTimer(debounce)
				} else {
					timer.Reset(debounce)
				}
				fire = timer.C
			}
		case <-fire:
			fire = nil
			now, err := snapshotSources(roots...)
			if err != nil {
				fmt.Fprintf(errOut, "warning: reading pkg/apis: %v\n", err)
				continue
			}
			changed := changedSources(s.root, built, now)
			if len(changed) == 0 {
				continue // written back as it was
			}
			built = o.reload(ctx, s, now, changed)
		}
	}
}

// reload regenerates, rebuilds and restarts for the sources now, and returns
// what the next change is compared with: now, with generate's own writes.
func (o *Options) reload(ctx context.Context, s *localServers, now map[string][32]byte, changed []string) map[string][32]byte {
	out, info, errOut := s.out, s.info, s.con.Err()
	start := time.Now()
	fmt.Fprintf(info, "Changed: %s. Regenerating and rebuilding; the running apiserver keeps serving...\n", strings.Join(changed, ", "))
	var genTime time.Duration
	if o.Generate {
		wrote, err := codegen.WithProgress(s.con, s.root, generators.GenerateOptions{})
		genTime = time.Since(start)
		// Files generate wrote under pkg/apis (conversion stubs) are not
		// changes of the user's: take them as they are now.
		apis := filepath.Join(s.root, project.APIs()) + string(filepath.Separator)
		for _, f := range wrote {
			if strings.HasPrefix(f, apis) && isWatchedSource(f) {
				if h, ok := hashFile(f); ok {
					now[f] = h
				} else {
					delete(now, f)
				}
			}
		}
		if err != nil {
			fmt.Fprintf(out, "Reload failed: generate: %v\n%s\n", err, s.stillServing())
			return now
		}
		fmt.Fprintf(info, "Generated in %s.\n", genTime.Round(time.Millisecond))
	}
	// The new binaries go to bin/.next: bin/ keeps the build that serves
	// until the new one has started.
	next := filepath.Join(s.root, "bin", ".next")
	buildTime, err := buildBinariesInto(ctx, s.con, s.root, filepath.Join("bin", ".next"), o)
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(out, "Reload failed: %v\n%s\n", err, s.stillServing())
		}
		return now
	}
	if ctx.Err() != nil {
		return now
	}
	fmt.Fprintln(info, "Restarting the apiserver and controller-manager...")
	s.stop()
	ready, err := s.startFrom(ctx, next)
	if err != nil {
		if ctx.Err() != nil {
			return now
		}
		s.stop()
		fmt.Fprintf(out, "Reload failed: the new build did not start: %v\n", err)
		// The build of before serves again.
		if _, err := s.start(ctx); err != nil {
			s.stop()
			if ctx.Err() == nil {
				fmt.Fprintf(out, "The previous build did not start again either: %v\nNothing is running; save a fix to retry.\n", err)
			}
			return now
		}
		fmt.Fprintln(out, "The previous build serves again; save a fix to retry.")
		return now
	}
	// The new build is the one that serves: it replaces bin/'s (the running
	// processes keep their files).
	for _, name := range []string{"apiserver", "controller-manager"} {
		if _, err := os.Stat(filepath.Join(next, name)); err != nil {
			continue
		}
		if err := os.Rename(filepath.Join(next, name), filepath.Join(s.root, "bin", name)); err != nil {
			fmt.Fprintf(errOut, "warning: %v\n", err)
		}
	}
	fmt.Fprintf(out, "Reloaded in %s (generate %s, build %s, apiserver ready in %s).\n", time.Since(start).Round(time.Millisecond),
		genTime.Round(time.Millisecond), buildTime.Round(time.Millisecond), ready.Round(time.Millisecond))
	return now
}

// stillServing says what serves after a failed reload.
func (s *localServers) stillServing() string {
	if len(s.children) == 0 {
		return "Nothing is running (it exited); save a fix to retry."
	}
	return "The running apiserver keeps serving the previous build; save a fix to retry."
}

// watchSources watches every folder under roots, and hashes the sources
// there as they are now.
func watchSources(roots []string) (*fsnotify.Watcher, map[string][32]byte, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, nil, err
	}
	for _, dir := range roots {
		if err := watchTree(w, dir); err != nil {
			w.Close()
			return nil, nil, err
		}
	}
	built, err := snapshotSources(roots...)
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	return w, built, nil
}

// watchTree watches dir and every folder under it.
func watchTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return w.Add(path)
		}
		return nil
	})
}

// crdManifests is the folder of the kinds' CRD manifests (kubebuilder's
// config/crd/bases and its siblings): a manifest there is a kind's schema.
var crdManifests = filepath.Join("config", "crd")

// watchedRoots are the folders --watch follows: pkg/apis, and config/crd
// when the project has it.
func watchedRoots(root string) []string {
	roots := []string{filepath.Join(root, project.APIs())}
	if fi, err := os.Stat(filepath.Join(root, crdManifests)); err == nil && fi.IsDir() {
		roots = append(roots, filepath.Join(root, crdManifests))
	}
	return roots
}

// isWatchedSource says whether a change to path can change what the
// apiserver serves: a Go source of the user's (types, hooks, conversions),
// not a generated file, a test or an editor's temporary file; or a CRD
// manifest under config/crd.
func isWatchedSource(path string) bool {
	name := filepath.Base(path)
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "#") {
		return false
	}
	if ext := filepath.Ext(name); ext == ".yaml" || ext == ".yml" {
		return strings.Contains(filepath.ToSlash(path), "/"+filepath.ToSlash(crdManifests)+"/")
	}
	return strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") && !strings.HasPrefix(name, "zz_generated")
}

// snapshotSources hashes every watched source under the folders dirs.
func snapshotSources(dirs ...string) (map[string][32]byte, error) {
	files := map[string][32]byte{}
	for _, dir := range dirs {
		if err := snapshotInto(files, dir); err != nil {
			return nil, err
		}
	}
	return files, nil
}

func snapshotInto(files map[string][32]byte, dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil // removed while walking
			}
			return err
		}
		if d.IsDir() {
			if path != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !isWatchedSource(path) {
			return nil
		}
		if h, ok := hashFile(path); ok {
			files[path] = h
		}
		return nil
	})
}

func hashFile(path string) ([32]byte, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return [32]byte{}, false
	}
	return sha256.Sum256(b), true
}

// changedSources lists the files added, changed or removed between two
// snapshots, relative to root.
func changedSources(root string, before, after map[string][32]byte) []string {
	var changed []string
	for f, h := range after {
		if old, ok := before[f]; !ok || old != h {
			changed = append(changed, f)
		}
	}
	for f := range before {
		if _, ok := after[f]; !ok {
			changed = append(changed, f)
		}
	}
	for i, f := range changed {
		if rel, err := filepath.Rel(root, f); err == nil {
			changed[i] = rel
		}
	}
	sort.Strings(changed)
	return changed
}
