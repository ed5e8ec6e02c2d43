#!/usr/bin/env bash
# make demo: scaffold a sample project into a temporary folder with the CLI
# in bin/, run it on an embedded etcd, and show kubectl working against it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cli=$root/bin/apiserver-boot
port=${DEMO_PORT:-9443}
work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill -INT "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
cd "$work" && mkdir crontab && cd crontab
step go mod init example.com/crontab;  go mod init example.com/crontab 2>/dev/null
step apiserver-boot init repo --domain example.com
"$cli" init repo --domain example.com | tail -1
step apiserver-boot create group version resource --group stable --version v1 --kind CronTab
"$cli" create group version resource --group stable --version v1 --kind CronTab | grep -v '^generated '
step apiserver-boot run local --secure-port "$port"
"$cli" run local --secure-port "$port" > run.log 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  grep -q '^Ready\.' run.log && break
  kill -0 "$pid" 2>/dev/null || { cat run.log; exit 1; }
  sleep 0.5
done
grep -v '^\[' run.log
k() { step kubectl "$@"; kubectl --kubeconfig kubeconfig "$@"; }
k create -f - <<'YAML'
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  replicas: 3
YAML
k get crontabs
k get crontab my-new-cron-object -o yaml
k api-resources --api-group stable.example.com
k explain crontab.spec
step "# controller-manager log:"
grep '^\[controller-manager\]' run.log | tail -3
