#!/usr/bin/env bash
# What `make agents` needs besides the agents' npm packages: on Linux,
# Claude Code's sandbox runs shell commands under bubblewrap (bwrap) and
# proxies them through socat. TestRealAgentClaudeSandbox runs it. Debian's
# packages via apt-get, only when a command is missing; idempotent and
# cheap when they are there. Other systems: nothing to do.
set -euo pipefail
[ "$(uname -s)" = Linux ] || exit 0
missing=()
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v socat >/dev/null || missing+=(socat)
[ ${#missing[@]} -eq 0 ] && exit 0
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else
    echo "agents: need root for: $*" >&2; return 1; fi
}
if ! command -v apt-get >/dev/null; then
  echo "agents: install ${missing[*]} (Claude Code's sandbox needs them); no apt-get here" >&2
  exit 1
fi
echo "agents: installing Debian's ${missing[*]}" >&2
as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -qq
as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
