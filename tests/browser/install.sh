#!/usr/bin/env bash
# Installs what the browser tests need on a fresh machine: Debian's chromium and npm's playwright-core.
# Never downloads a browser build (that needs hosts this network cannot reach); skips loudly if it cannot install.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "browser-deps: installing Debian chromium" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
      || echo "browser-deps: WARNING could not install chromium; browser tests will be skipped" >&2
  else
    echo "browser-deps: WARNING chromium missing and not root; browser tests will be skipped" >&2
  fi
fi
if command -v npm >/dev/null 2>&1; then
  if [ ! -d "$here/node_modules/playwright-core" ]; then
    echo "browser-deps: installing playwright-core (npm ci)" >&2
    (cd "$here" && npm ci --no-audit --no-fund --silent) \
      || echo "browser-deps: WARNING npm ci failed; browser tests will be skipped" >&2
  fi
else
  echo "browser-deps: WARNING npm missing; browser tests will be skipped" >&2
fi
