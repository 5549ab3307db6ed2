# prsm: the two commands a fresh machine needs are `make run` and `make test`.
GO ?= go
WORKSPACE ?= $(CURDIR)
BIN := bin/prsm

.PHONY: build run test lint unit

build:
	$(GO) build -o $(BIN) ./cmd/prsm

# Serve a workspace (this repository unless WORKSPACE=dir is given).
run: build
	$(BIN) serve --workspace "$(WORKSPACE)"

# Every check CI runs.
test: lint unit

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 -timeout 20m ./...
