#!/usr/bin/env bash
# CI for the VS Code extension: every set-up step a fresh machine of this kind
# needs, then the unit tests and the end-to-end test. Exits non-zero on any
# failure. Called by the top-level `make test`.
#
#   1. npm ci (skipped when node_modules matches package-lock.json)
#   2. Debian's chromium via apt-get, if /usr/bin/chromium is missing
#   3. code-server 4.100.3, installed once into the cache
#        ${PRSM_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/prsm-extension}/code-server-4.100.3
#   4. the prsm binary: go build -o <tmp>/prsm ../cmd/prsm (or $PRSM_BIN if set)
#   5. tsc type checks (strict), vitest unit tests (with the contract test
#      against the real prsm), then the e2e test in code-server + Chromium
#
# Screenshots and logs of a failed e2e run are kept; the path is printed.
set -euo pipefail
EXT_DIR="$(cd "$(dirname "$0")" && pwd)"
cd "$EXT_DIR"
# Colour only for a terminal that wants it: CI=true makes some tools colour
# their output even into a log file.
if [ ! -t 1 ] || [ -n "${NO_COLOR:-}" ]; then export NO_COLOR=1; unset FORCE_COLOR; fi
source scripts/lib.sh

t0=$SECONDS
work="$(mktemp -d "${TMPDIR:-/tmp}/prsm-ext-ci-XXXXXX")"
trap 'rm -rf "$work"' EXIT

ensure_node_modules
ensure_chromium
ensure_code_server
ensure_prsm "$work"
log "set-up done in $((SECONDS - t0))s"

log "type check"
npm run --silent typecheck

rc=0
log "unit tests"
npx vitest run --reporter=default --reporter=json --outputFile.json="$work/unit.json" || rc=1
log "end-to-end test"
bash scripts/e2e.sh --reporter=default --reporter=json --outputFile.json="$work/e2e.json" || rc=1

# One closing line for both suites.
node -e '
  const fs = require("fs");
  let passed = 0, failed = 0, skipped = 0;
  for (const f of process.argv.slice(1)) {
    if (!fs.existsSync(f)) { failed++; console.error(`extension: no results in ${f}`); continue; }
    const r = JSON.parse(fs.readFileSync(f, "utf8"));
    passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + (r.numTodoTests || 0);
  }
  console.log(`extension: ${passed} passed, ${failed} failed, ${skipped} skipped`);
' "$work/unit.json" "$work/e2e.json"
log "done in $((SECONDS - t0))s"
exit $rc
