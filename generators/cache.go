package generators

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/private"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// The generate cache. A run reads the hand-written files under pkg/apis, the
// API of the latest recorded release (pkg/apis/testdata/<release>/api.yaml),
// PROJECT, the license header, go.mod and go.sum (which fix every dependency
// the universe is loaded from), and runs the generators compiled into this
// binary. When none of these changed since the last run, and every file that
// run produced still holds what it wrote, running again would write nothing:
// the cache record says so in milliseconds instead of loading and
// type-checking the packages again (seconds). Anything else is a full run.

// CacheFile is the record of the last run, relative to the project root.
var CacheFile = filepath.Join(private.StateDir, "generate-cache.json")

// CacheRecord is what a run leaves for the next one.
type CacheRecord struct {
	// Inputs hashes everything the run read.
	Inputs string `json:"inputs"`
	// Outputs maps every produced file (relative path) to the hash of its content.
	Outputs map[string]string `json:"outputs"`
	// Warnings are replayed by a cached run: they depend on the inputs only.
	Warnings []string `json:"warnings,omitempty"`
	// Reads are the folders of main-module packages outside pkg/apis that
	// the run's package load read (a package the types import): inputs too.
	Reads []string `json:"reads,omitempty"`
}

// PreviousReads are the Reads of the last run's record, for InputsHash.
func PreviousReads(root string) []string {
	if rec, err := readCacheRecord(root); err == nil && rec != nil {
		return rec.Reads
	}
	return nil
}

