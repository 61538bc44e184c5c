"""Debian's chromium for Playwright: never a downloaded browser build.

The package is installed when it is missing and this process may (root, apt-get present);
otherwise the browser tests skip and say why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.system_packages import apt_install

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
    reason = apt_install("chromium", CHROMIUM)
    if reason is not None:
        pytest.skip(reason)
    return str(CHROMIUM)
