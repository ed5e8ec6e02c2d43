package main

import (
	"context"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/codegen"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/image"
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
		Args: cmdline.NoArgs,
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

// run is build container once the project is read: the flags checked,
// generate run, then the image built, written or pushed
// (image.Container.Build); gen names the project the command read, for
// generate.
func (o *containerOptions) run(ctx context.Context, root string, con *progress.Console, gen generators.GenerateOptions) (*image.Built, error) {
	tag, platforms, output, err := image.Plan(root, o.image, o.platforms, o.output, o.push)
	if err != nil {
		return nil, err
	}
	if o.generate {
		if _, err := codegen.WithProgress(con, root, gen); err != nil {
			return nil, err
		}
	}
	return image.Container{Tag: tag, Platforms: platforms, Output: output, Push: o.push}.Build(ctx, con, root)
}
