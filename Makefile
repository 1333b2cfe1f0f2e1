# kubectl-slices: `make demo` shows it working, `make test` proves it.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
# The commit's time, not the build's, so that builds reproduce.
COMMIT_DATE ?= $(shell TZ=UTC git show -s --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD 2>/dev/null)
PKG_CMD := github.com/kubectl-slices/kubectl-slices/pkg/cmd
LDFLAGS := -X $(PKG_CMD).Version=$(VERSION) -X $(PKG_CMD).Commit=$(COMMIT) -X $(PKG_CMD).Date=$(COMMIT_DATE)
# Build tags of every build (why: hack/build-tags).
TAGS := $(shell grep -v '^\#' hack/build-tags | paste -sd, -)
# Control-plane binaries (etcd, kube-apiserver, kube-controller-manager,
# kubectl) are built once from the Go module proxy into the user cache.
CONTROL_PLANE = $(shell ./hack/build-control-plane.sh | tail -n 1)
# CoreDNS, for the DNS reader's e2e test, is built once the same way (hack/build-coredns.sh).
COREDNS = $(shell ./hack/build-coredns.sh | tail -n 1)
# promtool, for the Prometheus rules' tests, is built once the same way (hack/build-promtool.sh).
PROMTOOL = $(shell ./hack/build-promtool.sh | tail -n 1)

.PHONY: all build dist test compat unit fuzz fuzz-short mutate diff-long e2e bench bench-e2e bench-check bench-cache bench-watch bench-watch-idle bench-webhook bench-envelope bench-flip-size bench-explain-pod e2e-dns coredns promtool e2e-node bench-verify node-if-possible soak lint docs docs-check demo control-plane clean

all: build

build:
	$(GO) build -tags "$(TAGS)" -ldflags "$(LDFLAGS)" -o bin/kubectl-slices ./cmd/kubectl-slices

## dist: release archives for every platform (dist/), checksums.txt, and plugin.yaml
## rendered from krew/.krew.yaml with their sha256; reproducible from a commit.
## DIST_VERSION=v1.2.3 to name a release (default: the tag at HEAD, else a pseudo-version).
dist:
	rm -rf dist
	$(GO) run ./hack/dist -out dist $(if $(DIST_VERSION),-version $(DIST_VERSION))

## test: unit tests (with the differential test against upstream), the e2e suite, and the
## real-node tests (about a minute warm; they skip, saying so, without root, runc or the CNI plugins)
test: unit e2e node-if-possible

node-if-possible:
	@if ./hack/node-prereqs.sh; then $(MAKE) --no-print-directory e2e-node; \
	else echo "skipping the real-node tests (make e2e-node): their prerequisites are missing"; fi

unit: fuzz-short
	$(GO) test ./... -count=1
	@# Mirroring and legacy Endpoints against kube-controller-manager's own
	@# controllers, kube-proxy's expected set and chains against kube-proxy's
	@# code; a module of its own, so its dependencies never change
	@# what the control plane is built from.
	cd test/upstreamdiff && $(GO) test ./... -count=1

## fuzz-short: the planner's invariant fuzzer for 10 s (make fuzz FUZZTIME=5m for longer)
FUZZTIME ?= 10s
fuzz-short fuzz:
	$(GO) test ./pkg/reconcile -run '^$$' -fuzz FuzzPlanInvariants -fuzztime $(FUZZTIME)

## mutate: apply each mutant of hack/mutants.txt to a temporary copy and
## report which tests kill it; fails if one survives (not part of make test)
mutate:
	$(GO) run ./hack/mutate

## diff-long: the differential test against upstream over 10,000 random inputs, and the
## watch loop's incremental plans against the full planner over 20,000 random event sequences
DIFFCASES ?= 10000
MEMOSEQUENCES ?= 20000
diff-long:
	$(GO) test ./pkg/reconcile -run 'TestDifferentialAgainstUpstream|TestMemoAgainstCompute' -count=1 -v -timeout 30m -diff-cases $(DIFFCASES) -memo-sequences $(MEMOSEQUENCES)

