# aclc — access-control compiler. Every target works from a clean clone; the
# tools it needs are fetched through the Go module proxy.
GO        ?= go
BIN       := bin/aclc
OUT       := out
EXAMPLES  := $(wildcard examples/yunikorn/*.yaml)
FUZZTIME  ?= 60s
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The stock opa binary, at the version go.mod pins, built from the module proxy.
OPA_VERSION = $(shell $(GO) list -m -f '{{.Version}}' github.com/open-policy-agent/opa)
OPA         := bin/opa
# Variables a prerequisite names are defined before the first rule that
# uses them: make expands prerequisites as it reads each rule.
HELM_VERSION := v3.22.0
HELM_DIR     := bin/helm-$(HELM_VERSION)
HELM         := $(HELM_DIR)/helm
# Gatekeeper's CLI, gator, at the release the Gatekeeper tests name,
# built from the module proxy.
GATOR_VERSION := v3.23.1
GATOR_DIR     := bin/gator-$(GATOR_VERSION)
GATOR         := $(GATOR_DIR)/gator

.PHONY: bench-config-review chromium reliability reliability-sizing js-sdk all build test race gatekeeper-test gatekeeper-e2e cel-test long-test e2e opa-test wasm-opa-corpus bench bench-kubernetes profile check demo fuzz clean slapd image image-test helm chart-check cluster-bins cluster-e2e controller-manager-bin yunikorn-bins yunikorn-e2e oracle oracle-sample cel-oracle-sample

all: build

# -buildvcs=auto on the command line wins over a GOFLAGS that turns stamping
# off, so `aclc version` names the commit whenever git can tell it.
build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/aclc

# The default suite: unit, Rego, the corpus on every in-process engine,
# property tests (3,000 decisions each, on configurations drawn from a new
# seed every run), the attacks of tests/adversarial and every command block
# of the documents. It prints a line per package as it ends and per test
# that took 10 s or more, and a failure's whole output (tests/progress).
# The stock opa binary runs the Rego unit tests and the stock-OPA tests.
# The LDAP tests start their own slapd on loopback; with ACLC_REQUIRE_SLAPD
# set they fail, rather than skip, when it is missing. helm renders the
# chart, and runs the chart's and the documents' helm commands (tests/docs
# runs every command block of README.md, docs/, the chart's README and
# examples/kubernetes/README.md with
# the aclc built here). Longer runs have their own targets: race,
# gatekeeper-test, cel-test, long-test, e2e, fuzz, reliability, bench, image-test and
# cluster-e2e; .ci/run runs test, race, gatekeeper-test, gatekeeper-e2e,
# cel-test and e2e.
test: $(OPA) $(HELM) build slapd
	@echo "== go vet ./..."
	$(GO) vet ./...
	@echo "== go test ./..."
	ACLC_REQUIRE_SLAPD=1 ACLC_OPA=$(CURDIR)/$(OPA) ACLC_HELM=$(CURDIR)/$(HELM) ACLC=$(CURDIR)/$(BIN) \
	  $(GO) run ./tests/progress -- $(GO) test -json -count=1 -timeout 30m ./...
	@echo "== opa test policy/rego"
	$(OPA) test -s schemas/json policy/rego

# The concurrency tests under the race detector (a second build of every
# package they reach, with -race).
race: slapd
	ACLC_REQUIRE_SLAPD=1 $(GO) test -count=1 -timeout 20m -race -run 'Concurrent|Race|Pool|Cache' ./wasm/ ./tests/ ./builtins/

# tests/gatekeeper is its own module (Gatekeeper's constraint framework and
# its dependencies stay out of aclc's); it runs the aclc binary built here
# and decides the generated ConstraintTemplates there.
gatekeeper-test: build
	cd tests/gatekeeper && $(GO) vet ./... && ACLC=$(CURDIR)/$(BIN) $(GO) test -count=1 ./...

# Gatekeeper's own CLI on the generated objects: gator verify on a suite
# generated from the admission and queue corpora (every validation case as
# an AdmissionReview, the deny and warn Constraints apart, audited pods), and
# on the README's example suite (examples/gatekeeper).
gatekeeper-e2e: build $(GATOR)
	cd tests/gatekeeper && ACLC=$(CURDIR)/$(BIN) ACLC_GATOR=$(CURDIR)/$(GATOR) $(GO) test -count=1 -run 'Gator' ./...

# tests/cel is its own module too (k8s.io/apiserver stays out of aclc's
# go.mod): the policies of --target kubernetes in the API server's own
# admission plugins, in process, on the user.info corpus, with the
# divergences listed under cel: in tests/exceptions.yaml. The first run
# builds k8s.io/apiserver, which takes minutes.
cel-test:
	cd tests/cel && $(GO) vet ./... && $(GO) test -count=1 ./...

$(GATOR):
	@echo "== building gator $(GATOR_VERSION) from the module proxy"
	GOBIN=$(CURDIR)/$(GATOR_DIR) $(GO) install github.com/open-policy-agent/gatekeeper/v3/cmd/gator@$(GATOR_VERSION)

# The property and differential tests at length: 30,000 decisions per
# property test, 100,000 inputs per differential test (an hour or more).
long-test: $(OPA) slapd
	ACLC_REQUIRE_SLAPD=1 ACLC_OPA=$(CURDIR)/$(OPA) $(GO) test -count=1 -timeout 180m -run 'Property|Differential' ./tests/ -args -long
	$(GO) test -count=1 -timeout 60m -run Differential ./pkg/diff/ -args -long
	$(GO) test -count=1 -run TestLoadReadsWhatAConfigMapHolds ./pkg/acl/yunikorn/ -args -long

# End to end over HTTP: every corpus case against stock `opa run` (bundles
# with no aclc builtin) and `aclc serve`, both on loopback, compared with the
# native reference; signed bundles verified, and refused once tampered with;
# aclc's HTML pages opened in Debian's headless chromium.
e2e: $(OPA) js-sdk chromium build
	ACLC_E2E=1 ACLC=$(CURDIR)/$(BIN) ACLC_OPA=$(CURDIR)/$(OPA) ACLC_JS_SDK=$(CURDIR)/$(JS_SDK) $(GO) test -count=1 -timeout 30m -run 'E2E' ./tests/

# Debian's chromium, for the tests that open aclc's HTML pages in a real
# browser (make e2e), installed non-interactively when missing.
chromium:
	@if [ -x /usr/bin/chromium ]; then exit 0; fi; \
	export DEBIAN_FRONTEND=noninteractive; \
	$(SUDO) apt-get install -y chromium || \
	  { $(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; }

# OpenLDAP's server and tools, for the LDAP tests: Debian's packages,
# installed non-interactively when missing (the package list is refreshed
# only if the first attempt fails). The packaged instance is not used.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo -E)
slapd:
	@if [ -x /usr/sbin/slapd ] && command -v ldapsearch >/dev/null 2>&1; then exit 0; fi; \
	export DEBIAN_FRONTEND=noninteractive; \
	$(SUDO) apt-get install -y slapd ldap-utils || \
	  { $(SUDO) apt-get update && $(SUDO) apt-get install -y slapd ldap-utils; }

# OPA's JavaScript SDK for Wasm policies, from the npm registry, under the
# machine's Node.js: a third Wasm runtime for the end-to-end run.
JS_SDK_VERSION := 1.10.0
JS_SDK         := bin/opa-wasm-js-$(JS_SDK_VERSION)
js-sdk: $(JS_SDK)/node_modules/@open-policy-agent/opa-wasm/package.json
$(JS_SDK)/node_modules/@open-policy-agent/opa-wasm/package.json:
	@command -v node >/dev/null || { echo "node is needed for the JavaScript SDK (apt-get install nodejs npm)"; exit 1; }
	mkdir -p $(JS_SDK)
	npm install --prefix $(JS_SDK) --no-audit --no-fund --no-save @open-policy-agent/opa-wasm@$(JS_SDK_VERSION)

$(OPA): go.mod
	@echo "== building stock opa $(OPA_VERSION) into bin/ (once per version)"
	GOBIN=$(CURDIR)/bin $(GO) install github.com/open-policy-agent/opa@$(OPA_VERSION)
	@touch $@

# The Rego unit tests under stock OPA, with the schema annotations checked.
opa-test: $(OPA)
	$(OPA) test -s schemas/json policy/rego

# docs/BENCHMARKS.md and, from the same run, docs/BENCHMARKS.json, with the
# Kubernetes policies section of bench-kubernetes.
bench: build $(OPA) bench-kubernetes
	$(GO) run ./tests/bench -out docs/BENCHMARKS.md -json docs/BENCHMARKS.json -aclc $(BIN) -opa $(OPA) -kubernetes $(KUBE_BENCH_JSON)

# The admission policies of --target kubernetes against the queue count: size,
# longest expression and the runtime cost of one admission as k8s.io/apiserver's
# CEL libraries charge it, 100 to 100,000 queues, and the largest count that
# fits (tests/cel/cmd/kubebench, in tests/cel's module). Writes
# docs/BENCHMARKS-kubernetes.json and rewrites only its own section of
# docs/BENCHMARKS.md, so it can be refreshed without the whole bench.
KUBE_BENCH_JSON := docs/BENCHMARKS-kubernetes.json
# /validate-config on the largest configurations a ConfigMap holds, into
# its section of docs/BENCHMARKS.md (make bench leaves that section as it is).
bench-config-review: build
	$(GO) run ./tests/bench -only config-review -out docs/BENCHMARKS.md -aclc $(BIN)

bench-kubernetes:
	cd tests/cel && $(GO) run ./cmd/kubebench -out $(CURDIR)/$(KUBE_BENCH_JSON)
	$(GO) run ./tests/bench -only kubernetes -kubernetes $(KUBE_BENCH_JSON) -out docs/BENCHMARKS.md

# Per decision on the wasm engine: guest function calls, opa_malloc calls
# and the most called functions (SCENARIOS=seed,vov to choose; names as in
# docs/BENCHMARKS.md). Writes nothing.
profile:
	$(GO) run ./tests/bench -profile $(if $(SCENARIOS),-scenarios $(SCENARIOS))

# Load, faults, hostile inputs, damaged bundles, concurrent edits, a
# short run of every fuzz target and the webhook's memory by configuration
# size and threads, written to docs/RELIABILITY.md from the run.
reliability: build
	$(GO) run ./tests/reliability -out docs/RELIABILITY.md -aclc $(BIN) -fuzztime $(RELIABILITY_FUZZTIME)

# Only the webhook's memory by configuration size and threads (some ten
# minutes): -update rewrites that section of docs/RELIABILITY.md and keeps
# the others as the last make reliability wrote them (any -steps works so).
reliability-sizing: build
	$(GO) run ./tests/reliability -steps sizing -update -out docs/RELIABILITY.md -aclc $(BIN)

RELIABILITY_FUZZTIME ?= 10s

# OPA's whole v1 conformance corpus on aclc's Wasm host, on wazero's
# compiler, each case checked against its expected result with and without
# the host's module rewrites (make test runs a fixed sample of it on the
# interpreter). Compiling its 4,766 modules takes about twenty minutes on
# two cores.
wasm-opa-corpus:
	ACLC_OPA_CASES=all ACLC_OPA_CASES_COMPILER=1 $(GO) test -count=1 -timeout 60m -run '^TestOPACases$$' ./wasm/

# Every fuzz target in the module, found in the test files, so a new one
# cannot be left out; -fuzz takes one target at a time, anchored.
fuzz:
	@set -e; for d in $$(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v '^./tests/gatekeeper/' | xargs -n1 dirname | sort -u); do \
	  for f in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$d/*_test.go); do \
	    echo "== $$d $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$d; \
	  done; \
	done

check: $(OPA)
	@test -z "$$(gofmt -l .)" || (echo "gofmt needed:"; gofmt -l .; exit 1)
	@test -z "$$($(OPA) fmt -l policy/rego)" || (echo "opa fmt needed:"; $(OPA) fmt -l policy/rego; exit 1)
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) mod tidy
	cd tests/gatekeeper && $(GO) run $(STATICCHECK) ./... && $(GO) mod tidy
	cd tests/cel && $(GO) run $(STATICCHECK) ./... && $(GO) mod tidy
	@git diff --exit-code -- go.mod go.sum tests/gatekeeper/go.mod tests/gatekeeper/go.sum tests/cel/go.mod tests/cel/go.sum || (echo "go.mod/go.sum not tidy"; exit 1)

# Builds every bundled example to Rego and Wasm bundles and prints, for
# each, who may submit to and administer which queue, and why. The bundles
# call no aclc builtin: when stock opa is built (make bin/opa), it answers
# from one of them beside aclc's engines.
demo: build
	@mkdir -p $(OUT)
	@for f in $(EXAMPLES); do \
	  n=$$(basename $$f .yaml); \
	  $(BIN) build --target rego --output-file $(OUT)/$$n.tar.gz $$f >/dev/null || exit 1; \
	  $(BIN) build --target wasm --output-file $(OUT)/$$n-wasm.tar.gz $$f >/dev/null || exit 1; \
	done
	@echo "== examples/yunikorn/acl-doc.yaml: the ACL documentation's partition (sue; john in dev; bob in test)"
	@$(BIN) report --engine wasm --as sue --as john --as-group dev --as bob --as-group test examples/yunikorn/acl-doc.yaml
	@for f in examples/yunikorn/sue.yaml examples/yunikorn/sue-dev.yaml examples/yunikorn/dev-test.yaml examples/yunikorn/deny-all.yaml; do \
	  echo "== $$f"; \
	  $(BIN) report --engine wasm --as sue --as john --as-group dev --as bob --as-group test $$f || exit 1; \
	done
	@for f in examples/yunikorn/default-config.yaml examples/yunikorn/configmap.yaml examples/yunikorn/org.yaml; do \
	  echo "== $$f"; $(BIN) report $$f || exit 1; $(BIN) check $$f || exit 1; echo; \
	done
	@echo "== examples/yunikorn/helm: the chart's yunikorn-defaults under an operator's yunikorn-configs, flattened as YuniKorn does"
	@$(BIN) check examples/yunikorn/helm/yunikorn-defaults.yaml examples/yunikorn/helm/yunikorn-configs.yaml examples/yunikorn/helm/namespaces.yaml
	@$(BIN) report --engine wasm --as sue --as-group admins --as bob examples/yunikorn/helm/yunikorn-defaults.yaml examples/yunikorn/helm/yunikorn-configs.yaml
	@echo "== the same decision on every engine (john, in dev, administers root.test)"
	@for e in native rego opa-wasm wasm; do \
	  printf '%-9s ' $$e; \
	  echo '{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}' | \
	    $(BIN) eval --jsonl --engine $$e --entrypoint yunikorn/queues/decision examples/yunikorn/acl-doc.yaml || exit 1; \
	done
	@if [ -x $(OPA) ]; then \
	  printf '%-9s ' opa; \
	  echo '{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}' | \
	    $(OPA) eval --stdin-input --format raw --bundle $(OUT)/acl-doc.tar.gz data.yunikorn.queues.decision || exit 1; \
	fi
	@echo
	@echo "== examples/vov/acls.yaml: VOV ACLs; who may do what on which object (roles from security.tcl)"
	@$(BIN) check examples/vov/acls.yaml | head -3
	@$(BIN) report --engine wasm --as joe@reno --as ann@reno --as pat@elko --as john@john_pc examples/vov/acls.yaml
	@echo "== the seed's vovacl examples, on a copy (out/vov/acls.yaml)"
	@mkdir -p $(OUT)/vov && cp examples/vov/acls.yaml examples/vov/security.tcl $(OUT)/vov/
	$(BIN) vovacl --spec $(OUT)/vov/acls.yaml -agent ADMIN -append -actions "VIEW RETRACE STOP FORGET" MySetName
	$(BIN) vovacl --spec $(OUT)/vov/acls.yaml -agent "USER cadmgr" -append -actions STOP /system/processcontrol
	$(BIN) vovacl --spec $(OUT)/vov/acls.yaml -agent "USERGROUP designers" -append -actions STOP,FORGET DesignSet
	$(BIN) vovacl --spec $(OUT)/vov/acls.yaml -agent "OSGROUP designers" -append -actions STOP 00123456
	$(BIN) vovacl --spec $(OUT)/vov/acls.yaml -show MySetName
	$(BIN) vovacl --spec $(OUT)/vov/acls.yaml -reset 00123456
	$(BIN) vovacl --spec $(OUT)/vov/acls.yaml -show 00123456
	@echo "== OWNER is the project owner: give joe, who owns MySetName, his own USER entry (-v says what changes)"
	$(BIN) vovacl -v --spec $(OUT)/vov/acls.yaml -agent USER -append -actions "EDIT VIEW FORGET" MySetName
	$(BIN) vovacl --spec $(OUT)/vov/acls.yaml -show 00012345
	@echo "== ann may not change DesignSet's ACL (she lacks DELEGATE): refused, file unchanged"
	@! $(BIN) vovacl --spec $(OUT)/vov/acls.yaml --as ann --host reno -agent "USER ann" -append -actions EDIT DesignSet
	@echo "== the same VOV decision on every engine (pat, LEADER from elko, may CHOWN job 00123456)"
	@for e in native rego opa-wasm wasm; do \
	  printf '%-9s ' $$e; \
	  echo '{"object":"00123456","action":"CHOWN","user":"pat","host":"elko"}' | \
	    $(BIN) eval --jsonl --engine $$e --entrypoint vov/acl/decision examples/vov/acls.yaml || exit 1; \
	done
	@echo "== Gatekeeper: the admission settings as a ConstraintTemplate and Constraint"
	$(BIN) build --target gatekeeper --output-file $(OUT)/user-info-gatekeeper.yaml examples/admission/configmap.yaml
	@echo "Rego and Wasm bundles written to $(OUT)/"

# The container image, built in Go (go-containerregistry): a static aclc on
# an empty base for linux/amd64 and linux/arm64, as an OCI layout tarball.
# No Docker daemon, nothing pulled. Dates come from SOURCE_DATE_EPOCH (the
# last commit's by default), so one commit always gives the same bytes.
# Load or push it with skopeo (oci-archive:), podman, or docker load (25+).
IMAGE             := $(OUT)/aclc-image.tar
IMAGE_REPOSITORY  ?= ghcr.io/aclc-dev/aclc
IMAGE_VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE_REVISION    ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
image:
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(GO) run ./tests/image/build -o $(IMAGE) \
	  -repository $(IMAGE_REPOSITORY) -version $(IMAGE_VERSION) -revision $(IMAGE_REVISION)

# Checks the tarball `make image` wrote: layout, both platforms, user,
# entrypoint, labels; runs the amd64 binary from its layer.
image-test: image
	ACLC_IMAGE=$(CURDIR)/$(IMAGE) $(GO) test -count=1 ./tests/image/...

# helm, built from the Go module proxy and kept under bin/helm-<version>
# (HELM is defined at the top, where make test's prerequisites can see it).
helm: $(HELM)
$(HELM):
	@echo "== building helm $(HELM_VERSION) into $(HELM_DIR)/ (once per version)"
	GOBIN=$(CURDIR)/$(HELM_DIR) $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

# Lints the chart and renders it in each mode it has (written to
# out/chart/ for reading), then decodes every manifest strictly with the
# Kubernetes API types and checks how the parts fit (./charts).
# helm installed with go install has no Kubernetes version stamped in and
# would render for v1.20; render for a cluster the chart supports.
CHART        := charts/aclc
KUBE_VERSION := 1.33.0
chart-check: build $(HELM)
	@mkdir -p $(OUT)/chart
	$(HELM) lint --strict --kube-version $(KUBE_VERSION) $(CHART)
	$(HELM) lint --strict --kube-version $(KUBE_VERSION) $(CHART) --set certificates.provider=cert-manager --set webhook.type=validating --set serve.enabled=true
	$(HELM) template aclc $(CHART) --namespace aclc-system --kube-version $(KUBE_VERSION) > $(OUT)/chart/default.yaml
	$(HELM) template aclc $(CHART) --namespace aclc-system --kube-version $(KUBE_VERSION) --set certificates.provider=cert-manager > $(OUT)/chart/cert-manager.yaml
	$(HELM) template aclc $(CHART) --namespace aclc-system --kube-version $(KUBE_VERSION) --set webhook.type=validating --set webhook.failurePolicy=Fail > $(OUT)/chart/validating.yaml
	$(HELM) template aclc $(CHART) --namespace aclc-system --kube-version $(KUBE_VERSION) --set serve.enabled=true > $(OUT)/chart/serve.yaml
	$(HELM) lint --strict --kube-version $(KUBE_VERSION) $(CHART) --set serve.enabled=true --set serve.tls.enabled=true
	$(HELM) template aclc $(CHART) --namespace aclc-system --kube-version $(KUBE_VERSION) --set serve.enabled=true --set serve.tls.enabled=true > $(OUT)/chart/serve-tls.yaml
	$(HELM) lint --strict --kube-version $(KUBE_VERSION) $(CHART) --set yunikorn.fromCluster=false --set serve.enabled=true
	$(HELM) template aclc $(CHART) --namespace aclc-system --kube-version $(KUBE_VERSION) --set yunikorn.fromCluster=false --set serve.enabled=true > $(OUT)/chart/mounted.yaml
	$(HELM) template aclc $(CHART) --namespace yunikorn --kube-version $(KUBE_VERSION) 2>&1 | grep -q 'release namespace "yunikorn" is YuniKorn'"'"'s'
	$(HELM) lint --strict --kube-version $(KUBE_VERSION) $(CHART) --set serviceMonitor.enabled=true --set commonLabels.team=platform --set podLabels.tier=admission --set serve.enabled=true
	$(HELM) template aclc $(CHART) --namespace aclc-system --kube-version $(KUBE_VERSION) --set serviceMonitor.enabled=true --set serve.enabled=true > $(OUT)/chart/service-monitor.yaml
# mode=policies: the admission policies of --target kubernetes instead of the
# webhook, for a cluster that serves them (MutatingAdmissionPolicy v1: 1.36).
	$(BIN) build --target kubernetes --output-file $(OUT)/chart/policies-input.yaml examples/kubernetes/yunikorn-configs.yaml
	$(HELM) lint --strict --kube-version 1.36.0 $(CHART) --set mode=policies --set-file policies=$(OUT)/chart/policies-input.yaml
	$(HELM) template aclc $(CHART) --namespace aclc-system --kube-version 1.36.0 --set mode=policies --set-file policies=$(OUT)/chart/policies-input.yaml > $(OUT)/chart/policies.yaml
# The README's command as written: no --kube-version, helm's default.
	$(HELM) template aclc $(CHART) --namespace aclc-system > /dev/null
	ACLC=$(abspath $(BIN)) ACLC_HELM=$(abspath $(HELM)) $(GO) test -count=1 ./charts/...

# etcd and kube-apiserver for the cluster end-to-end run, each built from the
# Go module proxy in its own throwaway module (tests/cluster/build/*), kept
# under bin/<name>-<version>/ and skipped once built. kube-apiserver is a
# long build (tens of minutes on a small machine).
ETCD_VERSION           := v3.6.16
KUBE_APISERVER_VERSION := v1.37.2
ETCD                   := bin/etcd-$(ETCD_VERSION)/etcd
KUBE_APISERVER         := bin/kube-apiserver-$(KUBE_APISERVER_VERSION)/kube-apiserver
cluster-bins: $(ETCD) $(KUBE_APISERVER)
$(ETCD):
	cd tests/cluster/build/etcd && $(GO) build -trimpath -o $(CURDIR)/$@ .
# The version is stamped as kubernetes' own build does, so that /version and
# --version say which release this is.
KUBE_VERSION_PKG := k8s.io/component-base/version
KUBE_LDFLAGS     := -X $(KUBE_VERSION_PKG).gitVersion=$(KUBE_APISERVER_VERSION) \
  -X $(KUBE_VERSION_PKG).gitMajor=$(word 1,$(subst ., ,$(patsubst v%,%,$(KUBE_APISERVER_VERSION)))) \
  -X $(KUBE_VERSION_PKG).gitMinor=$(word 2,$(subst ., ,$(KUBE_APISERVER_VERSION))) \
  -X $(KUBE_VERSION_PKG).gitTreeState=clean
$(KUBE_APISERVER):
	cd tests/cluster/build/kube-apiserver && $(GO) build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $(CURDIR)/$@ k8s.io/kubernetes/cmd/kube-apiserver
# kube-controller-manager of the same release, for the controllers that make
# workloads' pods in yunikorn-e2e; its own throwaway module beside
# kube-apiserver's, with the same staging pins.
KUBE_CONTROLLER_MANAGER := bin/kube-controller-manager-$(KUBE_APISERVER_VERSION)/kube-controller-manager
controller-manager-bin: $(KUBE_CONTROLLER_MANAGER)
$(KUBE_CONTROLLER_MANAGER):
	cd tests/cluster/build/kube-controller-manager && $(GO) build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $(CURDIR)/$@ k8s.io/kubernetes/cmd/kube-controller-manager

# aclc against a real API server: etcd and kube-apiserver on loopback with
# generated certificates, token users and RBAC; the webhook registered by
# URL, the configuration read from the cluster and edited there; then the
# policies of --target kubernetes applied with no webhook at all (tests/cluster).
# Not part of `make test`. ETCD, KUBE_APISERVER and HELM may name binaries
# built elsewhere (absolute paths); CLUSTER_RUN=TestClusterPolicies runs one test.
cluster-e2e: build $(ETCD) $(KUBE_APISERVER) $(HELM)
	ACLC_CLUSTER_E2E=1 ACLC=$(abspath $(BIN)) ACLC_ETCD=$(abspath $(ETCD)) \
	  ACLC_KUBE_APISERVER=$(abspath $(KUBE_APISERVER)) ACLC_HELM=$(abspath $(HELM)) \
	  $(GO) test -count=1 -timeout 30m -v $(if $(CLUSTER_RUN),-run '$(CLUSTER_RUN)') ./tests/cluster/

# YuniKorn live beside aclc on the real API server (tests/cluster,
# yunikorn_test.go): YuniKorn's scheduler (the k8shim's shim) and admission
# controller of each release the proxy serves the k8shim at, built from the
# module proxy in a throwaway module per release (tests/yunikorn/build/v*,
# with the k8shim's own replace pins), kept under bin/<name>-<version>/.
# The run starts etcd, kube-apiserver, both YuniKorn processes and aclc on
# loopback, with kube-controller-manager for the controllers that make
# workloads' pods, creates the corpus's pods and workloads as different users
# and compares YuniKorn's verdicts, user.info and application queues (of the
# pods, and of the pods the controllers make) with aclc's; then
# aclc's --target kubernetes policies beside YuniKorn's webhook with
# bypassAuth (docs/ORACLE.md, "YuniKorn live"). Not part of `make test`.
# YUNIKORN_RUN=<regexp> runs one test; YUNIKORN_SOURCES=N runs the corpus
# cases of N of its configurations, spread evenly over the corpus (0: all, which takes
# long: YuniKorn restarts on each configuration and each reused application).
YUNIKORN_LIVE_RELEASES = 1.9.0 1.8.0
YUNIKORN_SOURCES ?= 6
YUNIKORN_BINS = $(foreach v,$(YUNIKORN_LIVE_RELEASES),bin/yunikorn-scheduler-v$(v)/yunikorn-scheduler bin/yunikorn-admission-controller-v$(v)/yunikorn-admission-controller)
yunikorn-bins: $(YUNIKORN_BINS)
bin/yunikorn-scheduler-v%/yunikorn-scheduler:
	cd tests/yunikorn/build/v$* && $(GO) build -trimpath -o $(CURDIR)/$@ github.com/apache/yunikorn-k8shim/pkg/cmd/shim
bin/yunikorn-admission-controller-v%/yunikorn-admission-controller:
	cd tests/yunikorn/build/v$* && $(GO) build -trimpath -o $(CURDIR)/$@ github.com/apache/yunikorn-k8shim/pkg/cmd/admissioncontroller
yunikorn-e2e: build $(ETCD) $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(YUNIKORN_BINS)
	rc=0; for v in $(YUNIKORN_LIVE_RELEASES); do echo "== YuniKorn $$v live"; \
	  ACLC_YUNIKORN_E2E=1 ACLC=$(abspath $(BIN)) ACLC_ETCD=$(abspath $(ETCD)) \
	  ACLC_KUBE_APISERVER=$(abspath $(KUBE_APISERVER)) ACLC_KUBE_CONTROLLER_MANAGER=$(abspath $(KUBE_CONTROLLER_MANAGER)) \
	  ACLC_YUNIKORN_VERSION=$$v ACLC_YUNIKORN_SOURCES=$(YUNIKORN_SOURCES) \
	  ACLC_YUNIKORN_SCHEDULER=$(CURDIR)/bin/yunikorn-scheduler-v$$v/yunikorn-scheduler \
	  ACLC_YUNIKORN_ADMISSION=$(CURDIR)/bin/yunikorn-admission-controller-v$$v/yunikorn-admission-controller \
	  $(GO) test -count=1 -timeout 120m -v -run '$(or $(YUNIKORN_RUN),TestYuniKornLive)' ./tests/cluster/ || rc=1; done; exit $$rc

# YuniKorn itself beside aclc (tests/oracle, its own module): YuniKorn's core,
# built from the modules of every release the module proxy serves, decides
# the corpus's queue and placement cases, the release table's examples and
# drawn configurations beside aclc's reference and beside aclc's other
# engines (rego, wasm, opa-wasm, aclc serve over HTTP: the corpus's
# configurations and every ACLC_ORACLE_ENGINES_EVERY-th drawn one); the
# Kubernetes queue policies admit the pods of the placements YuniKorn
# decided (tests/cel, from the file ACLC_ORACLE_CASES); the k8shim's admission
# controller decides the user.info corpus beside aclc, and the Kubernetes
# user.info policies are held to its answers (tests/cel, from the file
# ACLC_ORACLE_SHIM_CASES) (docs/ORACLE.md).
# ACLC_ORACLE_SEED replays a drawn run; ACLC_ORACLE_N sets its length.
ORACLE_RELEASES = 1.5.0 1.5.1 1.6.0 1.6.1 1.8.0 1.9.0
# The k8shim (admission controller) is served at these only.
ORACLE_SHIM_RELEASES = 1.8.0 1.9.0
# The releases whose pods' placements the queue policies are held to.
ORACLE_CEL_RELEASES = $(ORACLE_RELEASES)
oracle:
	@mkdir -p bin && rm -f bin/oracle-report.tsv bin/oracle-cases-*.jsonl bin/oracle-shim-cases-*.jsonl
	set -e; cd tests/oracle && $(GO) vet ./... && for v in $(ORACLE_RELEASES); do \
	  tags=; modfile=; case $$v in 1.5.*|1.6.*) tags=-tags=yunikorn_pre18;; esac; \
	  [ $$v = 1.9.0 ] || modfile=-modfile=mod/v$$v.mod; echo "== YuniKorn $$v"; \
	  ACLC_ORACLE_N=$${ACLC_ORACLE_N:-2000} ACLC_ORACLE_REPORT=$(CURDIR)/bin/oracle-report.tsv \
	  ACLC_ORACLE_CASES=$(CURDIR)/bin/oracle-cases-$$v.jsonl $(GO) test $$tags $$modfile -count=1 -timeout 60m ./...; done
	set -e; cd tests/cel && for v in $(ORACLE_CEL_RELEASES); do echo "== queue policies, YuniKorn $$v"; \
	  ACLC_ORACLE_CASES=$(CURDIR)/bin/oracle-cases-$$v.jsonl ACLC_ORACLE_REPORT=$(CURDIR)/bin/oracle-report.tsv \
	    $(GO) test -count=1 -run '^TestQueueAgreesWithYuniKornOnOracleRun$$' .; done
	set -e; cd tests/oracle/shim && $(GO) vet ./... && for v in $(ORACLE_SHIM_RELEASES); do \
	  modfile=; [ $$v = 1.9.0 ] || modfile=-modfile=mod/v$$v.mod; echo "== YuniKorn k8shim $$v"; \
	  ACLC_ORACLE_SHIM_CASES=$(CURDIR)/bin/oracle-shim-cases-$$v.jsonl \
	  ACLC_ORACLE_REPORT=$(CURDIR)/bin/oracle-report.tsv $(GO) test $$modfile -count=1 ./...; done
	set -e; cd tests/cel && for v in $(ORACLE_SHIM_RELEASES); do echo "== user.info policies, YuniKorn k8shim $$v"; \
	  ACLC_ORACLE_SHIM_CASES=$(CURDIR)/bin/oracle-shim-cases-$$v.jsonl ACLC_ORACLE_REPORT=$(CURDIR)/bin/oracle-report.tsv \
	    $(GO) test -count=1 -timeout 60m -run '^TestUserInfoAgreesWithYuniKornOnOracleRun$$' .; done
	@cat bin/oracle-report.tsv

# The user.info reviews of tests/cel's TestUserInfoAgreesWithYuniKorn: the
# shim oracle at 1.9.0 writes every review it decides with the admission
# controller's answer, and a bounded sample of them is kept
# (tests/cel/cmd/oraclesample: the first of each kind of answer).
cel-oracle-sample:
	@mkdir -p bin && rm -f bin/oracle-shim-cases-sample.jsonl
	cd tests/oracle/shim && ACLC_ORACLE_SHIM_CASES=$(CURDIR)/bin/oracle-shim-cases-sample.jsonl \
	  $(GO) test -count=1 -run '^(TestAdmissionCorpusAgainstYuniKorn|TestDrawnPodsAgainstYuniKorn)$$' .
	cd tests/cel && $(GO) run ./cmd/oraclesample < $(CURDIR)/bin/oracle-shim-cases-sample.jsonl > testdata/oracle-userinfo-cases.jsonl

# The bounded sample CI runs: the default release, 200 drawn configurations
# (every ACLC_ORACLE_ENGINES_EVERY-th, by default the 20th, on the engines too).
oracle-sample:
	cd tests/oracle && ACLC_ORACLE_N=200 $(GO) test -count=1 ./...

clean:
	rm -rf bin $(OUT)
