"""Driving an interactive terminal program for the lab: it runs in a
detached tmux session of a fixed size (its own tmux server, on a socket in
the scenario's scratch folder), its raw output is piped to a file and fed
to a `pyte` screen, the terminal emulator the assertions read; keys go in
through `tmux send-keys`. A reader thread feeds pyte as the bytes arrive and
keeps every distinct screen, so a scenario can ask whether some text was
shown at some time, not only whether it is on the screen now.

pyte comes from PyPI: scripts/test installs it pinned into a venv and
exports LAB_PYTE_PYTHON; the lab runs under plain python3, so that venv's
site-packages is put on sys.path when pyte is not importable."""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from harness import Failure

TMUX = os.environ.get("LAB_TMUX", "/usr/bin/tmux")


def _import_pyte():
    try:
        import pyte
        return pyte
    except ImportError:
        pass
    python = os.environ.get("LAB_PYTE_PYTHON") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        "target", "pyte-venv", "bin", "python")
    if os.path.exists(python):
        out = subprocess.run(
            [python, "-c", "import os, pyte; print(os.path.dirname(os.path.dirname(pyte.__file__)))"],
            capture_output=True, text=True)
        if out.returncode == 0:
            sys.path.append(out.stdout.strip())
            import pyte
            return pyte
    raise Failure("pyte is not importable: set LAB_PYTE_PYTHON to a python that has it "
                  "(scripts/test installs one)")


# CSI sequences with a private marker pyte does not parse (kitty keyboard
# `CSI > 5 u`, `CSI < u`, xterm's `CSI > 4;2 m`): they set modes only, and
# pyte would draw their last byte. A sequence cut at the end of a read
# waits for the rest.
PRIVATE_CSI = re.compile(rb"\x1b\[[<>=][0-9;:]*[ -/]*[@-~]")
INCOMPLETE = re.compile(rb"\x1b(\[[0-?]*[ -/]*)?$")


