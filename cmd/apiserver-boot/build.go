package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/codegen"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/gobuild"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/image"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/progress"
)

func newBuildCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build the project's container image and its Kubernetes configuration",
		Example: `  apiserver-boot build container --image registry.example.com/crontab:v0.1.0
  apiserver-boot build config --image registry.example.com/crontab:v0.1.0`,
	}
	cmd.AddCommand(newBuildContainerCommand(), newBuildConfigCommand(), newBuildDocsCommand())
	return cmd
}

// containerOptions are the flags of build container (and run in-cluster).
type containerOptions struct {
	image     string
	platforms []string
	output    string
	push      bool
	generate  bool
}

func (o *containerOptions) addFlags(f *pflag.FlagSet, push bool) {
	o.push = push
	f.StringVar(&o.image, "image", "", "Name and tag of the image, e.g. registry.example.com/crontab:v0.1.0 (required)")
	f.StringSliceVar(&o.platforms, "platform", []string{"linux/amd64"}, "Platforms to build, repeated or comma separated: "+strings.Join(image.SupportedPlatforms(), ", ")+"; several make an image index")
	f.BoolVar(&o.push, "push", o.push, "Push the image to its registry, with the credentials of ~/.docker/config.json (docker login) and credential helpers")
	f.BoolVar(&o.generate, "generate", true, "Run apiserver-boot generate before compiling")
}

func newBuildContainerCommand() *cobra.Command {
	o := &containerOptions{}
	cmd := &cobra.Command{
		Use:   "container",
		Short: "Build the container image of the apiserver and controller-manager, without Docker",
		Long: `container cross-compiles cmd/apiserver and cmd/controller-manager for each
--platform (static: CGO_ENABLED=0, -trimpath; into bin/<os>_<arch>/) and
assembles an OCI image without a Docker daemon: /apiserver (the entrypoint)
and /controller-manager, a nonroot user (65532), CA certificates. Several
platforms make an image index.

The image is written to --output: a path ending in .tar gets a tarball that
` + "`docker load`" + ` accepts (one platform only), any other path an OCI layout
directory. Without --output it goes to bin/image.tar (one platform) or bin/image/
(several), unless --push is given, which pushes it to the registry of --image.
Paths are relative to the project root.

The same binaries give the same image digest (times are the Unix epoch, or
$SOURCE_DATE_EPOCH). Teams building with Docker can use the scaffolded Dockerfile.`,
		Example: `  apiserver-boot build container --image registry.example.com/crontab:v0.1.0
  docker load -i bin/image.tar
  apiserver-boot build container --image registry.example.com/crontab:v0.1.0 --platform linux/amd64,linux/arm64 --push
  apiserver-boot build container --image localhost:5001/crontab:dev --output bin/crontab.tar`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, p, api, err := loadProject()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			_, err = o.run(ctx, root, newConsole(cmd), generators.GenerateOptions{Project: p, API: api})
			return err
		},
	}
	o.addFlags(cmd.Flags(), false)
	cmd.Flags().StringVar(&o.output, "output", "", "Where to write the image: a .tar file (docker load) or an OCI layout directory; default bin/image.tar, or bin/image/ for several platforms, or nothing with --push")
	return cmd
}

// containerResult is what build container produced.
type containerResult struct {
	tag      name.Tag
	artifact *image.Artifact
	// output is where the image was written, if anywhere.
	output string
	// pushed is the pushed reference with its digest, if pushed.
	pushed *name.Digest
}

// plan checks the flags before anything is built: the tag, the platforms
// and where the image goes.
func (o *containerOptions) plan(root string) (name.Tag, []image.Platform, string, error) {
	tag, err := image.ParseTag("--image", o.image)
	if err != nil {
		return name.Tag{}, nil, "", err
	}
	platforms, err := image.ParsePlatforms(o.platforms)
	if err != nil {
		return name.Tag{}, nil, "", err
	}
	output := o.output
	if output == "" && !o.push {
		output = filepath.Join("bin", "image.tar")
		if len(platforms) > 1 {
			output = filepath.Join("bin", "image")
		}
	}
	if output != "" && !filepath.IsAbs(output) {
		output = filepath.Join(root, output)
	}
	if strings.HasSuffix(output, ".tar") && len(platforms) > 1 {
		return name.Tag{}, nil, "", fmt.Errorf("--output %s: %v, but %d --platform values were given: give one --platform, or an --output directory for an OCI layout (an image index)",
			o.output, image.ErrTarballOnePlatform, len(platforms))
	}
	return tag, platforms, output, nil
}

// run compiles the binaries, assembles the image and writes or pushes it;
// gen names the project the command read, for generate.
func (o *containerOptions) run(ctx context.Context, root string, con *progress.Console, gen generators.GenerateOptions) (*containerResult, error) {
	out, info := io.Writer(con), con.Info()
	tag, platforms, output, err := o.plan(root)
	if err != nil {
		return nil, err
	}
	if o.generate {
		if _, err := codegen.WithProgress(con, root, gen); err != nil {
			return nil, err
		}
	}
	created, err := sourceDateEpoch()
	if err != nil {
		return nil, err
	}
	caCerts, caSource, err := image.CACertificates()
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
	a, err := image.NewArtifact(platforms, images)
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
	res := &containerResult{tag: tag, artifact: a}
	if output != "" {
		if err := writeArtifact(out, a, output, tag); err != nil {
			return nil, err
		}
		res.output = output
	}
	if o.push {
		start := time.Now()
		fmt.Fprintf(info, "Pushing %s...\n", tag)
		pushed, err := a.Push(ctx, tag)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "Pushed %s in %s.\n", pushed, time.Since(start).Round(time.Millisecond))
		res.pushed = &pushed
	}
	return res, nil
}

// buildImage compiles the project's binaries for platform p (static,
// trimmed) and assembles them into an image.
func buildImage(ctx context.Context, con *progress.Console, root string, p image.Platform, caCerts []byte, created time.Time) (v1.Image, error) {
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
	img, err := image.Build(image.Options{
		Platform: p,
		Binaries: []image.Binary{
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
func writeArtifact(out io.Writer, a *image.Artifact, output string, tag name.Tag) error {
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

func platformNames(ps []image.Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}
