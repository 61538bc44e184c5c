"""The guardrails run as tests, so the one test command enforces them: `mypy` (strict, configured
in pyproject.toml) reports no error in `mcp_tools`, and `ruff` finds nothing to lint or reformat.

Each runs from the checkout's root with this interpreter's tools, the versions pinned in the
[test] extra; a failure shows what the tool printed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ["mcp_tools", "tests", "bench"]
SHOWN_LINES = 60


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )


def output(result: subprocess.CompletedProcess[str]) -> str:
    lines = (result.stdout + result.stderr).splitlines()
    shown = "\n".join(lines[:SHOWN_LINES])
    more = f"\n... {len(lines) - SHOWN_LINES - 1} more lines ...\n{lines[-1]}" if len(lines) > SHOWN_LINES else ""
    return f"`{' '.join(result.args[2:])}` exited {result.returncode}:\n{shown}{more}"


@pytest.mark.slow
def test_mypy_reports_no_errors(tmp_path_factory: pytest.TempPathFactory) -> None:
    # the files come from pyproject.toml ([tool.mypy] files = ["mcp_tools"]), read from the root: the
    # checkout's package, never an installed copy; the cache is this run's (one per xdist worker)
    cache = tmp_path_factory.mktemp("mypy-cache")
    result = run("mypy", "--cache-dir", str(cache))
    assert result.returncode == 0, output(result)
    assert "Success: no issues found" in result.stdout


def test_ruff_check_is_clean() -> None:
    result = run("ruff", "check", "--no-cache", *CHECKED)
    assert result.returncode == 0, output(result)


def test_ruff_format_leaves_every_file_as_it_is() -> None:
    result = run("ruff", "format", "--check", "--no-cache", *CHECKED)
    assert result.returncode == 0, output(result)