class Tui:
    """One program in one tmux pane, read through pyte."""

    def __init__(self, argv, cwd, env, base, cols=100, rows=40, name="tui"):
        self.pyte = _import_pyte()
        self.cols, self.rows = cols, rows
        self.socket = os.path.join(base, f"{name}.tmux")
        if len(self.socket) > 100:  # a Unix socket's path has room for about 107 bytes
            self.socket = os.path.join(tempfile.mkdtemp(prefix="lab-tmux-", dir="/tmp"), name)
        self.raw_path = os.path.join(base, f"{name}.raw")
        ready = os.path.join(base, f"{name}.go")
        self.screen = self.pyte.Screen(cols, rows)
        self.stream = self.pyte.ByteStream(self.screen)
        self.pending = b""
        self.history = []  # every distinct screen seen, oldest first, each a list of lines
        self.changed_at = time.monotonic()
        self.lock = threading.Lock()
        self.env = dict(env, TERM="xterm-256color")
        self.base = base
        open(self.raw_path, "wb").close()
        # Its own config: the pane stays after the program exits (its last
        # screen can be read), focus events pass (Claude Code asks for them),
        # no status line (the pane is the whole window).
        conf = os.path.join(base, f"{name}.tmux.conf")
        with open(conf, "w") as f:
            f.write("set -g remain-on-exit on\nset -g focus-events on\n"
                    "set -g history-limit 10000\nset -g status off\n")
        # The program waits until the pipe to the raw file is in place, so
        # pyte sees its output from the first byte.
        script = (f"while [ ! -e {shlex.quote(ready)} ]; do sleep 0.02; done; "
                  f"exec {' '.join(shlex.quote(a) for a in argv)}")
        self.target = name
        self._tmux("-f", conf, "new-session", "-d", "-s", name, "-x", str(cols),
                   "-y", str(rows), "-c", cwd, "sh", "-c", script)
        try:
            self._tmux("pipe-pane", "-o", "-t", name, f"cat >> {shlex.quote(self.raw_path)}")
        except Failure:
            # Nothing reads the program yet: end its server, not leave it waiting.
            self._tmux("kill-server", check=False)
            raise
        open(ready, "w").close()
        self.stopped = threading.Event()
        self.reader = threading.Thread(target=self._read_loop, daemon=True)
        self.reader.start()

    def _tmux(self, *args, check=True):
        out = subprocess.run([TMUX, "-S", self.socket, *args], env=self.env,
                             capture_output=True, text=True, timeout=20)
        if check and out.returncode != 0:
            raise Failure(f"tmux {' '.join(args)}: {out.stderr.strip()}")
        return out

    # Reading the screen

    def _read_loop(self):
        with open(self.raw_path, "rb") as f:
            while not self.stopped.is_set():
                data = f.read()
                if data:
                    self._feed(data)
                else:
                    time.sleep(0.03)

    def _feed(self, data):
        with self.lock:
            data = self.pending + data
            cut = INCOMPLETE.search(data)
            self.pending, data = (data[cut.start():], data[:cut.start()]) if cut else (b"", data)
            self.stream.feed(PRIVATE_CSI.sub(b"", data))
            lines = [line.rstrip() for line in self.screen.display]
            if not self.history or self.history[-1] != lines:
                self.history.append(lines)
                self.changed_at = time.monotonic()

    def lines(self):
        with self.lock:
            return list(self.history[-1]) if self.history else []

    def text(self):
        """The screen now, one string."""
        return "\n".join(self.lines())

    def dump(self, lines=None):
        return "\n".join(f"|{line}" for line in (lines if lines is not None else self.lines()))

    def shown(self, pattern):
        """Whether `pattern` (text or compiled regex) was on any screen seen so far."""
        return bool(self.screens_with(pattern))

    def screens_with(self, pattern):
        with self.lock:
            screens = ["\n".join(s) for s in self.history]
        return [s for s in screens if _matches(pattern, s)]

    def mark(self):
        """A point in the history: `since(mark)` is every screen after it."""
        with self.lock:
            return len(self.history)

    def since(self, mark):
        with self.lock:
            return ["\n".join(s) for s in self.history[max(0, mark - 1):]]

    def wait_for(self, pattern, timeout=30, what=None):
        """Poll until `pattern` is on the screen; the screen's text then.
        On timeout, a Failure with the last screen."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.text()
            if _matches(pattern, text):
                return text
            if time.monotonic() > deadline:
                raise Failure(f"{what or 'waiting for'} {_show(pattern)}: not on the screen "
                              f"after {timeout} s; the screen:\n{self.dump()}")
            time.sleep(0.05)

    def wait_gone(self, pattern, timeout=30, what=None):
        deadline = time.monotonic() + timeout
        while True:
            text = self.text()
            if not _matches(pattern, text):
                return text
            if time.monotonic() > deadline:
                raise Failure(f"{what or 'waiting for the end of'} {_show(pattern)}: still on "
                              f"the screen after {timeout} s; the screen:\n{self.dump()}")
            time.sleep(0.05)

    def settle(self, quiet=0.5, timeout=10):
        """Wait until the screen has not changed for `quiet` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and time.monotonic() - self.changed_at < quiet:
            time.sleep(0.05)
        return self.text()

    # Keys

    def keys(self, *names, pause=0.2):
        """tmux key names, one after another: Enter, Escape, Up, Down, Left,
        Right, Tab, BTab, Space, BSpace, C-c."""
        for name in names:
            self._tmux("send-keys", "-t", self.target, name)
            time.sleep(pause)

    def type(self, text, pause=0.4):
        """Literal text, then a pause so that the next key is not read as
        part of a paste."""
        self._tmux("send-keys", "-t", self.target, "-l", text)
        time.sleep(pause)

    def alive(self):
        out = self._tmux("list-panes", "-t", self.target, "-F", "#{pane_dead}", check=False)
        return out.returncode == 0 and out.stdout.strip() == "0"

    def kill(self):
        self._tmux("kill-server", check=False)
        if os.path.basename(os.path.dirname(self.socket)).startswith("lab-tmux-"):
            shutil.rmtree(os.path.dirname(self.socket), ignore_errors=True)
        self.stopped.set()
        self.reader.join(timeout=2)
        # Every screen seen, for a person reading a failed scenario's folder.
        with open(os.path.join(self.base, f"{self.target}.screens"), "w") as f:
            for i, lines in enumerate(self.history):
                f.write(f"=== screen {i}\n" + "\n".join(lines).rstrip() + "\n")


def _matches(pattern, text):
    if isinstance(pattern, re.Pattern):
        return pattern.search(text) is not None
    return pattern in text


def _show(pattern):
    return f"/{pattern.pattern}/" if isinstance(pattern, re.Pattern) else repr(pattern)
