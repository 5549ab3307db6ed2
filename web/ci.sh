#!/usr/bin/env bash
# CI for the review page (web/): every set-up step a fresh machine needs,
# then the checks and the browser test. Exits non-zero on any failure.
#
#   1. npm ci (skipped when node_modules matches package-lock.json)
#   2. Debian's chromium via apt-get, when /usr/bin/chromium is missing
#   3. the prsm binary: go build -o <tmp>/prsm ./cmd/prsm (or $PRSM_BIN if set)
#   4. tsc type check, and dist/ must equal a fresh build (it is embedded)
#   5. the end-to-end test (e2e/*.test.mjs): playwright-core drives headless
#      Chromium against a real prsm server on a scratch repository
#
# Screenshots go to ${PRSM_E2E_ARTIFACTS:-web/e2e/artifacts}.
set -euo pipefail
WEB_DIR="$(cd "$(dirname "$0")" && pwd)"
cd "$WEB_DIR"
# Colour only for a terminal that wants it: CI=true makes some tools colour
# their output even into a log file.
if [ ! -t 1 ] || [ -n "${NO_COLOR:-}" ]; then export NO_COLOR=1; unset FORCE_COLOR; fi

log() { printf 'web: %s\n' "$*" >&2; }
t0=$SECONDS
step() { log "$1 ($((SECONDS - t0))s)"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else
    log "need root for: $*"; return 1; fi
}

work="$(mktemp -d "${TMPDIR:-/tmp}/prsm-web-ci-XXXXXX")"
trap 'rm -rf "$work"' EXIT

step "npm dependencies"
if [ ! -f node_modules/.package-lock.json ] || ! cmp -s package-lock.json node_modules/.prsm-lock; then
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.prsm-lock
fi

step "chromium"
export CHROMIUM_BIN="${CHROMIUM_BIN:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM_BIN" ]; then
  log "installing Debian's chromium"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends chromium >/dev/null
fi

step "prsm binary"
if [ -z "${PRSM_BIN:-}" ] || [ ! -x "$PRSM_BIN" ]; then
  (cd .. && go build -o "$work/prsm" ./cmd/prsm)
  PRSM_BIN="$work/prsm"
fi
export PRSM_BIN

step "type check"
npx --no-install tsc --noEmit -p .

step "dist/ matches the sources"
node build.mjs --check

step "end-to-end test"
node --test --test-concurrency=1 e2e/
log "done in $((SECONDS - t0))s"
