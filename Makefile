# Every target runs with the project's pinned Node (node_modules/.bin) first
# on PATH: the jsii runtime and the CDK CLI then use Node 22, not the
# machine's.
SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)
ENV ?= dev
CDK := cdk --app "go run ." -c env=$(ENV)
GO_TEST_FLAGS ?= -race -count=1 -timeout 30m
# The CDK packages (synth-and-assert tests, constructs) drive the jsii runtime from one goroutine;
# under -race they would compile aws-cdk-go a second time (the CDK app
# itself is built without it) for no finding, so they run without it.
SYNTH_TEST_PKGS := ./test/... ./examples/... ./constructs/...

.PHONY: deps web-deps web synth test lint diff deploy destroy clean dev e2e screenshots sim sim-scale fuzz smoke bench bench-init

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

deps: node_modules/.package-lock.json
	go mod download

web/node_modules/.package-lock.json: web/package.json web/package-lock.json node_modules/.package-lock.json
	cd web && npm ci --no-audit --no-fund
	@touch $@

web-deps: web/node_modules/.package-lock.json

WEB_SOURCES := $(shell find web/src -type f 2>/dev/null) web/index.html web/package.json web/vite.config.ts web/tsconfig.json

web/dist/index.html: web/node_modules/.package-lock.json $(WEB_SOURCES)
	cd web && npm run build

## web: build the React app into web/dist (only when its sources changed).
web: web/dist/index.html

## synth: write the bundled cloud assembly cdk.out for ENV (default dev),
## deployable as is (`cdk deploy --app cdk.out`), and list its stacks from
## the assembly (scripts/synth.sh; test/determinism_test.go runs the same).
synth: deps web
	ENV=$(ENV) scripts/synth.sh

## test: every test: Go (unit, dynalite, synth-and-assert, simulation), the
## web app's Vitest suite, and the browser tests against `make dev`. Two
## lanes run side by side on the machine's 2 cores: unit and synth
## (CPU-bound), and vitest, e2e (which mostly waits on the dev server) and
## the simulation, so the two take about as long. Each
## step's output goes to test-results/<step>.log; a failed step's log is
## printed at the end, after the table of the steps, their wall time and
## the total (scripts/step.sh). The simulation runs a small fixed set of
## seeds under -race in the unit step, and its full test seeds without
## -race in the sim step (make sim runs 10,000 per timer and workload).
## Each lane is a process group of its own (set -m), stopped with make on
## Ctrl-C.
UNIT_CANDIDATES = $(shell go list ./... | grep -v -e '/test$$' -e '/test/' -e '/examples/' -e '/constructs/' -e 'unschedule/unschedule$$')
# Packages that import the CDK (the to-do app's stack, cmd/bench) run in the
# synth step, without -race, like SYNTH_TEST_PKGS: under -race the whole
# aws-cdk-go would be compiled again for them.
CDK_IMPORTERS = $(shell go list -f '{{.ImportPath}}{{range .Deps}} {{.}}{{end}}' ./... | awk '/ github.com\/aws\/aws-cdk-go\/awscdk\/v2( |$$)/ {print $$1}')
UNIT_TEST_PKGS = $(filter-out $(CDK_IMPORTERS),$(UNIT_CANDIDATES))
UNIT_CDK_PKGS = $(filter $(CDK_IMPORTERS),$(UNIT_CANDIDATES))
test: deps web-deps
	@scripts/step.sh --reset
	@set -m; trap 'kill -- -$$go -$$web 2>/dev/null; echo "make test: interrupted"; exit 130' INT TERM; \
	 ( scripts/step.sh unit go test $(GO_TEST_FLAGS) $(UNIT_TEST_PKGS); \
	   scripts/step.sh synth go test -count=1 -timeout 40m $(SYNTH_TEST_PKGS) $(UNIT_CDK_PKGS) ) & go=$$!; \
	 ( scripts/step.sh vitest bash -c 'cd web && npm test'; \
	   scripts/step.sh e2e $(MAKE) --no-print-directory e2e; \
	   scripts/step.sh sim env UNSCHEDULE_SCALE_FULL=1 go test -count=1 -timeout 20m ./internal/tooling/sim ) & web=$$!; set +m; \
	 wait $$go; wait $$web; scripts/step.sh --summary

## dev: the whole app on this machine with no AWS: web app, API, local
## sign-in, the pipeline on the wall clock, state in .dev-data (DEV_FLAGS
## are passed on, e.g. DEV_FLAGS="-addr 127.0.0.1:9000").
dev: deps web
	go run ./cmd/dev $(DEV_FLAGS)

