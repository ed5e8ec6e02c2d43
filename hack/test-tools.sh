#!/usr/bin/env bash
# make test-tools: build the Kubernetes binaries the end-to-end tests run our
# apiserver behind, from the module proxy, into .cache/bin:
#   test/tools         kube-apiserver and kube-controller-manager: the oldest
#                      kube-apiserver minor of the support policy
#                      (docs/upgrading.md), and the controller-manager the
#                      aggregation and storage-migration tests use;
#   test/tools/newest  kube-apiserver-<minor>: the newest minor of the policy
#                      (the minor of the framework's k8s.io/* pins).
# Each module is skipped when its binaries were built from its current go.mod
# and go.sum (a stamp per module holds their hash). A cold build takes several
# minutes per module on 2 cores; both share GOCACHE.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/.cache/bin
mkdir -p "$bin"

# build MODULE_DIR STAMP SUFFIX TOOL...: go build the module's tools into
# .cache/bin, each named TOOL plus SUFFIX ("-<minor>" when SUFFIX is "minor").
build() {
  local dir=$root/$1 stamp=$bin/$2 suffix=$3
  shift 3
  local tools=("$@")
  local version minor want have missing=0 names=()
  version=$(cd "$dir" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
  minor=$(echo "$version" | cut -d. -f2)
  [ "$suffix" = minor ] && suffix="-1.$minor"
  for t in "${tools[@]}"; do names+=("$t$suffix"); done
  want=$(cat "$dir/go.mod" "$dir/go.sum" | sha256sum | cut -d' ' -f1)
  have=$(cat "$stamp" 2>/dev/null || true)
  for n in "${names[@]}"; do [ -x "$bin/$n" ] || missing=1; done
  if [ "$want" = "$have" ] && [ $missing = 0 ]; then
    echo "test tools up to date in .cache/bin (${names[*]}, $version)"
    return
  fi
  rm -f "$stamp"
  # A Kubernetes-shaped version, as release builds stamp it (kubectl parses /version).
  local ldflags="-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
  echo "building ${names[*]} $version into .cache/bin (cold: several minutes)"
  local start out
  start=$(date +%s)
  out=$(mktemp -d "$bin/.build.XXXXXX")
  if ! (cd "$dir" && go build -ldflags "$ldflags" -o "$out/" "${tools[@]/#/k8s.io/kubernetes/cmd/}"); then
    rm -rf "$out"
    exit 1
  fi
  for t in "${tools[@]}"; do mv -f "$out/$t" "$bin/$t$suffix"; done
  rmdir "$out"
  echo "built in $(( $(date +%s) - start ))s"
  echo "$want" > "$stamp"
}

build test/tools test-tools.stamp "" kube-apiserver kube-controller-manager
# A newest minor moved on leaves its predecessor's binary behind: the
# end-to-end tests run behind every kube-apiserver* in .cache/bin.
for old in "$bin"/kube-apiserver-1.*; do
  [ -e "$old" ] || continue
  want=$(cd "$root/test/tools/newest" && go list -m -f '{{.Version}}' k8s.io/kubernetes | cut -d. -f1,2 | tr -d v)
  [ "$old" = "$bin/kube-apiserver-$want" ] || rm -f "$old"
done
build test/tools/newest test-tools-newest.stamp minor kube-apiserver
