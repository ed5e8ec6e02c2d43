package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/gobuild"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/progress"
)

// Container is what build container builds: the image's tag and
// platforms, and where it goes.
type Container struct {
	// Tag names the image (--image).
	Tag name.Tag
	// Platforms are those compiled for: several make an image index.
	Platforms []Platform
	// Output is where the image is written: a path ending in .tar gets a
	// tarball docker load reads, any other an OCI layout; "" writes none.
	Output string
	// Push pushes the image to the registry of Tag.
	Push bool
}

// Built is what Container.Build produced.
type Built struct {
	// Tag is the image's name, Container's.
	Tag name.Tag
	// Output is where the image was written, if anywhere.
	Output string
	// Pushed is the pushed reference with its digest, if pushed.
	Pushed *name.Digest
}

// Build compiles the project's binaries at root for each platform (static,
// trimmed: go build, its progress on con), assembles the image (an index
// for several platforms, with CA certificates, its times
// $SOURCE_DATE_EPOCH's or the Unix epoch), and writes it to c.Output and
// pushes it as c says.
func (c Container) Build(ctx context.Context, con *progress.Console, root string) (*Built, error) {
	out, info := io.Writer(con), con.Info()
	tag, platforms, output := c.Tag, c.Platforms, c.Output
	created, err := sourceDateEpoch()
	if err != nil {
		return nil, err
	}
	caCerts, caSource, err := CACertificates()
	if err != nil {
		return nil, err
	}
	var images []v1.Image
	for _, p := range platforms {
		img, err := buildImage(ctx, con, root, p, caCerts, created)
		if err != nil {
			return nil, err
		}
		images = append(images, img)
	}
	a, err := NewArtifact(platforms, images)
	if err != nil {
		return nil, err
	}
	digest, err := a.Digest()
	if err != nil {
		return nil, err
	}
	kind := "image"
	if a.Index != nil {
		kind = "image index"
	}
	fmt.Fprintf(info, "Built %s %s (%s) with CA certificates from %s.\n", kind, digest, platformNames(platforms), caSource)
	res := &Built{Tag: tag}
	if output != "" {
		if err := writeArtifact(out, a, output, tag); err != nil {
			return nil, err
		}
		res.Output = output
	}
	if c.Push {
		start := time.Now()
		fmt.Fprintf(info, "Pushing %s...\n", tag)
		pushed, err := a.Push(ctx, tag)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "Pushed %s in %s.\n", pushed, time.Since(start).Round(time.Millisecond))
		res.Pushed = &pushed
	}
	return res, nil
}

// buildImage compiles the project's binaries for platform p (static,
// trimmed) and assembles them into an
func buildImage(ctx context.Context, con *progress.Console, root string, p Platform, caCerts []byte, created time.Time) (v1.Image, error) {
	info := con.Info()
	dir := filepath.Join(root, "bin", p.Dir())
	step := fmt.Sprintf("Compiling bin/%s/apiserver and bin/%s/controller-manager (%s, static)", p.Dir(), p.Dir(), p)
	fmt.Fprintln(info, step+"...")
	d, n, err := gobuild.Run(ctx, con, step, root, append(os.Environ(), p.GoEnv()...),
		"-trimpath", "-ldflags=-s -w", "-o", dir+string(filepath.Separator), "./cmd/apiserver", "./cmd/controller-manager")
	if err != nil {
		return nil, fmt.Errorf("compiling for %s: %w", p, err)
	}
	fmt.Fprintf(info, "Compiled in %s (%s).\n", d.Round(time.Millisecond), gobuild.Compiled(n))
	img, err := Build(Options{
		Platform: p,
		Binaries: []Binary{
			{Name: "apiserver", Path: filepath.Join(dir, "apiserver")},
			{Name: "controller-manager", Path: filepath.Join(dir, "controller-manager")},
		},
		CACertificates: caCerts,
		Created:        created,
		LayerDir:       dir,
	})
	if err != nil {
		return nil, fmt.Errorf("assembling the %s image: %w", p, err)
	}
	return img, nil
}

// writeArtifact writes the image to --output: a tarball (.tar) docker load
// reads, or an OCI layout.
func writeArtifact(out io.Writer, a *Artifact, output string, tag name.Tag) error {
	rel := files.RelToWd(output)
	if strings.HasSuffix(output, ".tar") {
		if err := a.WriteTarball(output, tag); err != nil {
			return fmt.Errorf("--output %s: %w", rel, err)
		}
		fmt.Fprintf(out, "Wrote %s, tagged %s. Load it with: docker load -i %s\n", rel, tag, rel)
		return nil
	}
	if err := a.WriteLayout(output, tag); err != nil {
		return fmt.Errorf("--output %s: %w", rel, err)
	}
	fmt.Fprintf(out, "Wrote the OCI layout %s (ref %s). Copy it with e.g.: skopeo copy oci:%s:%s docker://%s\n", rel, tag.TagStr(), rel, tag.TagStr(), tag)
	return nil
}

// sourceDateEpoch reads $SOURCE_DATE_EPOCH (reproducible-builds.org); zero means the Unix epoch.
func sourceDateEpoch() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, errors.New("$SOURCE_DATE_EPOCH is not a number of seconds since the Unix epoch")
	}
	return time.Unix(n, 0).UTC(), nil
}

func platformNames(ps []Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}
