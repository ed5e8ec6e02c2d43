package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image runs as this user and group, as distroless' "nonroot" does, so
// that Pod Security "restricted" (runAsNonRoot) holds without further setup.
const (
	NonrootUID  = 65532
	NonrootName = "nonroot"
	// CACertificatesPath is where Go (and most TLS stacks) look for trusted roots on Linux.
	CACertificatesPath = "/etc/ssl/certs/ca-certificates.crt"
	// HomeDir is the nonroot user's home and the working directory: local
	// state a standalone apiserver writes (.apiserver-boot/) goes there.
	HomeDir = "/home/nonroot"
)

// Binary is an executable put at the image root as /<Name>.
type Binary struct {
	Name string // e.g. apiserver
	Path string // the file on disk
}

// Options describe one platform's image.
type Options struct {
	Platform Platform
	// Binaries go to the image root; the first is the entrypoint.
	Binaries []Binary
	// CACertificates is a PEM bundle of trusted roots (see CACertificates).
	CACertificates []byte
	// Created stamps the config, history and file times; the zero value
	// means the Unix epoch, so that the same binaries give the same digest.
	Created time.Time
	// LayerDir holds the compressed binaries layer (bin/<os>_<arch>/).
	LayerDir string
}

// Build assembles one platform's image: a base layer (passwd and group
// entries of the nonroot user, its home, /tmp, nsswitch.conf, the CA bundle)
// shared by every platform and build, then a layer with the binaries.
func Build(o Options) (v1.Image, error) {
	if len(o.Binaries) == 0 {
		return nil, fmt.Errorf("no binaries to put in the image")
	}
	created := o.Created
	if created.IsZero() {
		created = time.Unix(0, 0).UTC()
	}
	base, err := memoryLayer(baseFiles(o.CACertificates), created)
	if err != nil {
		return nil, err
	}
	var files []entry
	for _, b := range o.Binaries {
		files = append(files, entry{path: b.Name, mode: 0o755, source: b.Path})
	}
	layerPath := filepath.Join(o.LayerDir, "binaries.tar.gz")
	if err := writeLayerFile(layerPath, files, created); err != nil {
		return nil, err
	}
	bins, err := tarball.LayerFromFile(layerPath, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: o.Platform.Arch,
		OS:           o.Platform.OS,
		Variant:      o.Platform.Variant,
		Created:      v1.Time{Time: created},
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			Entrypoint: []string{"/" + o.Binaries[0].Name},
			User:       fmt.Sprintf("%d:%d", NonrootUID, NonrootUID),
			WorkingDir: HomeDir,
			Env: []string{
				"PATH=/usr/local/bin:/usr/bin:/bin",
				"SSL_CERT_FILE=" + CACertificatesPath,
			},
		},
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, len(o.Binaries))
	for i, b := range o.Binaries {
		names[i] = "/" + b.Name
	}
	return mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: v1.History{
			Created: v1.Time{Time: created}, CreatedBy: "apiserver-boot: nonroot user (65532), CA certificates", Comment: "base",
		}},
		mutate.Addendum{Layer: bins, MediaType: types.OCILayer, History: v1.History{
			Created: v1.Time{Time: created}, CreatedBy: "apiserver-boot build container: " + strings.Join(names, " "),
		}},
	)
}

// entry is one file or directory in a layer.
type entry struct {
	path     string // relative to the image root, no leading slash
	mode     int64
	dir      bool
	uid, gid int
	content  []byte
	source   string // read from this file when set
}

func baseFiles(caCerts []byte) []entry {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n",
		NonrootName, NonrootUID, NonrootUID, NonrootName, HomeDir)
	group := fmt.Sprintf("root:x:0:\nnobody:x:65534:\n%s:x:%d:\n", NonrootName, NonrootUID)
	rel := func(p string) string { return strings.TrimPrefix(p, "/") }
	return []entry{
		{path: "etc", dir: true, mode: 0o755},
		{path: "etc/passwd", mode: 0o644, content: []byte(passwd)},
		{path: "etc/group", mode: 0o644, content: []byte(group)},
		// Go's resolver reads it: look in /etc/hosts before DNS.
		{path: "etc/nsswitch.conf", mode: 0o644, content: []byte("hosts: files dns\n")},
		{path: "etc/ssl", dir: true, mode: 0o755},
		{path: "etc/ssl/certs", dir: true, mode: 0o755},
		{path: rel(CACertificatesPath), mode: 0o644, content: caCerts},
		{path: "home", dir: true, mode: 0o755},
		{path: rel(HomeDir), dir: true, mode: 0o700, uid: NonrootUID, gid: NonrootUID},
		{path: "tmp", dir: true, mode: 0o1777},
	}
}

// writeTar writes entries as a tar stream, parents before children.
func writeTar(w io.Writer, entries []entry, mtime time.Time) error {
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].path < entries[j].path })
	tw := tar.NewWriter(w)
	for _, e := range entries {
		h := &tar.Header{
			Name: e.path, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: mtime,
			Typeflag: tar.TypeReg, Format: tar.FormatPAX,
		}
		if e.dir {
			h.Typeflag, h.Name = tar.TypeDir, e.path+"/"
		}
		if err := writeEntry(tw, h, e); err != nil {
			return fmt.Errorf("adding %s to the image: %w", path.Join("/", e.path), err)
		}
	}
	return tw.Close()
}

func writeEntry(tw *tar.Writer, h *tar.Header, e entry) error {
	var body io.Reader
	switch {
	case e.dir:
		return tw.WriteHeader(h)
	case e.source != "":
		f, err := os.Open(e.source)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		h.Size, body = st.Size(), f
	default:
		h.Size, body = int64(len(e.content)), bytes.NewReader(e.content)
	}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := io.Copy(tw, body)
	return err
}

// gzipTar compresses the tar of entries into w. compress/gzip writes no
// timestamp or name in its header, so equal input gives equal bytes.
func gzipTar(w io.Writer, entries []entry, mtime time.Time) error {
	zw := gzip.NewWriter(w)
	if err := writeTar(zw, entries, mtime); err != nil {
		return err
	}
	return zw.Close()
}

func memoryLayer(entries []entry, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	if err := gzipTar(&buf, entries, mtime); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// writeLayerFile compresses a layer once, to a file, so that computing its
// digest and writing or pushing it later only read it.
func writeLayerFile(path string, entries []entry, mtime time.Time) error {
	return files.WriteAtomicFunc(path, 0o644, func(w io.Writer) error { return gzipTar(w, entries, mtime) })
}