e2e: control-plane coredns promtool
	cd test && KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" KUBECTL_SLICES_COREDNS="$(COREDNS)" KUBECTL_SLICES_PROMTOOL="$(PROMTOOL)" \
		$(GO) test ./... -count=1 -timeout 40m
	@# Nothing the tests started may outlive them.
	@if pgrep -f "$(CONTROL_PLANE)/(etcd|kube-apiserver|kube-controller-manager)" >/dev/null; then \
		echo "control-plane processes left behind:"; pgrep -af "$(CONTROL_PLANE)/"; exit 1; fi

control-plane:
	@./hack/build-control-plane.sh >/dev/null

coredns:
	@./hack/build-coredns.sh >/dev/null

promtool:
	@./hack/build-promtool.sh >/dev/null

## e2e-dns: only the DNS reader's e2e tests, against a real CoreDNS run as a local process
e2e-dns: control-plane coredns
	cd test && KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" KUBECTL_SLICES_COREDNS="$(COREDNS)" $(GO) test ./e2e -run '^TestDNS' -count=1 -v -timeout 10m

## e2e-node: kubectl-slices as real Pods on a real node (kubelet, containerd, bridge CNI, kube-proxy
## as a DaemonSet, CoreDNS as kubeadm's Deployment and kube-dns Service, images built here), as
## root in namespaces of its own; kubelet, kube-proxy and containerd are built once
## (hack/build-node.sh), CoreDNS too (hack/build-coredns.sh).
## Needs root, runc and the CNI plugins (hack/node-prereqs.sh installs Debian's when it can).
e2e-node: control-plane coredns promtool
	@./hack/node-prereqs.sh
	cd test && KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" KUBECTL_SLICES_NODE_BIN_DIR="$$(../hack/build-node.sh | tail -n 1)" \
		KUBECTL_SLICES_COREDNS="$(COREDNS)" KUBECTL_SLICES_PROMTOOL="$(PROMTOOL)" \
		$(GO) test ./e2enode -count=1 -v -timeout 20m
	@if pgrep -f "$$(./hack/build-node.sh | tail -n 1)/(kubelet|containerd)" >/dev/null || pgrep -x kube-proxy >/dev/null \
		|| pgrep -fx '/coredns -conf /etc/coredns/Corefile' >/dev/null; then \
		echo "node processes left behind:"; pgrep -af "$$(./hack/build-node.sh | tail -n 1)/"; pgrep -ax kube-proxy; \
		pgrep -afx '/coredns -conf /etc/coredns/Corefile'; exit 1; fi

## compat: the core scenarios against kube-apiserver and kube-controller-manager of every
## supported release, each built once from the Go module proxy (not part of make test)
COMPAT_VERSIONS ?= v1.31.14 v1.32.13 v1.33.13 v1.34.4 v1.35.4 v1.36.3
COMPAT_TESTS ?= ^(TestSyncRepairsServiceWithoutEndpoints|TestSyncDryRun|TestSyncLeavesForeignSlicesAlone|TestExplainBrokenThenRepaired|TestCheckFindsPlantedProblems|TestRepairLifecycle|TestReleaseRefusesOnDifference|TestReleaseEndpointsToController|TestPruneOrphans|TestPruneEndpoints|TestWatchKeepsSlicesCurrent|TestWebhook|TestDeployNamespaceScoped|TestDeployClusterRBAC|TestDeployWebhookConfigs|TestLegacyControllers|TestWatchMirrorsEndpoints|TestWatchMirrorsLikeController|TestWatchKeepsLegacyEndpoints|TestFidelity|TestFidelityRandomServices|TestExplainVersionNotes)$$
compat: control-plane
	COMPAT_TESTS='$(COMPAT_TESTS)' ./hack/compat.sh $(COMPAT_VERSIONS)

## bench: planner benchmarks, ours beside upstream k8s.io/endpointslice
bench:
	$(GO) test ./pkg/reconcile -run '^$$' -bench . -benchmem -benchtime 3x

## bench-e2e: sync of a 5,000-Pod Service on the real API server, ours vs upstream
bench-e2e: control-plane
	cd test && KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" $(GO) test ./e2e -run '^$$' -bench '^BenchmarkSync$$' -benchtime 3x -timeout 30m

