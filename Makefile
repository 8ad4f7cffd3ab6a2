# svc: make run starts the platform, make test runs every test. Both install
# what is missing first (Debian packages, dockerd) and need root on a fresh
# machine.
SHELL := /bin/bash
GO ?= go
BIN := bin
DATA ?= ./.svc
LISTEN ?= 127.0.0.1:7070
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/svc-dev/svc/internal/version.Version=$(VERSION)
# GATEWAY_VERSION sets the semver svc-gateway reports (default: the
# release constant in internal/gateway).
ifdef GATEWAY_VERSION
LDFLAGS += -X github.com/svc-dev/svc/internal/gateway.Version=$(GATEWAY_VERSION)
endif
TESTFLAGS ?=

.PHONY: help run build images test test-images bench lint setup clean assets

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build svcd, svc and svc-gateway into bin/
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

run: build ## set up what is missing, build the system images not yet in $(DATA), start svcd
	@scripts/setup.sh run
	@# An image that fails to build is reported, and svcd starts anyway.
	-$(BIN)/svcd admin images build --data $(DATA) --missing --keep-going
	$(BIN)/svcd serve --data $(DATA) --listen $(LISTEN)

images: build ## build the eight system images; publish each that changed into $(DATA) (IMAGES="a b" for some)
	@scripts/setup.sh images
	$(BIN)/svcd admin images build --data $(DATA) $(IMAGES)

test: ## set up what is missing and run every test (real dockerd, SQLite, chromium)
	@scripts/setup.sh test
	SVC_TEST_DOCKER=1 SVC_TEST_BROWSER=1 $(GO) test -count=1 -timeout 60m $(TESTFLAGS) ./...

test-images: ## build all eight system images and test each (slow the first time)
	@scripts/setup.sh test
	SVC_TEST_DOCKER=1 SVC_TEST_ALL_IMAGES=1 $(GO) test -count=1 -timeout 60m -run TestAllImages -v ./internal/sysimage/

bench: build ## run the benchmarks and rewrite bench/RESULTS.md
	@scripts/setup.sh bench
	SVC_TEST_DOCKER=1 $(GO) run ./bench -out bench/RESULTS.md

lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

assets: ## regenerate the web terminal's vendored xterm.js from npm (committed; go build never needs npm)
	scripts/xterm.sh

clean: ## remove build output (not the data directory)
	rm -rf $(BIN)
