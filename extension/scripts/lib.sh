# Shared set-up for ci.sh and e2e.sh (sourced, not run). Each step is
# idempotent and cheap when its result is already there.
#
# Cache: code-server is installed once per version under
#   ${PRSM_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/prsm-extension}/code-server-<version>
# Delete that directory to force a fresh install.

CODE_SERVER_VERSION=4.100.3
PRSM_EXT_CACHE="${PRSM_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/prsm-extension}"

log() { printf 'extension: [%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else
    log "need root for: $*"; return 1; fi
}

apt_updated=
apt_install() {
  if [ -z "$apt_updated" ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Debian's Chromium, which playwright-core drives (never `playwright install`).
ensure_chromium() {
  CHROMIUM_BIN="${CHROMIUM_BIN:-/usr/bin/chromium}"
  if [ ! -x "$CHROMIUM_BIN" ]; then
    log "installing Debian chromium"
    apt_install chromium
  fi
  export CHROMIUM_BIN
}

# code-server from npm, installed offline-safe as ../shared/VSCODE-E2E.md says.
ensure_code_server() {
  local dir="$PRSM_EXT_CACHE/code-server-$CODE_SERVER_VERSION"
  CODE_SERVER_BIN="$dir/node_modules/.bin/code-server"
  if [ -f "$dir/.complete" ] && [ -x "$CODE_SERVER_BIN" ]; then
    export CODE_SERVER_BIN
    return
  fi
  log "installing code-server $CODE_SERVER_VERSION into $dir (once; about a minute)"
  local missing=()
  for p in build-essential pkg-config python3 libkrb5-dev ripgrep; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
  mkdir -p "$PRSM_EXT_CACHE"
  local tmp
  tmp="$(mktemp -d "$PRSM_EXT_CACHE/.install-XXXXXX")"
  # @vscode/ripgrep's postinstall downloads rg from GitHub unless this cache holds it.
  mkdir -p "$tmp/tmp/vscode-ripgrep-cache-1.15.11" "$tmp/pkg"
  tar czf "$tmp/tmp/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$(dirname "$(command -v rg)")" rg
  printf '{"name":"prsm-code-server-cache","private":true}\n' >"$tmp/pkg/package.json"
  (cd "$tmp/pkg" && TMPDIR="$tmp/tmp" npm_config_nodedir=/usr npm_config_unsafe_perm=true npm_config_yes=true \
    npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION" >"$tmp/install.log" 2>&1) || {
    tail -30 "$tmp/install.log" >&2; rm -rf "$tmp"; return 1; }
  "$tmp/pkg/node_modules/.bin/code-server" --version >/dev/null
  rm -rf "$dir"
  mv "$tmp/pkg" "$dir"
  rm -rf "$tmp"
  touch "$dir/.complete"
  CODE_SERVER_BIN="$dir/node_modules/.bin/code-server"
  export CODE_SERVER_BIN
}

# The prsm binary the tests run: PRSM_BIN if set, else built from ../cmd/prsm
# into $1 (a directory the caller removes).
ensure_prsm() {
  if [ -n "${PRSM_BIN:-}" ] && [ -x "$PRSM_BIN" ]; then
    export PRSM_BIN
    return
  fi
  log "building prsm"
  (cd "$EXT_DIR" && go build -o "$1/prsm" ../cmd/prsm)
  PRSM_BIN="$1/prsm"
  export PRSM_BIN
}

# npm ci when node_modules does not match package-lock.json.
ensure_node_modules() {
  if [ ! -f node_modules/.package-lock.json ] || ! cmp -s package-lock.json node_modules/.prsm-lock; then
    log "npm ci"
    npm ci --no-audit --no-fund --loglevel=error
    cp package-lock.json node_modules/.prsm-lock
  fi
}
