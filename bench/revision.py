"""A git revision of this checkout exported to a temporary folder, for before/after runs in one bench.

    with exported("6728c33") as source:      # a folder holding that revision's mcp_tools package
        env = {**os.environ, "PYTHONPATH": str(source)}

`"."` stands for this checkout as it is (nothing exported).
"""

from __future__ import annotations

import contextlib
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def exported(revision: str) -> Iterator[Path]:
    if revision == ".":
        yield ROOT
        return
    with tempfile.TemporaryDirectory(prefix="mcp-tools-rev-") as tmp:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", revision], check=True, capture_output=True
        ).stdout
        tar_path = Path(tmp) / "rev.tar"
        tar_path.write_bytes(archive)
        with tarfile.open(tar_path) as tar:
            tar.extractall(Path(tmp) / "src", filter="data")
        yield Path(tmp) / "src"