## bench-verify: verify --all beside each node's floor (its own listing of the rules verify reads, alone,
## through the same exec and in the node's network namespace), and verify --watch's rounds and a deleted
## rule's time to DRIFT, over 1,000 Services on the two real nodes (as e2e-node: root, runc, CNI).
## VERIFY_SERVICES=10000 for another size (the waits and the test's timeout grow in proportion);
## VERIFY_PROFILE=DIR writes a CPU profile of each node's verify --node alone there
VERIFY_SERVICES ?= 1000
bench-verify: control-plane
	@./hack/node-prereqs.sh
	cd test && VERIFY_SERVICES=$(VERIFY_SERVICES) KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" KUBECTL_SLICES_NODE_BIN_DIR="$$(../hack/build-node.sh | tail -n 1)" \
		$(GO) test ./e2enode -run '^$$' -bench '^BenchmarkVerify(All|Watch)$$' -benchtime 1x -v -timeout $$(( ($(VERIFY_SERVICES) + 999) / 1000 * 30 ))m

## bench-check: check -A over 500 Services x 10 Pods on the real API server
bench-check: control-plane
	cd test && KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" $(GO) test ./e2e -run '^$$' -bench BenchmarkCheckAll -benchtime 5x -timeout 20m

## bench-cache: sync --all -A over 500 Services x 10 Pods in 20 namespaces, beside kube-controller-manager
bench-cache: control-plane
	cd test && KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" $(GO) test ./e2e -run '^$$' -bench BenchmarkSyncAllNamespaces -benchtime 1x -timeout 30m

## bench-webhook: admission latency of the webhook on a namespace of 5,000 Pods, and its API requests per admission
bench-webhook: control-plane
	cd test && KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" $(GO) test ./e2e -run '^$$' -bench BenchmarkWebhookLatency -benchtime 1x -timeout 30m

## bench-watch: sync --watch latency and memory beside kube-controller-manager on a 20,000-Pod Service,
## and CPU per flip in a 20,000-Pod Service against a 200-Pod one (bench-flip-size)
bench-watch: control-plane
	cd test && KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" $(GO) test ./e2e -run '^$$' -bench 'BenchmarkWatch(Latency|EndpointsMemory|FlipSize)' -benchtime 1x -timeout 90m

## bench-flip-size: CPU per readiness flip, ours and kube-controller-manager's, in a 200-Pod and a
## 20,000-Pod Service in one run, and the ratio of the two (FLIP_SIZE_SMALL, FLIP_SIZE_LARGE, FLIP_SIZE_FLIPS)
bench-flip-size: control-plane
	cd test && KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" $(GO) test ./e2e -run '^$$' -bench '^BenchmarkWatchFlipSize$$' -benchtime 1x -timeout 60m

## bench-explain-pod: explain svc/, pod/ and --ip in a namespace of 2,000 Services and 20,000 Pods:
## wall time and API requests (EXPLAIN_BENCH_PODS=2000 for a smaller namespace)
bench-explain-pod: control-plane
	cd test && KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" $(GO) test ./e2e -run '^$$' -bench '^BenchmarkExplainPod$$' -benchtime 1x -timeout 60m

## bench-watch-idle: CPU and memory of sync --watch --leader-elect idling on the 20,000-Pod cluster beside kube-controller-manager
bench-watch-idle: control-plane
	cd test && KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" $(GO) test ./e2e -run '^$$' -bench BenchmarkIdleWatch -benchtime 1x -timeout 60m