## e2e: the browser tests (e2e/, playwright-core driving the system's
## Chromium, headless) against the dev server on a free port with a fresh
## data folder. Without Chromium it skips, except when CI=true.
## Screenshots: test-results/e2e/.
e2e: deps
	@chromium="$${CHROMIUM:-/usr/bin/chromium}"; if [ ! -x "$$chromium" ]; then \
	  if [ "$$CI" = "true" ]; then echo "e2e: FAILED: no Chromium at $$chromium and CI=true: install the chromium package (or set CHROMIUM)"; exit 1; fi; \
	  echo "e2e: SKIPPED: no Chromium at $$chromium; install the chromium package (apt-get install chromium) or set CHROMIUM to run the browser tests"; exit 0; fi; \
	$(MAKE) --no-print-directory web && \
	(cd e2e && npm ci --no-audit --no-fund) && \
	go build -o bin/dev ./cmd/dev && \
	E2E_SERVER_BIN=bin/dev node e2e/run.mjs

## screenshots: make e2e, then each PNG of docs/screenshots/ replaced by
## this run's screenshot of the state of that name (only when every
## scenario passed).
screenshots:
	@E2E_SCREENSHOTS=docs/screenshots $(MAKE) --no-print-directory e2e

## sim: 10,000 seeded fault-injection histories (internal/tooling/sim) of each
## workload (tasks with their reminders, campaign sends, future events,
## deferred jobs) on each timer (EventBridge Scheduler, Step Functions,
## TTL), each under its own
## faults; invariants I1-I6, C1-C4, F1-F6, J1-J5. A failing seed prints
## its replay command.
SIM_SEEDS ?= 10000
sim:
	go run ./cmd/sim -seeds $(SIM_SEEDS) -timer all -workload all $(SIM_FLAGS)
	$(MAKE) --no-print-directory sim-scale

## sim-scale: the reconciler on 100,000 pending tasks with 1% drift, repaired
## in one run's budget (without -race: the race detector makes it ~10x slower).
sim-scale:
	UNSCHEDULE_SCALE_FULL=1 go test -count=1 -run '^TestScale' ./internal/tooling/sim

## fuzz: each fuzz target for FUZZTIME (default 10s), one at a time.
FUZZTIME ?= 10s
FUZZ_TARGETS := ./internal/todo/task:FuzzParseNewTask ./internal/todo/task:FuzzParsePatch ./internal/todo/api:FuzzServe \
	./internal/todo/adapters/tasktable:FuzzDecodeStreamRecord ./lambdas/presignup:FuzzPreSignUp ./lambdas/postauth:FuzzPostAuth
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
	echo "fuzz $$pkg $$name"; go test $$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME); done

## bench: cold init against each function's SDK floor, bundle sizes, synth
## time, go test -bench, the cost per task lifecycle on each timer and per
## campaign send; records the load average and warns when the machine was
## busy; prints a table and writes docs/PERFORMANCE.md (BENCH_FLAGS are
## passed on, e.g. BENCH_FLAGS="-runs 5 -skip synth", or "-quick" to check
## the tooling). Run it on an idle machine. Minutes.
bench: deps
	go run ./cmd/bench $(BENCH_FLAGS)

## bench-init: only each function's cold init against its own floor, paired
## round by round (BENCH_INIT_RUNS rounds, default 30), printed with a
## bootstrap interval and the load average at the start and at the end;
## the doc is not written (bin/bench-init.json keeps the run). A few minutes.
BENCH_INIT_RUNS ?= 30
bench-init:
	go run ./cmd/bench -only coldinit -runs $(BENCH_INIT_RUNS) $(BENCH_FLAGS)

## lint: gofmt, go vet, staticcheck, and a tidy go.mod.
lint: deps
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
	@cp go.mod /tmp/go.mod.bak; cp go.sum /tmp/go.sum.bak; go mod tidy; \
	if ! git diff --quiet -- go.mod go.sum; then git diff -- go.mod go.sum; cp /tmp/go.mod.bak go.mod; cp /tmp/go.sum.bak go.sum; \
	echo "go mod tidy would change go.mod/go.sum: run it and commit"; exit 1; fi

## diff / deploy / destroy: need AWS credentials. ENV=dev|prod.
diff: deps web
	$(CDK) diff

deploy: deps web
	$(CDK) deploy --require-approval broadening

destroy: deps
	$(CDK) destroy

## smoke: against a real AWS account (opt-in; refuses to run without
## credentials, before building anything): deploy ENV's stack, drive the
## task lifecycle through Cognito, the API, the scheduler and SNS into an
## SQS queue, report each step's latency, and destroy what it created, also
## when a step fails (cmd/smoke, internal/tooling/smoke). SMOKE_FLAGS: -keep-stack, -allow-retained (an environment whose cdk.json removalPolicy is retain, e.g. prod),
## -yes (deploy without the approval prompt), -email-domain.
smoke: deps
	go run ./cmd/smoke -env $(ENV) -preflight
	$(MAKE) --no-print-directory web
	go run ./cmd/smoke -env $(ENV) $(SMOKE_FLAGS)

clean:
	rm -rf cdk.out bin test-results
