"""Debian packages the tests need (chromium, bubblewrap), installed once even when test workers run in parallel.

Each install says on the terminal what it installs, why, and how long it took (`installing`):
the first run of the suite spends minutes on them, which would otherwise pass in silence.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

LOCK = Path(tempfile.gettempdir()) / "mcp-tools-tests-apt.lock"
WHY = {  # why the tests need each Debian package, as the install line shows it
    "chromium": "the approvals page and the approval card are tested in a real browser",
    "bubblewrap": "the terminal namespace's sandbox is tested for real",
    "postgresql": "the shared state store is tested against a real PostgreSQL",
    "nginx": "replicas behind a real reverse proxy",
}
_config: list[Any] = []  # the pytest config, once tests/conftest.py has it (its capture manager)


def remember_config(config: Any) -> None:
    """Called by tests/conftest.py: install lines reach the terminal past pytest's capture."""
    _config[:] = [config]


def say(line: str) -> None:
    """One line on the terminal, even while pytest captures the output (xdist workers' too:
    their standard error is the controller's)."""
    capture = _config[0].pluginmanager.getplugin("capturemanager") if _config else None
    with capture.global_and_fixture_disabled() if capture is not None else nullcontext():
        stream = sys.__stderr__ or sys.stderr
        stream.write(line)
        stream.flush()


@contextmanager
def installing(what: str, why: str) -> Iterator[None]:
    """Around one install step: `mcp-tools tests: installing WHAT (WHY)... done in N s`."""
    say(f"\nmcp-tools tests: installing {what} ({why})...")
    started = time.monotonic()
    outcome = "failed"
    try:
        yield
        outcome = "done"
    finally:
        say(f" {outcome} in {time.monotonic() - started:.1f} s\n")


def apt_install(package: str, installed: Path | str) -> str | None:
    """Install `package` with apt-get unless `installed` (a path or a command name) is there already.

    Returns None when it is there afterwards, else why not. One worker installs at a time; the
    others wait on the lock and then find it installed."""

    def present() -> bool:
        return Path(installed).exists() if os.sep in str(installed) else shutil.which(str(installed)) is not None

    if present():
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return f"{package} is missing and this user cannot install it (apt-get install {package})"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "-o", "DPkg::Lock::Timeout=300", package]
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if present():
            return None
        with installing(f"Debian's {package} with apt-get", WHY.get(package, "a test needs it")):
            result = subprocess.run(install, capture_output=True, text=True, env=env, timeout=900)
            if result.returncode != 0:
                subprocess.run(["apt-get", "update"], capture_output=True, env=env, timeout=600)
                result = subprocess.run(install, capture_output=True, text=True, env=env, timeout=900)
    if result.returncode != 0 or not present():
        return f"could not install Debian's {package}: {result.stderr.strip()[-300:]}"
    return None
