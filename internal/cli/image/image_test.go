package image

import (
	"archive/tar"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func TestParsePlatforms(t *testing.T) {
	got, err := ParsePlatforms([]string{"linux/amd64,linux/arm64", "linux/amd64", " linux/arm/v7 "})
	if err != nil {
		t.Fatal(err)
	}
	want := []Platform{{"linux", "amd64", ""}, {"linux", "arm64", ""}, {"linux", "arm", "v7"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if env := got[2].GoEnv(); !reflect.DeepEqual(env, []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm", "GOARM=7"}) {
		t.Errorf("GoEnv: %v", env)
	}
	if d := got[2].Dir(); d != "linux_arm_v7" {
		t.Errorf("Dir: %s", d)
	}
	for _, bad := range [][]string{{"windows/amd64"}, {"linux/mips"}, {"amd64"}, {""}, {","}} {
		_, err := ParsePlatforms(bad)
		if err == nil || !strings.Contains(err.Error(), "--platform") || !strings.Contains(err.Error(), "linux/amd64") {
			t.Errorf("%q: want an error naming --platform and the valid platforms, got %v", bad, err)
		}
	}
}

func TestParseTag(t *testing.T) {
	for _, good := range []string{"registry.example.com/crontab:v0.1.0", "localhost:5000/crontab:dev", "crontab:v1"} {
		if _, err := ParseTag("--image", good); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
	for bad, want := range map[string]string{
		"":                                   "--image is required",
		"registry.example.com/crontab":       "no tag",
		"localhost:5000/crontab":             "no tag",
		"Registry/UPPER:v1":                  "not a valid image reference",
		"registry.example.com/crontab:v1:v2": "not a valid",
		"registry.example.com/crontab@sha256:0000000000000000000000000000000000000000000000000000000000000000": "digest",
	} {
		_, err := ParseTag("--image", bad)
		if err == nil || !strings.Contains(err.Error(), "--image") || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: want an error naming --image containing %q, got %v", bad, want, err)
		}
	}
	digest := "registry.example.com/crontab:v1@sha256:" + strings.Repeat("ab", 32)
	if ref, err := ParseReference("--image", digest); err != nil || ref.String() != digest {
		t.Errorf("ParseReference(%s) = %v, %v", digest, ref, err)
	}
	if _, err := ParseReference("--image", "registry.example.com/crontab@sha256:short"); err == nil || !strings.Contains(err.Error(), "--image") {
		t.Errorf("want an error for a bad digest, got %v", err)
	}
}

func TestFallbackCACertificates(t *testing.T) {
	b, src, err := FallbackCACertificates()
	if err != nil {
		t.Fatal(err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(b) || !strings.Contains(src, "roots") {
		t.Fatalf("the fallback bundle does not parse (%s)", src)
	}
}

// fakeBinaries writes two small files standing in for the project's binaries.
func fakeBinaries(t *testing.T, dir string, p Platform) []Binary {
	t.Helper()
	var out []Binary
	for _, n := range []string{"apiserver", "controller-manager"} {
		path := filepath.Join(dir, p.Dir(), n)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte("#!"+n+" for "+p.String()+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		out = append(out, Binary{Name: n, Path: path})
	}
	return out
}

func build(t *testing.T, dir string, platforms ...Platform) *Artifact {
	t.Helper()
	var imgs []v1.Image
	for _, p := range platforms {
		img, err := Build(Options{Platform: p, Binaries: fakeBinaries(t, dir, p), CACertificates: []byte("CERTS\n"), LayerDir: filepath.Join(dir, p.Dir())})
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	a, err := NewArtifact(platforms, imgs)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// imageFiles reads the flattened file system of an image: path -> tar header and content.
func imageFiles(t *testing.T, img v1.Image) (map[string]*tar.Header, map[string]string) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	headers, contents := map[string]*tar.Header{}, map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		headers[h.Name], contents[h.Name] = h, string(b)
	}
	return headers, contents
}

var amd64, arm64 = Platform{OS: "linux", Arch: "amd64"}, Platform{OS: "linux", Arch: "arm64"}

func TestBuildImage(t *testing.T) {
	dir := t.TempDir()
	a := build(t, dir, amd64)
	img := a.Images[0]
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("platform %s/%s", cfg.OS, cfg.Architecture)
	}
	if !reflect.DeepEqual(cfg.Config.Entrypoint, []string{"/apiserver"}) || cfg.Config.User != "65532:65532" {
		t.Errorf("entrypoint %v, user %q", cfg.Config.Entrypoint, cfg.Config.User)
	}
	if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s", mt)
	}
	layers, _ := img.Layers()
	if len(layers) != 2 || len(cfg.RootFS.DiffIDs) != 2 || len(cfg.History) != 2 {
		t.Fatalf("want 2 layers with diff IDs and history, got %d layers, %d diff IDs, %d history", len(layers), len(cfg.RootFS.DiffIDs), len(cfg.History))
	}
	for _, l := range layers {
		if mt, _ := l.MediaType(); mt != types.OCILayer {
			t.Errorf("layer media type %s", mt)
		}
	}
	headers, contents := imageFiles(t, img)
	for path, want := range map[string]string{
		"apiserver":                         "#!apiserver for linux/amd64\n",
		"controller-manager":                "#!controller-manager for linux/amd64\n",
		"etc/ssl/certs/ca-certificates.crt": "CERTS\n",
		"etc/passwd":                        "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
		"etc/group":                         "nonroot:x:65532:\n",
	} {
		if !strings.Contains(contents[path], want) {
			t.Errorf("/%s: want %q in %q", path, want, contents[path])
		}
	}
	if h := headers["apiserver"]; h == nil || h.Mode != 0o755 || h.Uid != 0 {
		t.Errorf("/apiserver: %+v", h)
	}
	if h := headers["home/nonroot"]; h == nil || h.Uid != NonrootUID || h.Typeflag != tar.TypeDir {
		t.Errorf("/home/nonroot: %+v", h)
	}
	if h := headers["tmp"]; h == nil || h.Mode != 0o1777 {
		t.Errorf("/tmp: %+v", h)
	}

	// The same binaries give the same digest: nothing depends on the time of the build.
	again := build(t, t.TempDir(), amd64)
	d1, _ := a.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds of the same binaries differ: %s, %s", d1, d2)
	}
}

func TestTarballAndLayout(t *testing.T) {
	dir := t.TempDir()
	tag, _ := name.NewTag("registry.example.com/crontab:v0.1.0")
	single := build(t, dir, amd64)

	tarPath := filepath.Join(dir, "out", "image.tar")
	if err := single.WriteTarball(tarPath, tag); err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(tarPath, &tag)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(tarPath) }); err != nil || len(m) != 1 || !reflect.DeepEqual(m[0].RepoTags, []string{"registry.example.com/crontab:v0.1.0"}) {
		t.Errorf("docker load manifest: %+v, %v", m, err)
	}
	// A docker tarball has no manifest of its own (it is recomputed on
	// load), but holds the same config and layers.
	gotConfig, _ := img.ConfigName()
	wantConfig, _ := single.Images[0].ConfigName()
	if gotConfig != wantConfig {
		t.Errorf("the tarball holds config %s, built %s", gotConfig, wantConfig)
	}

	multi := build(t, dir, amd64, arm64)
	if err := multi.WriteTarball(filepath.Join(dir, "multi.tar"), tag); err == nil || !errors.Is(err, ErrTarballOnePlatform) || !strings.Contains(err.Error(), "linux/arm64") {
		t.Errorf("a tarball of two platforms: want an error, got %v", err)
	}

	lay := filepath.Join(dir, "layout")
	for range 2 { // a second write replaces the first
		if err := multi.WriteLayout(lay, tag); err != nil {
			t.Fatal(err)
		}
	}
	p, err := layout.FromPath(lay)
	if err != nil {
		t.Fatal(err)
	}
	top, _ := p.ImageIndex()
	tm, _ := top.IndexManifest()
	if len(tm.Manifests) != 1 || tm.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v0.1.0" {
		t.Fatalf("layout index.json: %+v", tm)
	}
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := idx.IndexManifest()
	var got []string
	for _, m := range im.Manifests {
		got = append(got, m.Platform.OS+"/"+m.Platform.Architecture)
		img, _ := idx.Image(m.Digest)
		cfg, _ := img.ConfigFile()
		if cfg.Architecture != m.Platform.Architecture {
			t.Errorf("index says %s, config says %s", m.Platform.Architecture, cfg.Architecture)
		}
		_, contents := imageFiles(t, img)
		if !strings.Contains(contents["apiserver"], cfg.Architecture) {
			t.Errorf("%s image holds the binary %q", cfg.Architecture, contents["apiserver"])
		}
	}
	if !reflect.DeepEqual(got, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("index platforms %v", got)
	}

	os.MkdirAll(filepath.Join(dir, "notalayout"), 0o755)
	os.WriteFile(filepath.Join(dir, "notalayout", "x"), []byte("mine"), 0o644)
	if err := single.WriteLayout(filepath.Join(dir, "notalayout"), tag); err == nil {
		t.Error("a directory that is not an OCI layout was overwritten")
	}
}

