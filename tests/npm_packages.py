"""npm packages the tests need, pinned by a package.json + package-lock.json under tests/.

`npm ci --ignore-scripts` installs each pinned set once into `.pytest-npm/<name>-<hash>/`
(reused while the lock file is unchanged), one worker at a time under a file lock.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.processes import ROOT
from tests.system_packages import installing

CACHE = ROOT / ".pytest-npm"


def npm_ci(pinned: Path, marker: Path) -> Path:
    """The install prefix of the packages pinned in `pinned/`; `marker` is a file it must hold."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("these tests need npm on PATH (Debian: apt-get install npm)")
    manifest = (pinned / "package.json").read_bytes() + (pinned / "package-lock.json").read_bytes()
    prefix = CACHE / f"{pinned.name}-{hashlib.sha256(manifest).hexdigest()[:12]}"
    if (prefix / marker).exists():
        return prefix
    CACHE.mkdir(exist_ok=True)
    with (CACHE / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers install once, one at a time
        if (prefix / marker).exists():
            return prefix
        staging = CACHE / f".staging-{pinned.name}-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(pinned / name, staging / name)
        why = json.loads((pinned / "package.json").read_text(encoding="utf-8")).get("description", "")
        with installing(f"npm packages pinned in tests/{pinned.name}", why.split(" (")[0] or "a test needs them"):
            done = subprocess.run(
                [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", str(staging)],
                capture_output=True,
                text=True,
                timeout=600,
            )
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise AssertionError(f"npm ci of {pinned} failed:\n{done.stderr[-3000:]}")
        for stale in CACHE.glob(f"{pinned.name}-*"):
            if stale != prefix:
                shutil.rmtree(stale, ignore_errors=True)
        shutil.rmtree(prefix, ignore_errors=True)  # a half-finished earlier install
        staging.rename(prefix)
    assert (prefix / marker).exists(), f"npm ci did not install {marker}"
    return prefix
