# apiserver-boot: scaffolding and code generation for Kubernetes extension apiservers.
GO ?= go
BIN := bin/apiserver-boot
# The example project: one group, two kinds (one cluster-scoped), CronTab in two versions.
EXAMPLE_INIT := init repo --module example.com/crontab --domain example.com --owner "The apiserver-boot Authors"
EXAMPLE_CREATE := create group version resource --group stable --version v1

.PHONY: all build release apicompat test test-unit test-e2e test-faults soak test-tools bench example demo fmt vet clean
all: build

build: ## Build bin/apiserver-boot.
	$(GO) build -o $(BIN) ./cmd/apiserver-boot

release: ## A release from this checkout (clean, HEAD tagged VERSION): make release VERSION=vX.Y.Z writes dist/proxy (the module as a proxy serves it) and dist/apiserver-boot_<os>_<arch> (docs/releasing.md).
	VERSION=$(VERSION) ./hack/release.sh

apicompat: ## pkg/'s exported API against the last release tag's (apidiff): what changed, and the lowest version that may be released next; says so when there is no release yet.
	$(GO) run ./hack/apicompat

test: test-unit test-e2e test-faults ## Everything CI runs.

test-unit: vet apicompat ## Fast tests (and the API check against the last release): naming, templates, markers, generators (goldens), strategies, CLI input checks, example/ in sync.
	$(GO) test -timeout 30m ./...

test-e2e: test-tools ## Slow tier: scaffold, build and run a project; drive it with kubectl on embedded and external etcd, and aggregated behind kube-apiserver.
	$(GO) test -tags e2e -count=1 -v -timeout 60m ./test/e2e/

test-faults: ## Fault tier: two apiserver replicas on a 3-member etcd, then on PostgreSQL through kine, on loopback, under writing clients, while processes are killed; writes docs/reliability.md.
	$(GO) test -tags faults -count=1 -v -timeout 30m ./test/faults/

soak: ## Not in CI: 32 clients of mixed CRUD and 8 watches on two replicas for 10 minutes, on etcd and then on PostgreSQL (SOAK_DURATION, SOAK_CLIENTS, SOAK_WATCHES; SOAK_RUN=postgres for one); no 5xx, every write seen by every watch once and in order, no RSS or goroutine growth; writes its part of docs/reliability.md.
	SOAK=1 $(GO) test -tags faults -run "TestSoak/$(SOAK_RUN)" -count=1 -v -timeout 60m ./test/faults/

test-tools: ## Build kube-apiserver and kube-controller-manager (test/tools) into .cache/bin; skipped when up to date.
	./hack/test-tools.sh

bench: test-tools ## Side-by-side benchmarks against kube_codegen.sh and a CRD on kube-apiserver; prints the table, writes docs/benchmarks.md.
	$(GO) run ./bench $(BENCH_FLAGS)

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags e2e ./test/e2e/
	$(GO) vet -tags faults ./test/faults/

# example/pkg/apis/testdata holds the releases recorded with `apiserver-boot api snapshot`
# (v0.1.0): history, kept across regenerations; its fixtures must stay readable by
# every later build of the framework (the example's TestCompatibility).
EXAMPLE_RELEASES := example/pkg/apis/testdata
example: build ## Regenerate example/ from scratch with the current templates and generators (recorded releases are kept), and its API reference in docs/api.
	rm -rf .cache/example-releases && mkdir -p .cache
	if [ -d $(EXAMPLE_RELEASES) ]; then mv $(EXAMPLE_RELEASES) .cache/example-releases; fi
	rm -rf example && mkdir example
	cd example && ../$(BIN) $(EXAMPLE_INIT)
	cd example && ../$(BIN) $(EXAMPLE_CREATE) --kind CronTab
	cd example && ../$(BIN) $(EXAMPLE_CREATE) --kind Calendar --non-namespaced --controller=false
	cd example && ../$(BIN) create version --group stable --version v2 --kind CronTab --from v1
	if [ -d .cache/example-releases ]; then mv .cache/example-releases $(EXAMPLE_RELEASES); fi
	cd example && ../$(BIN) generate  # checks the API against the latest recorded release
	cd example && ../$(BIN) build docs --output ../docs/api  # the example's API reference, linked from docs/

demo: build ## Scaffold a sample into a temporary folder, run it on an embedded etcd and show kubectl output.
	./hack/demo.sh

clean:
	rm -rf bin .cache dist
