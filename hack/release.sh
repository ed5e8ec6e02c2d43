#!/usr/bin/env bash
# make release VERSION=vX.Y.Z: a release of apiserver-boot from this checkout,
# into dist/ (DIST):
#   dist/proxy/github.com/apiserver-boot/apiserver-boot/@v/{list,vX.Y.Z.info,.mod,.zip}
#     the module as a module proxy serves it (GOPROXY=file://$PWD/dist/proxy),
#     made with golang.org/x/mod/zip from the checkout's files (hack/modproxy);
#   dist/apiserver-boot_<os>_<arch>[.exe] and dist/SHA256SUMS
#     the CLI for each of PLATFORMS, built with -trimpath and the release's
#     version and module checksum set with -ldflags -X (internal/shared/version).
# Before building, pkg/'s exported API is compared with the last release's
# (hack/apicompat): an incompatible change VERSION does not allow is refused.
# The checkout must be clean and HEAD tagged VERSION; ALLOW_DIRTY=1 lifts
# both (tests, dry runs) for a pre-release VERSION (vX.Y.Z-something). PLATFORMS="" builds no binaries. docs/releasing.md
# tells the whole procedure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
version=${VERSION:?VERSION=vX.Y.Z is required, e.g. make release VERSION=v0.3.0}
dist=${DIST:-$root/dist}
platforms=${PLATFORMS-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}
pkg=github.com/apiserver-boot/apiserver-boot/internal/shared/version

if [ "${ALLOW_DIRTY:-}" = 1 ] && [[ "$version" != *-* ]]; then
  # A tree that is not the tag's has another checksum than the one the
  # public proxy will serve for the tag: such binaries must never carry a
  # version that may be pushed.
  echo "release: ALLOW_DIRTY=1 needs a pre-release version (e.g. ${version}-dev.1), not $version" >&2
  exit 1
fi
if [ "${ALLOW_DIRTY:-}" != 1 ]; then
  if [ -n "$(git status --porcelain)" ]; then
    echo "release: the checkout has uncommitted changes (git status); commit or stash them (ALLOW_DIRTY=1 to release anyway)" >&2
    exit 1
  fi
  if [ "$(git rev-parse -q --verify "refs/tags/$version^{commit}" || true)" != "$(git rev-parse HEAD)" ]; then
    echo "release: HEAD is not tagged $version: git tag -a $version -m $version first (ALLOW_DIRTY=1 to release anyway)" >&2
    exit 1
  fi
fi

# pkg/'s exported API against the last release's (the highest tag vX.Y.Z
# below VERSION): an incompatible change needs a new minor while the major
# is 0, a new major from v1 on (docs/releasing.md). Refused before building.
go run ./hack/apicompat -version "$version"

mkdir -p "$dist"
sum=$(go run ./hack/modproxy -version "$version" -out "$dist/proxy")
echo "module github.com/apiserver-boot/apiserver-boot $version $sum -> $dist/proxy"

ldflags="-s -w -X $pkg.release=$version -X $pkg.releaseSum=$sum"
for p in $platforms; do
  os=${p%/*} arch=${p#*/}
  out=$dist/apiserver-boot_${os}_${arch}
  [ "$os" = windows ] && out=$out.exe
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags "$ldflags" -o "$out" ./cmd/apiserver-boot
  echo "built $out"
done
if [ -n "$platforms" ]; then
  (cd "$dist" && sha256sum apiserver-boot_* > SHA256SUMS)
fi
