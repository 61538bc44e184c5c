"""The test suite's own installs (Debian packages, npm packages) each say on the terminal what
they install, why and how long it took, also under `-q` and from xdist workers, where pytest
captures everything a test prints."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import ROOT, child_env

CONFTEST = """\
from tests.system_packages import remember_config


def pytest_configure(config):
    remember_config(config)
"""
STEP = """\
from tests.system_packages import installing


def test_an_install_step():
    print("captured, as any test's output")
    with installing("Debian's frobnicator with apt-get", "the frobnication tests need it"):
        pass
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist workers"])
def test_an_install_step_prints_its_line_past_the_capture(tmp_path: Path, workers: list[str]) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (tmp_path / "test_step.py").write_text(STEP, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        env=child_env(PYTHONPATH=str(ROOT)),
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    shown = done.stdout + done.stderr
    line = re.search(
        r"mcp-tools tests: installing Debian's frobnicator with apt-get \(the frobnication tests need it\)\.\.\. "
        r"done in \d+\.\d s",
        shown,
    )
    assert line is not None, shown
    assert "captured, as any test's output" not in shown
