#!/usr/bin/env bash
# Tests of the Emacs client (debug-sidecar.el) against the real sidecar binary.
# Installs emacs-nox from Debian when `emacs` is missing (idempotent), byte-compiles
# the package with warnings as errors, then runs the ERT tests in batch mode against
# $DEBUG_SIDECAR_BIN (absolute path). Exits non-zero on any failure.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if ! command -v emacs >/dev/null 2>&1; then
  echo "== installing emacs-nox (Debian)" >&2
  # sudo drops the environment: pass DEBIAN_FRONTEND through env(1).
  APT=(env DEBIAN_FRONTEND=noninteractive apt-get)
  if [ "$(id -u)" -ne 0 ]; then APT=(sudo "${APT[@]}"); fi
  # On a fresh image the package lists are empty and the install fails
  # ("Unable to locate package"); inside `if' that failure does not end the
  # script (set -e), and the lists are fetched before a second try.
  if ! "${APT[@]}" install -y --no-install-recommends emacs-nox >&2; then
    "${APT[@]}" update >&2
    "${APT[@]}" install -y --no-install-recommends emacs-nox >&2
  fi
fi

if [ -z "${DEBUG_SIDECAR_BIN:-}" ]; then
  echo "DEBUG_SIDECAR_BIN is not set (absolute path of the debug-sidecar binary)" >&2
  exit 1
fi
case "$DEBUG_SIDECAR_BIN" in
  /*) ;;
  *) echo "DEBUG_SIDECAR_BIN must be absolute: $DEBUG_SIDECAR_BIN" >&2; exit 1 ;;
esac
if [ ! -x "$DEBUG_SIDECAR_BIN" ] || [ -d "$DEBUG_SIDECAR_BIN" ]; then
  echo "DEBUG_SIDECAR_BIN is not an executable file: $DEBUG_SIDECAR_BIN" >&2
  exit 1
fi

emacs --version | head -1 >&2
emacs --batch -Q --eval '(unless (version<= "28.1" emacs-version)
                            (message "Emacs 28.1 or newer is needed, this is %s" emacs-version)
                            (kill-emacs 1))'

BUILD="$(mktemp -d "${TMPDIR:-/tmp}/ds-emacs-build.XXXXXX")"
trap 'rm -rf "$BUILD"' EXIT
cp "$HERE/debug-sidecar.el" "$HERE/test/debug-sidecar-test.el" "$BUILD/"

# Any byte-compiler warning fails the build; the tests then load the compiled files.
echo "== byte-compiling (warnings are errors)" >&2
emacs --batch -Q -L "$BUILD" \
  --eval '(setq byte-compile-error-on-warn t)' \
  -f batch-byte-compile "$BUILD/debug-sidecar.el" "$BUILD/debug-sidecar-test.el"

# checkdoc: documentation and message conventions; any warning fails.
echo "== checkdoc" >&2
for f in debug-sidecar.el debug-sidecar-test.el; do
  CHECKDOC="$(cd "$BUILD" && emacs --batch -Q --eval "(checkdoc-file \"$f\")" 2>&1)"
  if [ -n "$CHECKDOC" ]; then
    echo "$CHECKDOC" >&2
    echo "checkdoc warns about $f" >&2
    exit 1
  fi
done

# Installed the way the README says (package-install-file), the commands autoload.
echo "== package-install-file" >&2
emacs --batch -Q --eval "(progn
  (setq package-user-dir \"$BUILD/elpa\")
  (require 'package)
  (package-initialize)
  (package-install-file \"$BUILD/debug-sidecar.el\"))" 2>/dev/null
emacs --batch -Q --eval "(progn
  (setq package-user-dir \"$BUILD/elpa\")
  (require 'package)
  (package-initialize)
  (dolist (f '(debug-sidecar-mode debug-sidecar-start debug-sidecar-proceed debug-sidecar-done
               debug-sidecar-abort debug-sidecar-probes debug-sidecar-logs debug-sidecar-status
               debug-sidecar-restart debug-sidecar-agents))
    (unless (autoloadp (symbol-function f))
      (message \"%s is not autoloaded after package-install-file\" f)
      (kill-emacs 1))))"

echo "== ERT against $DEBUG_SIDECAR_BIN" >&2
cd "$BUILD"
# The subagent records a real pi-subagents session sent (the harness lab checks the file).
DS_TEST_AGENTS_FIXTURE="$HERE/../vscode/browser/fixtures/pi-subagents.jsonl" \
  timeout --kill-after=10 600 emacs --batch -Q -L "$BUILD" -l "$BUILD/debug-sidecar-test.elc" -f ert-run-tests-batch-and-exit
