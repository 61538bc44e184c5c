"""Debian's chromium for Playwright: never a downloaded browser build.

The package is installed when it is missing and this process may (root, apt-get present);
otherwise the browser tests skip and say why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"


def chromium_or_skip() -> str:
    """The path of Debian's chromium, installing the package if it is missing and we can."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        pytest.skip("playwright is not installed (it comes with the [test] extra)")
    if CHROMIUM.exists():
        return str(CHROMIUM)
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip("Debian's chromium package is missing and this user cannot install it (apt-get install chromium)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-o", "DPkg::Lock::Timeout=300", "chromium"]
    result = subprocess.run(install, capture_output=True, text=True, env=env, timeout=900)
    if result.returncode != 0:
        subprocess.run(["apt-get", "update"], capture_output=True, env=env, timeout=600)
        result = subprocess.run(install, capture_output=True, text=True, env=env, timeout=900)
    if result.returncode != 0 or not CHROMIUM.exists():
        pytest.skip(f"could not install Debian's chromium: {result.stderr.strip()[-300:]}")
    return str(CHROMIUM)
