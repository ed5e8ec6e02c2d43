package apicompat

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// Extract writes the files of ref (a tag or commit of the repository at
// repo), or only those under paths, into dst, as `git archive` gives them.
// A shallow clone lacking ref fails: fetch its history first.
func Extract(repo, ref, dst string, paths ...string) error {
	cmd := exec.Command("git", append([]string{"archive", "--format=tar", ref, "--"}, paths...)...)
	cmd.Dir = repo
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	untarErr := untar(out, dst)
	_, _ = io.Copy(io.Discard, out) // let git finish if untar stopped early
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive %s in %s (a full clone is needed: git fetch --unshallow --tags): %w: %s", ref, repo, err, bytes.TrimSpace(errBuf.Bytes()))
	}
	return untarErr
}

// untar writes the directories, files and symbolic links of the tar
// stream r under dst.
func untar(r io.Reader, dst string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !filepath.IsLocal(h.Name) {
			return fmt.Errorf("git archive: %q is outside the tree", h.Name)
		}
		path := filepath.Join(dst, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, tr, os.FileMode(h.Mode).Perm())
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				err = os.Symlink(h.Linkname, path)
			}
		}
		if err != nil {
			return err
		}
	}
}

// writeFile writes r to path with mode perm, making its folder.
func writeFile(path string, r io.Reader, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	return errors.Join(err, f.Close())
}
