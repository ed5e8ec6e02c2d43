package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
)

// ParseTag reads the --image flag of build container: the name and tag the
// image gets. A digest is computed from the image, so it cannot be given.
func ParseTag(flag, s string) (name.Tag, error) {
	example := "such as registry.example.com/crontab:v0.1.0"
	if s == "" {
		return name.Tag{}, fmt.Errorf("%s is required: the image's name and tag, %s", flag, example)
	}
	if strings.Contains(s, "@") {
		return name.Tag{}, fmt.Errorf("%s %q names a digest: give a name and tag instead (the digest is computed from the image), %s", flag, s, example)
	}
	t, err := name.NewTag(s)
	if err != nil {
		return name.Tag{}, fmt.Errorf("%s %q is not a valid image reference: want [registry/]repository:tag, %s (%v)", flag, s, example, err)
	}
	if !strings.HasSuffix(s, ":"+t.TagStr()) {
		return name.Tag{}, fmt.Errorf("%s %q has no tag: give one explicitly, %s", flag, s, example)
	}
	return t, nil
}

// ParseReference reads an image reference to run: a tag, a digest or both
// (registry.example.com/crontab:v0.1.0@sha256:...).
func ParseReference(flag, s string) (name.Reference, error) {
	example := "such as registry.example.com/crontab:v0.1.0"
	if s == "" {
		return nil, fmt.Errorf("%s is required: the image to run, %s", flag, example)
	}
	tagged := s
	if i := strings.Index(s, "@"); i >= 0 {
		tagged = s[:i]
		if _, err := name.NewDigest(s); err != nil {
			return nil, fmt.Errorf("%s %q is not a valid image reference: want [registry/]repository[:tag][@sha256:<hex>] (%v)", flag, s, err)
		}
	}
	ref, err := name.ParseReference(tagged)
	if err != nil {
		return nil, fmt.Errorf("%s %q is not a valid image reference: want [registry/]repository:tag, %s (%v)", flag, s, example, err)
	}
	if tagged != s {
		return name.NewDigest(s)
	}
	return ref, nil
}

// Artifact is what build container produces: one image, or for several
// platforms an image index with one image per platform.
type Artifact struct {
	Platforms []Platform
	Images    []v1.Image
	// Index is set when there are several platforms.
	Index v1.ImageIndex
}

// NewArtifact wraps the images built for platforms (in the same order).
func NewArtifact(platforms []Platform, images []v1.Image) (*Artifact, error) {
	if len(platforms) != len(images) || len(images) == 0 {
		return nil, fmt.Errorf("%d platforms but %d images", len(platforms), len(images))
	}
	a := &Artifact{Platforms: platforms, Images: images}
	if len(images) == 1 {
		return a, nil
	}
	var adds []mutate.IndexAddendum
	for i, img := range images {
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: platforms[i].OCI()}})
	}
	a.Index = mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	return a, nil
}

// Digest is the digest of the image, or of the index.
func (a *Artifact) Digest() (v1.Hash, error) {
	if a.Index != nil {
		return a.Index.Digest()
	}
	return a.Images[0].Digest()
}

// ErrTarballOnePlatform says why a tarball cannot hold an index.
var ErrTarballOnePlatform = errors.New("a .tar output is a `docker load` tarball, which holds one platform's image")

// WriteTarball writes a tarball `docker load` accepts, tagged with tag.
func (a *Artifact) WriteTarball(path string, tag name.Tag) error {
	if a.Index != nil {
		return fmt.Errorf("%w; %d platforms were built (%s): build one platform, or write an OCI layout directory", ErrTarballOnePlatform, len(a.Platforms), platformList(a.Platforms))
	}
	return files.WriteAtomicFunc(path, 0o644, func(w io.Writer) error { return tarball.Write(tag, a.Images[0], w) })
}

// WriteLayout writes an OCI image layout directory holding the image (or
// index), annotated with its name and tag. An existing layout at dir is
// replaced; any other non-empty directory is refused.
func (a *Artifact) WriteLayout(dir string, tag name.Tag) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
			return fmt.Errorf("%s exists and is not an OCI layout: choose another output, or remove it", dir)
		}
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return err
	}
	annotations := layout.WithAnnotations(map[string]string{
		// The OCI convention (skopeo, oras: oci:<dir>:<tag>) and containerd's (ctr import).
		"org.opencontainers.image.ref.name": tag.TagStr(),
		"io.containerd.image.name":          tag.Name(),
	})
	if a.Index != nil {
		err = p.AppendIndex(a.Index, annotations)
	} else {
		err = p.AppendImage(a.Images[0], annotations)
	}
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// Push writes the image (or index) to its registry under tag, with the
// credentials of the Docker config (~/.docker/config.json, credential
// helpers), and returns the pushed reference with its digest.
func (a *Artifact) Push(ctx context.Context, tag name.Tag, opts ...remote.Option) (name.Digest, error) {
	opts = append([]remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	var err error
	if a.Index != nil {
		err = remote.WriteIndex(tag, a.Index, opts...)
	} else {
		err = remote.Write(tag, a.Images[0], opts...)
	}
	if err != nil {
		return name.Digest{}, fmt.Errorf("pushing %s: %w", tag, err)
	}
	d, err := a.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	return name.NewDigest(tag.String() + "@" + d.String())
}

func platformList(ps []Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

// Plan checks build container's flags before anything is built: the tag
// (--image), the platforms (--platform) and where the image goes
// (--output, relative to root; default bin/image.tar for one platform,
// bin/image/ for several, nothing with push).
func Plan(root, image string, platforms []string, output string, push bool) (name.Tag, []Platform, string, error) {
	tag, err := ParseTag("--image", image)
	if err != nil {
		return name.Tag{}, nil, "", err
	}
	ps, err := ParsePlatforms(platforms)
	if err != nil {
		return name.Tag{}, nil, "", err
	}
	given := output
	if output == "" && !push {
		output = filepath.Join("bin", "image.tar")
		if len(ps) > 1 {
			output = filepath.Join("bin", "image")
		}
	}
	if output != "" && !filepath.IsAbs(output) {
		output = filepath.Join(root, output)
	}
	if strings.HasSuffix(output, ".tar") && len(ps) > 1 {
		return name.Tag{}, nil, "", fmt.Errorf("--output %s: %v, but %d --platform values were given: give one --platform, or an --output directory for an OCI layout (an image index)",
			given, ErrTarballOnePlatform, len(ps))
	}
	return tag, ps, output, nil
}
