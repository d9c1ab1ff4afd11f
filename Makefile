# Every target runs with the project's pinned Node (node_modules/.bin) first
# on PATH: the jsii runtime and the CDK CLI then use Node 22, not the
# machine's.
SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)
ENV ?= dev
CDK := cdk --app "go run ." -c env=$(ENV)
GO_TEST_FLAGS ?= -race -count=1

.PHONY: deps web-deps web synth test lint diff deploy destroy clean

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

deps: node_modules/.package-lock.json
	go mod download

web/node_modules/.package-lock.json: web/package.json web/package-lock.json node_modules/.package-lock.json
	cd web && npm ci --no-audit --no-fund
	@touch $@

web-deps: web/node_modules/.package-lock.json

## web: build the React app into web/dist.
web: web-deps
	cd web && npm run build

## synth: write cdk.out/*.template.json for ENV (default dev) and list the stacks.
synth: deps
	$(CDK) synth --quiet
	@ls cdk.out/*.template.json
	$(CDK) list

## test: every test: Go (unit, dynalite, synth-and-assert, simulation), the web app's Vitest suite.
test: deps web-deps
	go test $(GO_TEST_FLAGS) ./...
	cd web && npm test

## lint: gofmt, go vet, staticcheck, and a tidy go.mod.
lint: deps
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
	@cp go.mod /tmp/go.mod.bak; cp go.sum /tmp/go.sum.bak; go mod tidy; \
	if ! git diff --quiet -- go.mod go.sum; then git diff -- go.mod go.sum; cp /tmp/go.mod.bak go.mod; cp /tmp/go.sum.bak go.sum; \
	echo "go mod tidy would change go.mod/go.sum: run it and commit"; exit 1; fi

## diff / deploy / destroy: need AWS credentials. ENV=dev|prod.
diff: deps
	$(CDK) diff

deploy: deps
	$(CDK) deploy --require-approval broadening

destroy: deps
	$(CDK) destroy

clean:
	rm -rf cdk.out