func TestPushToRegistry(t *testing.T) {
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	u, _ := url.Parse(reg.URL)
	dir := t.TempDir()
	for _, platforms := range [][]Platform{{amd64}, {amd64, arm64}} {
		a := build(t, dir, platforms...)
		tag, err := ParseTag("--image", u.Host+"/crontab:v0.1.0")
		if err != nil {
			t.Fatal(err)
		}
		pushed, err := a.Push(context.Background(), tag)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := a.Digest()
		if pushed.DigestStr() != want.String() || !strings.HasPrefix(pushed.String(), tag.String()+"@") {
			t.Errorf("pushed %s, want digest %s", pushed, want)
		}
		desc, err := remote.Get(tag)
		if err != nil {
			t.Fatal(err)
		}
		if desc.Digest != want {
			t.Errorf("the registry holds %s under the tag, want %s", desc.Digest, want)
		}
		if len(platforms) == 1 {
			img, err := desc.Image()
			if err != nil {
				t.Fatal(err)
			}
			if _, contents := imageFiles(t, img); !strings.Contains(contents["apiserver"], "linux/amd64") {
				t.Errorf("pulled image holds %q", contents["apiserver"])
			}
			continue
		}
		if desc.MediaType != types.OCIImageIndex {
			t.Errorf("two platforms pushed as %s, want an index", desc.MediaType)
		}
		// Pull the arm64 image the way a node of that platform does.
		img, err := remote.Image(tag, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"}))
		if err != nil {
			t.Fatal(err)
		}
		if _, contents := imageFiles(t, img); !strings.Contains(contents["apiserver"], "linux/arm64") {
			t.Errorf("arm64 pull holds %q", contents["apiserver"])
		}
	}
}
