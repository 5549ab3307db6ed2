#!/usr/bin/env bash
# The end-to-end test (npm run test:e2e): packages the .vsix, installs it into
# a real code-server, and clicks through it with Debian's Chromium against a
# real prsm server. Sets up what is missing first (see lib.sh).
# PRSM_E2E_ARTIFACTS=dir keeps screenshots and logs there, even when green.
set -euo pipefail
EXT_DIR="$(cd "$(dirname "$0")/.." && pwd)"
cd "$EXT_DIR"
source scripts/lib.sh

work="$(mktemp -d "${TMPDIR:-/tmp}/prsm-e2e-run-XXXXXX")"
trap 'rm -rf "$work"' EXIT

ensure_node_modules
ensure_chromium
ensure_code_server
ensure_prsm "$work"
log "packaging prsm.vsix"
npm run --silent package >"$work/package.log" 2>&1 || { cat "$work/package.log" >&2; exit 1; }
export PRSM_VSIX="$EXT_DIR/prsm.vsix"

# The test process (and Playwright's browser profile) get a private TMPDIR.
mkdir -p "$work/tmp"
PRSM_E2E_OUTER_TMP="${TMPDIR:-/tmp}" TMPDIR="$work/tmp" npx vitest run --config vitest.e2e.config.mts "$@"
