# prsm: the two commands a fresh machine needs are `make run` and `make test`.
GO ?= go
WORKSPACE ?= $(CURDIR)
BIN := bin/prsm
# The lean hook binary agents run around every tool call (cmd/prsm-hook);
# `prsm hooks install` uses it when it sits beside prsm. It links no libc
# (it does without package net), so a plain `go install` of it is static too.
HOOKBIN := bin/prsm-hook

.PHONY: build install installcheck vsix agents run demo serve test lint unit web extension fuzz bench release npm releasecheck

# Built as the release builds them (internal/release): without cgo and with
# -trimpath, so that `make release` and `make releasecheck` find every
# package in the build cache already.
BUILDFLAGS := -trimpath
build:
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o $(BIN) ./cmd/prsm
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o $(HOOKBIN) ./cmd/prsm-hook

# The binaries into $(PREFIX)/bin (~/.local/bin unless PREFIX=... is given).
PREFIX ?= $(HOME)/.local
install: build
	install -d "$(PREFIX)/bin"
	install -m 0755 $(BIN) "$(PREFIX)/bin/prsm"
	install -m 0755 $(HOOKBIN) "$(PREFIX)/bin/prsm-hook"

# The VS Code extension as extension/prsm.vsix, for
# `code --install-extension extension/prsm.vsix`.
vsix:
	cd extension && { [ -f node_modules/.package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error; } && npm run package

# The release, from the checked-out commit (internal/release): into dist/,
# prsm_<version>_<os>_<arch>.tar.gz (.zip for Windows) for linux, darwin and
# windows on amd64 and arm64, each with prsm, prsm-hook, LICENSE and
# README.md; the .vsix; SHA256SUMS over them. The version is the tag's (git
# describe), VERSION=... to name another. Building one commit twice gives
# the same bytes.
VERSION ?=
release: vsix
	rm -f dist/prsm_* dist/SHA256SUMS
	$(GO) run ./internal/release -out dist -version "$(VERSION)" -vsix extension/prsm.vsix archives

# The npm packages into dist/npm/*.tgz: @prsm-dev/prsm, whose prsm command
# runs the binary of the platform package npm installed beside it, and one
# package per platform (@prsm-dev/prsm-linux-x64, ...). Not published.
npm:
	rm -rf dist/npm
	$(GO) run ./internal/release -out dist -version "$(VERSION)" npm

# The release's checks that build: `make release` (less the .vsix) and
# `make npm` of HEAD in one, each of the six targets built once, two at a
# time. Every archive holds prsm and prsm-hook built for its platform,
# LICENSE and README.md, and sha256sum -c accepts SHA256SUMS; a second
# build of this platform's archive in another clone gives the same bytes,
# and its binaries print the version, commit and date; the npm packages
# install with `npm install -g` from their tarballs with no network, and
# the installed prsm runs `prsm demo`.
releasecheck:
	PRSM_RELEASE_TEST=1 $(GO) test -count=1 -v -timeout 20m -run '^TestRelease' ./internal/release

# prsm's main job for a newcomer: a scratch repository, a scripted agent
# session, and the review page's address (Ctrl-C stops and cleans up).
run: build
	$(BIN) demo

demo: run

# Serve a workspace (this repository unless WORKSPACE=dir is given).
serve: build
	$(BIN) serve --workspace "$(WORKSPACE)"

# Every check CI runs: Go (gofmt, vet, race tests, short fuzzing), the review
# page's browser test and the VS Code extension's unit and e2e tests. The two
# front-end scripts install what they need (npm packages, Debian's chromium,
# code-server) themselves.
test: lint unit agents fuzz installcheck releasecheck web extension

# The real agents' CLIs (npm, pinned, cached under ~/.cache/prsm-agents)
# against a scripted fake model, inside prsm sessions. On Linux, Claude
# Code's sandbox needs bubblewrap and socat (Debian's, when missing).
agents:
	cmd/prsm/agents-deps.sh
	PRSM_REAL_AGENTS=1 $(GO) test -vet=off -count=1 -timeout 20m -run '^TestRealAgent' ./cmd/prsm

# The README's install line, as a user runs it, into a scratch PREFIX.
installcheck:
	@dir=$$(mktemp -d) && $(MAKE) -s install PREFIX=$$dir && "$$dir/bin/prsm" --version | grep -q '^prsm version ' && "$$dir/bin/prsm-hook" --version | grep -q "^prsm-hook version " && rm -rf "$$dir" && echo "install: ok"

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@# Windows and macOS are type-checked and vetted here, tests too,
	@# though run only on Linux (docs/reference.md, "Platforms"); one
	@# architecture each. make releasecheck builds prsm and prsm-hook
	@# for all six targets; with -trimpath as it builds, the packages
	@# compiled here serve it from the build cache.
	@for t in windows/amd64 darwin/arm64; do \
	  echo "vet $$t"; GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet $(BUILDFLAGS) ./... || exit 1; done
	@# The TypeScript types of the extension and the page, generated from api.
	$(GO) run ./internal/tsgen -check

# -race turns on checkptr everywhere; modernc.org/sqlite is C translated to
# Go, whose pointer arithmetic checkptr checks on every statement (a third
# of the suite's CPU time). The race detector still covers it, and
# checkptr still covers prsm's own code.
#
# The engine's tests run one at a time, and half of them are the chain
# tests: those run beside the rest, in two go tests of their own (the
# TestChain2 ones, and the others: about even), and so do the engine's
# other tests, in two (Test[A-H]*, and the others: about even), so that no
# engine binary is the one left running on one core at the end. Go tests
# started together each compile what the cache lacks, so the engine's test
# and its dependencies (sqlite's translated C the most) are compiled once
# first, by a go test that runs none of its tests; the five go tests then
# find them in the cache (two go tests compiling them at once took 444 s
# of CPU here, one 247 s).
#
# -vet=off: go test would vet each package again, with a subset of the
# analyzers make lint's go vet ./... has just run on the same files
# (test files included), and none of that vet's results in the cache:
# go test -run '^$' ./... with everything compiled took 102 s of CPU
# here with its vet, 36 s without. make unit, agents and fuzz run after
# make lint in make test; on their own they vet nothing.
RACE = -race -vet=off -gcflags='modernc.org/...=-d=checkptr=0' -count=1 -timeout 45m
unit:
	@a=$$(mktemp "$${TMPDIR:-/tmp}/prsm-unit-chain-XXXXXX"); b=$$(mktemp "$${TMPDIR:-/tmp}/prsm-unit-chain-XXXXXX"); \
	c=$$(mktemp "$${TMPDIR:-/tmp}/prsm-unit-engine-XXXXXX"); d=$$(mktemp "$${TMPDIR:-/tmp}/prsm-unit-engine-XXXXXX"); \
	trap 'rm -f "$$a" "$$b" "$$c" "$$d"' EXIT; \
	pkgs=$$($(GO) list ./... | grep -v '/engine$$') || exit 1; \
	$(GO) test $(RACE) -run '^$$' ./engine >"$$a" 2>&1 || { cat "$$a"; exit 1; }; \
	$(GO) test $(RACE) -run '^TestChain2' ./engine >"$$a" 2>&1 & chainA=$$!; \
	$(GO) test $(RACE) -run '^TestChain' -skip '^TestChain2' ./engine >"$$b" 2>&1 & chainB=$$!; \
	$(GO) test $(RACE) -run '^Test[A-H]' -skip '^TestChain' ./engine >"$$c" 2>&1 & engA=$$!; \
	$(GO) test $(RACE) -skip '^TestChain|^Test[A-H]' ./engine >"$$d" 2>&1 & engB=$$!; \
	$(GO) test $(RACE) -skip '^TestChain' $$pkgs; rest=$$?; \
	wait $$chainA; arc=$$?; wait $$chainB; brc=$$?; wait $$engA; crc=$$?; wait $$engB; drc=$$?; \
	echo "--- the engine's chain tests (TestChain2):"; cat "$$a"; \
	echo "--- the engine's chain tests (the others):"; cat "$$b"; \
	echo "--- the engine's other tests (Test[A-H]):"; cat "$$c"; \
	echo "--- the engine's other tests (the rest):"; cat "$$d"; \
	[ $$rest = 0 ] && [ $$arc = 0 ] && [ $$brc = 0 ] && [ $$crc = 0 ] && [ $$drc = 0 ]

# Each fuzz target briefly: a count of inputs, not a duration. With a
# duration, go1.26's fuzz coordinator can fail a target that found
# nothing with "context deadline exceeded" as the time runs out
# (golang/go#75804). FUZZTIME=100000x, or a duration such as 1m, for a
# longer run.
FUZZTIME ?= 1000x
fuzz:
	@log=$$(mktemp "$${TMPDIR:-/tmp}/prsm-fuzz-XXXXXX"); trap 'rm -f "$$log"' EXIT; \
	grep -rl --include='*_test.go' --exclude-dir=node_modules '^func Fuzz' . | { while read -r f; do \
	  pkg=./$$(dirname "$${f#./}"); \
	  for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$f"); do \
	    echo "fuzz $$pkg $$t ($(FUZZTIME))"; \
	    $(GO) test -vet=off -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) "$$pkg" >"$$log" 2>&1 || { cat "$$log"; exit 1; }; \
	  done; \
	done; }

web: build
	PRSM_BIN=$(CURDIR)/$(BIN) bash web/ci.sh

extension: build
	PRSM_BIN=$(CURDIR)/$(BIN) bash extension/ci.sh

# The performance harness: 10k- and 50k-file repositories, prsm side by side
# with the git CLI approaches (BENCHFLAGS="-sizes 10k,50k,200k -json out.json"),
# then what each real agent pays per tool call for prsm's hooks
# (PRSM_HOOK_COST_ROUNDS=N for more rounds than 3).
BENCHFLAGS ?=
bench:
	$(GO) run ./bench $(BENCHFLAGS)
	@# A whole scripted run of the real Claude Code: alone, with http hooks
	@# to a listener that does nothing, and under prsm run (the figures in
	@# the test's log).
	PRSM_REAL_AGENTS=1 PRSM_CLAUDE_OVERHEAD=1 $(GO) test -count=1 -v -timeout 20m -run '^TestRealAgentClaudeOverhead$$' ./cmd/prsm | grep -E '^\s+realagent_overhead_test.go|^(ok|FAIL|---)'
	@# A row per other agent (Codex, Gemini CLI, opencode, Copilot CLI): the
	@# same scripted file-writing run with prsm's hooks, with hooks that do
	@# nothing and with none; each one's cost per tool call and prsm's share.
	PRSM_REAL_AGENTS=1 PRSM_HOOK_COST=1 $(GO) test -count=1 -v -timeout 60m -run '^TestRealAgentHookCost$$' ./cmd/prsm | grep -E '^\s+realagent_cost_test.go|^(ok|FAIL|\s*---)'

