"""terminal_execute with commands that print megabytes, at the largest output window the config
takes: each result fits the result budget and names the file that holds the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.budgets import assert_fits, structured, text
from tests.harness import connect
from tests.servers.terminal.test_terminal import unisolated

pytestmark = pytest.mark.anyio
MIB = 1024 * 1024
PRINTERS = {
    "plain lines": "import sys; sys.stdout.write('a line of ordinary log output, number 12345\\n' * 60000)",
    "empty lines": "import sys; sys.stdout.write('\\n' * 3000000)",
    "control bytes": "import sys; sys.stdout.write('\\x01\\x1b[31m' * 500000)",
    "both streams": "import sys; sys.stdout.write('\\x02' * 2000000); sys.stderr.write('\\x03\\n' * 1000000)",
}


@pytest.mark.parametrize("name", list(PRINTERS))
async def test_megabytes_of_output_fit_the_budget_and_the_rest_is_kept(tmp_path: Path, name: str) -> None:
    app = unisolated(tmp_path, output_chars=15_000, max_output_bytes=4 * MIB)
    command = {"argv": ["python3", "-c", PRINTERS[name]], "cwd": "work"}
    async with connect(tmp_path, app=app) as client:
        result = await client.call_tool("terminal_execute", command)
    data = structured(result)
    assert_fits(result)
    assert data["exit_code"] == 0 and data["truncated"] is True
    assert data["stdout_bytes"] + data["stderr_bytes"] >= MIB
    assert "characters omitted" in data["stdout"]
    kept = (tmp_path / "data" / "files" / data["output_path"]).read_bytes()
    assert len(kept) >= data["stdout_bytes"] + data["stderr_bytes"]  # the whole output, for files.read
    assert data["output_path"] in text(result) and "files.read" in text(result)
