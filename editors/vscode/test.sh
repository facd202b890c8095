#!/usr/bin/env bash
# Tests of the VS Code extension: strict type check (extension glue included), unit suites
# for the logic modules and the protocol suite against $DEBUG_SIDECAR_BIN.
# Installs its npm packages (npm ci) only when node_modules is missing or stale.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

bin="${DEBUG_SIDECAR_BIN:-}"
if [[ -z "$bin" ]]; then
  echo "test.sh: set DEBUG_SIDECAR_BIN to the absolute path of a built debug-sidecar binary" >&2
  exit 2
fi
if [[ "$bin" != /* || ! -x "$bin" ]]; then
  echo "test.sh: DEBUG_SIDECAR_BIN=$bin is not an absolute path to an executable" >&2
  exit 2
fi
export DEBUG_SIDECAR_BIN="$bin"

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if (( node_major < 20 )); then
  echo "test.sh: node 20 or newer is needed (found $(node --version))" >&2
  exit 2
fi

# npm ci only when the lockfile changed since the last install.
lock_hash="$(sha256sum package-lock.json | cut -d' ' -f1)"
stamp="node_modules/.debug-sidecar-lock-hash"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$lock_hash" ]]; then
  echo "test.sh: installing npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > "$stamp"
fi

tsc="node_modules/.bin/tsc"
start=$(date +%s)
# One strict pass type-checks everything (extension.ts included) and compiles to out/; any
# type error fails the script (noEmitOnError keeps a stale build from being tested).
echo "test.sh: tsc (strict type check, compile to out/)"
rm -rf out
"$tsc" -p .
echo "test.sh: node --test"
# A suite whose process does not exit (a timer or handle left behind) fails here within
# minutes instead of holding the whole CI run until its own limit.
timeout --kill-after=10 600 node --test --test-reporter=spec --test-concurrency=1 --test-timeout=120000 \
  out/test/status.test.js out/test/notification.test.js out/test/ledger.test.js out/test/agents.test.js \
  out/test/logtail.test.js out/test/errors.test.js out/test/controller.test.js \
  out/test/protocol.test.js out/test/extension.test.js
# Every suite above must exist: a missing file would otherwise be a silent skip.
for f in test/*.test.ts; do
  js="out/test/$(basename "${f%.ts}").js"
  grep -q "$js" "$here/test.sh" || { echo "test.sh: $f is not run by test.sh" >&2; exit 1; }
done
echo "test.sh: VS Code client OK in $(( $(date +%s) - start ))s"
