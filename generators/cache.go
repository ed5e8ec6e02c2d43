package generators

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
var CacheFile = filepath.Join(".apiserver-boot", "generate-cache.json")

// CacheRecord is what a run leaves for the next one.
type CacheRecord struct {
	// Inputs hashes everything the run read.
	Inputs string `json:"inputs"`
	// Outputs maps every produced file (relative path) to the hash of its content.
	Outputs map[string]string `json:"outputs"`
	// Warnings are replayed by a cached run: they depend on the inputs only.
	Warnings []string `json:"warnings,omitempty"`
}

// InputsHash hashes what a run of this binary over the project at root reads.
func InputsHash(root string) (string, error) {
	h := sha256.New()
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			// The generators and templates are compiled in: a rebuilt binary is a new generator.
			fmt.Fprintf(h, "generator %s %d %d\n", exe, st.Size(), st.ModTime().UnixNano())
		}
	}
	files := []string{"PROJECT", filepath.Join("hack", "boilerplate.go.txt"), "go.mod", "go.sum"}
	err := filepath.WalkDir(filepath.Join(root, "pkg", "apis"), func(path string, d fs.DirEntry, err error) error {
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
			files = append(files, rel)
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, "zz_generated") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		files = append(files, rel)
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, rel := range files {
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
func SaveCache(root, inputs string, files, warnings []string) error {
	rec := CacheRecord{Inputs: inputs, Outputs: map[string]string{}, Warnings: warnings}
	for _, f := range files {
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
	return WriteFileAtomic(filepath.Join(root, CacheFile), append(b, '\n'))
}
