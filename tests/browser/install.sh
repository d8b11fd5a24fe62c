#!/usr/bin/env bash
# Installs what the browser tests need on a fresh machine: Debian's chromium, a Chinese font (without one
# Chinese renders as empty boxes, which the tests catch), npm if missing, and npm's playwright-core.
# Never downloads a browser build (that needs hosts this network cannot reach); warns loudly if it cannot install.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

apt_install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; }
}
can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }

if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  if can_apt; then
    echo "browser-deps: installing Debian chromium" >&2
    apt_install chromium || echo "browser-deps: WARNING could not install chromium; browser tests will be skipped" >&2
  else
    echo "browser-deps: WARNING chromium missing and not root; browser tests will be skipped" >&2
  fi
fi
if ! { command -v fc-list >/dev/null 2>&1 && fc-list :lang=zh family | grep -q .; }; then
  if can_apt; then
    echo "browser-deps: installing a Chinese font (fonts-noto-cjk)" >&2
    apt_install fonts-noto-cjk || echo "browser-deps: WARNING could not install fonts-noto-cjk; the CJK rendering test will fail" >&2
  else
    echo "browser-deps: WARNING no Chinese font and not root; the CJK rendering test will fail" >&2
  fi
fi
if ! command -v npm >/dev/null 2>&1 && can_apt; then
  echo "browser-deps: installing Debian npm (and nodejs) for playwright-core" >&2
  apt_install npm || echo "browser-deps: WARNING could not install npm; browser tests will be skipped" >&2
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
