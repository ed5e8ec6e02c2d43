#!/usr/bin/env bash
# make test-tools: build kube-apiserver and kube-controller-manager from the
# test tool module (test/tools, k8s.io/kubernetes from the module proxy) into
# .cache/bin, for the aggregation end-to-end test. Skips the build when the
# binaries were built from the current test/tools/go.mod and go.sum (a stamp
# holds their hash). A cold build takes several minutes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/.cache/bin
stamp=$bin/test-tools.stamp
tools=(kube-apiserver kube-controller-manager)

want=$(cat "$root/test/tools/go.mod" "$root/test/tools/go.sum" | sha256sum | cut -d' ' -f1)
have=$(cat "$stamp" 2>/dev/null || true)
missing=0
for t in "${tools[@]}"; do [ -x "$bin/$t" ] || missing=1; done
if [ "$want" = "$have" ] && [ $missing = 0 ]; then
  echo "test tools up to date in .cache/bin (${tools[*]})"
  exit 0
fi

mkdir -p "$bin"
rm -f "$stamp"
version=$(cd "$root/test/tools" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=$(echo "$version" | cut -d. -f2)
# A Kubernetes-shaped version, as release builds stamp it (kubectl parses /version).
ldflags="-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
echo "building ${tools[*]} $version into .cache/bin (cold: several minutes)"
start=$(date +%s)
(cd "$root/test/tools" && go build -ldflags "$ldflags" -o "$bin/" tool)
echo "built in $(( $(date +%s) - start ))s"
echo "$want" > "$stamp"
