"""`mcp-tools call-text --stream` asks the person on the controlling terminal, never on the stream
that carries the model's words (a real pseudo-terminal as the child's controlling terminal)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.processes import cli_in_process, demo_config, stream_on_terminal

DELETE = b'{"tool": "files.delete", "path": "keep.txt"}\n'


def files_config(tmp_path: Path) -> tuple[Path, Path]:
    config = demo_config(tmp_path, 'tools = ["*"]\n', servers='["demo", "files"]')
    kept = tmp_path / "data" / "files" / "keep.txt"
    kept.parent.mkdir(parents=True)
    kept.write_text("precious")
    return config, kept


def events(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def deletions(config: Path) -> list[tuple[str, str | None]]:
    rows = [json.loads(line) for line in cli_in_process(config, "audit", "--json").stdout.splitlines()]
    return [(row["decision"], row["answered_by"]) for row in rows if row["tool"] == "files.delete"]


def test_attack_a_streamed_reply_on_the_terminal_cannot_answer_its_own_prompt(tmp_path: Path) -> None:
    """The model's words arrive on the terminal itself (stdin is the controlling terminal): the `y`
    that follows its call is the model's, so no one is asked there and the call waits for another
    channel."""
    config, kept = files_config(tmp_path)
    shown, out, code = stream_on_terminal(
        config, "call-text", "-", "--stream", words=DELETE, typed=b"y\n", words_on_terminal=True
    )
    assert kept.read_text() == "precious"
    assert b"[y/N]" not in shown
    [result] = [event for event in events(out) if event.get("name") == "files.delete"]
    assert "needs the person's approval" in str(result["error"])
    assert code == 1
    assert deletions(config) == [("approval_required", None)]


@pytest.mark.parametrize(("typed", "runs"), [(b"n\n", False), (b"y\n", True)])
def test_a_piped_stream_asks_on_the_terminal_and_only_the_typed_answer_counts(
    tmp_path: Path, typed: bytes, runs: bool
) -> None:
    """The reply comes through a pipe and says `y` after its call; the question goes to the terminal,
    where the person's own answer decides."""
    config, kept = files_config(tmp_path)
    shown, out, _ = stream_on_terminal(
        config, "call-text", "-", "--stream", words=DELETE + b"y\nyes\n", typed=typed, words_on_terminal=False
    )
    assert b"Run it? [y/N]" in shown and b"keep.txt" in shown
    assert kept.exists() is not runs
    assert deletions(config) == [("confirmed", "terminal") if runs else ("declined", "terminal")]
    [result] = [event for event in events(out) if event.get("name") == "files.delete"]
    assert ("the person declined" in str(result.get("error"))) is not runs