// InputsHash hashes what a run of this binary over the project at root reads:
// the files above, and the Go files of reads, the folders (relative to root)
// of main-module packages outside pkg/apis the last run's load read.
func InputsHash(root string, reads []string) (string, error) {
	h := sha256.New()
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			// The generators and templates are compiled in: a rebuilt binary is a new generator.
			fmt.Fprintf(h, "generator %s %d %d\n", exe, st.Size(), st.ModTime().UnixNano())
		}
	}
	inputs := []string{"PROJECT", filepath.FromSlash(project.BoilerplateFile), "go.mod", "go.sum"}
	err := filepath.WalkDir(filepath.Join(root, project.APIs()), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		name := d.Name()
		if !d.IsDir() && name == SnapshotFile && filepath.Base(filepath.Dir(filepath.Dir(path))) == "testdata" {
			// A recorded release: generate checks the API against the latest.
			rel, _ := filepath.Rel(root, path)
			inputs = append(inputs, rel)
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, "zz_generated") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		inputs = append(inputs, rel)
		return nil
	})
	if err != nil {
		return "", err
	}
	manifests, err := manifestInputs(root, inputs)
	if err != nil {
		return "", err
	}
	inputs = append(inputs, manifests...)
	for _, dir := range reads {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil && !os.IsNotExist(err) {
			return "", err
		}
		fmt.Fprintf(h, "folder %s %d\n", dir, len(entries)) // a file added or removed counts
		for _, e := range entries {
			if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				inputs = append(inputs, filepath.Join(dir, n))
			}
		}
	}
	sort.Strings(inputs)
	for _, rel := range inputs {
		sum, err := fileHash(filepath.Join(root, rel))
		if os.IsNotExist(err) {
			sum = "absent"
		} else if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %s\n", rel, sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// manifestMarker finds the path of a +crd:manifest marker in a Go file.
var manifestMarker = regexp.MustCompile(`\+` + model.ManifestMarker + `=(?:"([^"]+)"|(\S+))`)

// manifestInputs are the CRD manifests a run may read (package
// crdschema.LoadManifests): every YAML file under config/crd (kubebuilder's
// config/crd/bases/<group>_<plural>.yaml; one added or removed changes the
// list, so the hash), and the paths
// +crd:manifest markers in the Go files of inputs name.
func manifestInputs(root string, inputs []string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(filepath.Join(root, "config", "crd"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			rel, _ := filepath.Rel(root, path)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, rel := range inputs {
		if !strings.HasSuffix(rel, ".go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			continue
		}
		for _, m := range manifestMarker.FindAllSubmatch(b, -1) {
			p := string(m[1]) + string(m[2])
			if !slices.Contains(out, filepath.Clean(filepath.FromSlash(p))) {
				out = append(out, filepath.Clean(filepath.FromSlash(p)))
			}
		}
	}
	return out, nil
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// readCacheRecord reads the record of the last run, nil if there is none.
func readCacheRecord(root string) (*CacheRecord, error) {
	b, err := os.ReadFile(filepath.Join(root, CacheFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var rec CacheRecord
	if json.Unmarshal(b, &rec) != nil {
		return nil, nil // unreadable: as if absent
	}
	return &rec, nil
}

func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// UpToDate tells whether a run with these inputs would write nothing: the
// record is for the same inputs and every file it lists is unchanged.
func UpToDate(root, inputs string) (*CacheRecord, bool) {
	b, err := os.ReadFile(filepath.Join(root, CacheFile))
	if err != nil {
		return nil, false
	}
	var rec CacheRecord
	if json.Unmarshal(b, &rec) != nil || rec.Inputs != inputs || len(rec.Outputs) == 0 {
		return nil, false
	}
	for rel, want := range rec.Outputs {
		if got, err := fileHash(filepath.Join(root, rel)); err != nil || got != want {
			return nil, false
		}
	}
	return &rec, true
}

// SaveCache records a successful run.
func SaveCache(root, inputs string, reads, outputs, warnings []string) error {
	rec := CacheRecord{Inputs: inputs, Outputs: map[string]string{}, Warnings: warnings, Reads: reads}
	for _, f := range outputs {
		sum, err := fileHash(f)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, f)
		if err != nil {
			return err
		}
		rec.Outputs[filepath.ToSlash(rel)] = sum
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := private.Dir(filepath.Join(root, private.StateDir)); err != nil {
		return err
	}
	return files.WriteAtomic(filepath.Join(root, CacheFile), append(b, '\n'), 0o600)
}

// GenerateOptions are the choices of one generate.
type GenerateOptions struct {
	// Force runs the generators even when nothing they read changed.
	Force bool
	// Renumber names kinds (<group>/<version>/<Kind>, the group as --group
	// takes it, or a kind's name alone) whose protobuf fields are numbered
	// afresh.
	Renumber []string
	// Project and API, when the caller has read them (model.LoadAPI) from
	// the files as they are, spare the run reading them again: both or
	// neither.
	Project *project.Project
	API     *model.API
}

// Generation is what one generate did.
type Generation struct {
	// UpToDate: nothing it reads changed since the last run, and nothing ran.
	UpToDate bool
	// Written and Removed are the files the run wrote or removed (absolute).
	Written, Removed []string
	// Unchanged counts the files the run left as they were (all, when up to date).
	Unchanged int
	// Warnings are the run's (or, up to date, the last run's).
	Warnings []string
}

// Generate runs every generator over the project at root with the
// framework module's runtime, unless nothing it reads changed since the
// last run (the cache above) and neither Force nor Renumber is given. A run
// that fails on fields lost through the internal type writes every file
// and returns its Generation with the *LostFieldsError, saving no record,
// so the next run fails again; a run that changed its own inputs (conversion
// stubs) leaves the record to the next run.
func Generate(root, framework string, o GenerateOptions) (*Generation, error) {
	reads := PreviousReads(root)
	inputs, err := InputsHash(root, reads)
	if err != nil {
		return nil, err
	}
	if rec, ok := UpToDate(root, inputs); ok && !o.Force && len(o.Renumber) == 0 {
		return &Generation{UpToDate: true, Unchanged: len(rec.Outputs), Warnings: rec.Warnings}, nil
	}
	p, api, err := o.load(root, framework)
	if err != nil {
		return nil, err
	}
	units, err := renumberUnits(p, api, o.Renumber)
	if err != nil {
		return nil, err
	}
	res, err := Run(api, Options{Renumber: units})
	var lost *LostFieldsError
	if err != nil && !errors.As(err, &lost) {
		return nil, err
	}
	g := &Generation{Written: res.Written, Removed: res.Removed, Unchanged: res.Unchanged, Warnings: slices.Concat(api.Warnings, res.Renumbered)}
	if lost != nil {
		return g, lost
	}
	if after, err := InputsHash(root, reads); err != nil || after != inputs {
		return g, err
	}
	// The packages this run's load read, outside pkg/apis, are inputs of the next.
	final, err := InputsHash(root, res.Reads)
	if err != nil {
		return g, err
	}
	return g, SaveCache(root, final, res.Reads, res.Files, api.Warnings)
}

// load reads the project and its API, unless the caller did.
func (o GenerateOptions) load(root, framework string) (*project.Project, *model.API, error) {
	p := o.Project
	if o.API == nil {
		var err error
		if p, err = project.Load(root); err != nil {
			return nil, nil, err
		}
	}
	header, err := project.Boilerplate(root)
	if err != nil {
		return nil, nil, err
	}
	if o.API != nil {
		o.API.Header = header
		return p, o.API, nil
	}
	api, err := model.LoadAPI(root, p, framework, header)
	return p, api, err
}

// renumberUnits reads --renumber values: <group>/<version>/<Kind> (the
// group as --group takes it), or a kind's name alone when one version of
// one group has it.
func renumberUnits(p *project.Project, api *model.API, values []string) ([]string, error) {
	var out []string
	for _, val := range values {
		parts := strings.Split(val, "/")
		switch len(parts) {
		case 3:
			group, err := p.ResolveGroup(parts[0])
			if err != nil {
				return nil, fmt.Errorf("--renumber %s: %w", val, err)
			}
			out = append(out, group+"/"+parts[1]+"/"+parts[2])
		case 1:
			var found []string
			for _, g := range api.Groups {
				for _, v := range g.Versions {
					for _, k := range v.Kinds {
						if k.Kind == val {
							found = append(found, g.Name+"/"+v.Name+"/"+k.Kind)
						}
					}
				}
			}
			if len(found) != 1 {
				return nil, fmt.Errorf("--renumber %s: want <group>/<version>/<Kind>; %d versions have a kind %s (%s)", val, len(found), val, strings.Join(found, ", "))
			}
			out = append(out, found[0])
		default:
			return nil, fmt.Errorf("--renumber %s: want <group>/<version>/<Kind>, such as stable/v1/CronTab", val)
		}
	}
	return out, nil
}