## bench-envelope: the envelope's ladder beside kube-controller-manager: 10,000, 50,000, 100,000 and
## 150,000 Pods (15 a Service, 100 Services a namespace, 30 Pods a Node; every 20th Pod not ready, every
## 4th Service two named ports, every 10th dual-stack), each size on a control plane of its own: cold
## sync --all -A, no-op resync, check -A, explain, sync --watch from cold (memory, flips), the webhook;
## prints the table and draws the plots into ENVELOPE_OUT (not part of make test; about 40 minutes).
## ENVELOPE_LADDER=10000,50000 or ENVELOPE_PODS=10000 choose the sizes
ENVELOPE_LADDER ?= 10000,50000,100000,150000
ENVELOPE_OUT ?= /tmp/kubectl-slices-envelope
bench-envelope: control-plane
	mkdir -p $(ENVELOPE_OUT)
	cd test && ENVELOPE_LADDER=$(or $(ENVELOPE_PODS),$(ENVELOPE_LADDER)) ENVELOPE_OUT=$(ENVELOPE_OUT) KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" \
		$(GO) test ./e2e -run '^$$' -bench '^BenchmarkEnvelope$$' -benchtime 1x -timeout 300m
	cd test && $(GO) run ./cmd/envelopeplot -in $(ENVELOPE_OUT)/envelope.csv -out $(ENVELOPE_OUT)

## soak: the in-cluster safety net (two replicas, leader election, --standby) beside
## kube-controller-manager under churn and a rotation of faults, checked from the audit log
## and the API (not part of make test). SOAK_DURATION (20m), SOAK_RATE (changes a second, 3),
## SOAK_FAULT_EVERY (3m), SOAK_OUT (default: a new directory under the temporary directory);
## SOAK_FLAGS for the rest (go run ./cmd/soak -h in test/)
SOAK_DURATION ?= 20m
SOAK_RATE ?= 3
SOAK_FAULT_EVERY ?= 3m
soak: control-plane
	cd test && KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" $(GO) run ./cmd/soak -duration $(SOAK_DURATION) -rate $(SOAK_RATE) \
		-fault-every $(SOAK_FAULT_EVERY) $(if $(SOAK_OUT),-out $(SOAK_OUT)) $(SOAK_FLAGS)

## docs: regenerate the command reference docs/reference/ from the command tree and pkg/help/text,
## and the Prometheus rules in monitoring/ from pkg/monitoring
docs:
	$(GO) run ./hack/docgen -out docs/reference
	$(GO) run ./hack/monitoringgen -out monitoring

## docs-check: fail when docs/reference or monitoring/ is not what make docs would write (part of make lint)
docs-check:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(GO) run ./hack/docgen -out "$$tmp" >/dev/null && \
	diff -ru docs/reference "$$tmp" || { echo "docs/reference is stale: run make docs and commit it"; exit 1; }
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(GO) run ./hack/monitoringgen -out "$$tmp" && \
	diff -ru monitoring "$$tmp" || { echo "monitoring/ is stale: run make docs and commit it"; exit 1; }

lint: docs-check
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...
	@# The planner, explain, mirror and endpoints packages and verify's
	@# pure parts (pkg/verify/proxyexpect, dnsexpect, proxyread, verdict)
	@# stay pure: no client, no I/O, no clock; webhook, explain and printers reach no
	@# writer; pkg/exit imports no project package but internal/english
	@# (also enforced by go test ./hack/purity).
	$(GO) run ./hack/purity
	cd test && $(GO) vet ./...
	cd test/upstreamdiff && $(GO) vet ./...
	$(GO) mod tidy && cd test && $(GO) mod tidy && cd upstreamdiff && $(GO) mod tidy
	@git diff --exit-code -- go.mod go.sum test/go.mod test/go.sum test/upstreamdiff/go.mod test/upstreamdiff/go.sum || { echo "go mod tidy changed go.mod/go.sum"; exit 1; }

## demo: a local control plane with a Service that has no endpoints, repaired by kubectl slices;
## ACT=standby instead shows the safety net: sync --watch --standby beside kube-controller-manager,
## writing nothing, taking over when the controller is killed, handing back when it returns
ACT ?= repair
demo: build control-plane
	cd test && KUBECTL_SLICES_BIN_DIR="$(CONTROL_PLANE)" $(GO) run ./cmd/localcluster -demo -act $(ACT) -plugin-dir ../bin $(DEMO_FLAGS)

clean:
	rm -rf bin dist
	@echo "control-plane binaries stay cached in $${XDG_CACHE_HOME:-$$HOME/.cache}/kubectl-slices (rm -rf it to rebuild)"
