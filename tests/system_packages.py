"""Debian packages the tests need (chromium, bubblewrap), installed once even when test workers run in parallel."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

LOCK = Path(tempfile.gettempdir()) / "mcp-tools-tests-apt.lock"


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
        result = subprocess.run(install, capture_output=True, text=True, env=env, timeout=900)
        if result.returncode != 0:
            subprocess.run(["apt-get", "update"], capture_output=True, env=env, timeout=600)
            result = subprocess.run(install, capture_output=True, text=True, env=env, timeout=900)
    if result.returncode != 0 or not present():
        return f"could not install Debian's {package}: {result.stderr.strip()[-300:]}"
    return None
