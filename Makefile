# Every target runs with the project's pinned Node (node_modules/.bin) first
# on PATH: the jsii runtime and the CDK CLI then use Node 22, not the
# machine's.
SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)
export JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION := 1
ENV ?= dev
CDK := cdk --app "go run ." -c env=$(ENV)
GO_TEST_FLAGS ?= -race -count=1

.PHONY: deps synth test test-go lint diff deploy destroy clean

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

deps: node_modules/.package-lock.json
	go mod download

## synth: write cdk.out/*.template.json for ENV (default dev) and list the stacks.
synth: deps
	$(CDK) synth --quiet
	@ls cdk.out/*.template.json
	$(CDK) list

## test: every test (Go unit, dynalite, synth-and-assert).
test: deps
	go test $(GO_TEST_FLAGS) ./...

## lint: gofmt, go vet, staticcheck, and a tidy go.mod.
lint: deps
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	go run honnef.co/go/tools/cmd/staticcheck@v0.7.0 ./...
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
