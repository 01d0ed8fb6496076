"""A real `engram serve` for the tests: built from this repository (or
$ENGRAM_BIN), on a free loopback port, with a temporary home, stopped after.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Dict, Optional

REPO = Path(__file__).resolve().parents[3]

_built: Optional[str] = None


def engram_bin() -> str:
    """$ENGRAM_BIN, else a binary built once per test run from this tree."""
    global _built
    env = os.environ.get("ENGRAM_BIN")
    if env:
        if not os.access(env, os.X_OK):
            raise RuntimeError("ENGRAM_BIN=%s is not an executable file" % env)
        return env
    if _built is None:
        out = tempfile.mkdtemp(prefix="engram-pyclient-bin-")
        atexit.register(shutil.rmtree, out, True)
        path = os.path.join(out, "engram")
        subprocess.run(["go", "build", "-o", path, "./cmd/engram"], cwd=str(REPO), check=True)
        _built = path
    return _built


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EngramServer:
    """One engram serve process. ``env`` adds ENGRAM_* settings; those of
    the environment the tests run in are left out, so that a developer's own
    token or home cannot leak into the test."""

    def __init__(self, env: Optional[Dict[str, str]] = None) -> None:
        self.extra_env = dict(env or {})
        self.home = ""
        self.url = ""
        self.proc: Optional[subprocess.Popen] = None
        self._logdir = ""

    def __enter__(self) -> "EngramServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        binary = engram_bin()
        # The log lives next to the home, not in it: the home holds only
        # what engram writes.
        self._logdir = logdir = tempfile.mkdtemp(prefix="engram-pyclient-")
        self.home = os.path.join(logdir, "home")
        os.mkdir(self.home)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
        env.update(self.extra_env)
        # A port picked free can be taken before engram binds it: then the
        # process exits, and another port is tried.
        for _ in range(5):
            port = free_port()
            self.url = "http://127.0.0.1:%d" % port
            logf = open(os.path.join(logdir, "serve.log"), "ab")
            self.proc = subprocess.Popen(
                [binary, "serve", "--home", self.home, "--addr", "127.0.0.1:%d" % port],
                env=env, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
            logf.close()
            if self._wait_healthy():
                return
            if "address already in use" not in self.log():
                break
        log = self.log()
        self.stop()
        raise RuntimeError("engram serve did not start; its log:\n" + log)

    def log(self) -> str:
        try:
            return Path(self._logdir, "serve.log").read_text(errors="replace")
        except OSError:
            return ""

    def _wait_healthy(self) -> bool:
        # Polls until /v1/health answers or the process ends. The deadline
        # only keeps a wedged server from hanging the run; nothing asserts
        # on how long the start took.
        deadline = time.monotonic() + 300
        assert self.proc is not None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self.url + "/v1/health", timeout=5) as r:
                    if r.status == 200:
                        return True
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self._logdir:
            shutil.rmtree(self._logdir, ignore_errors=True)

    def metric(self, name: str, **labels: str) -> float:
        """A sample of /metrics (0 when absent), read straight over HTTP."""
        req = urllib.request.Request(self.url + "/metrics")
        tok = self.extra_env.get("ENGRAM_TOKEN")
        if tok:
            req.add_header("Authorization", "Bearer " + tok)
        with urllib.request.urlopen(req, timeout=30) as r:
            text = r.read().decode()
        want = set('%s="%s"' % kv for kv in labels.items())
        for line in text.splitlines():
            if not line.startswith(name + "{") and not line.startswith(name + " "):
                continue
            head, _, value = line.rpartition(" ")
            got = set(head[len(name):].strip("{}").split(",")) if "{" in head else set()
            if want <= got:
                return float(value)
        return 0.0
