"""Running a reply: priority order, ids and times, the result shapes, markdown, and the CLI's outputs."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from mcp_tools.textcalls import render_markdown
from tests.processes import demo_config, run_cli
from tests.textcalls.conftest import run, text_app

SCISSORS = "\u2702\ufe0f\U0001f431"


def scissors_reply(*calls: dict, markdown: str = "All done.") -> str:
    return json.dumps(list(calls)) + f"\n{SCISSORS}\n{markdown}"


def write(call_id: str, path: str, priority: float | None = None, content: str = "x") -> dict:
    call = {
        "id": call_id,
        "type": "write_file",
        "operation": f"write {path}",
        "parameters": {"path": path, "content": content},
    }
    return call if priority is None else {**call, "priority": priority}


@pytest.mark.anyio
async def test_higher_priority_runs_first_and_ties_keep_their_order(tmp_path: Path) -> None:
    app = text_app(tmp_path, ["files"])
    reply = scissors_reply(write("a", "a.txt"), write("b", "b.txt", 5), write("c", "c.txt", 5), write("d", "d.txt", -1))
    report = await run(app, reply)
    assert [result.id for result in report.results] == ["b", "c", "a", "d"]
    assert [row.as_dict()["arguments"]["path"] for row in app.store.tail(10)] == ["b.txt", "c.txt", "a.txt", "d.txt"]
    assert report.markdown == "All done." and report.format == "scissors"


@pytest.mark.anyio
async def test_each_call_has_an_id_a_status_and_times(tmp_path: Path) -> None:
    app = text_app(tmp_path, ["files"])
    reply = (
        '{"id": "mine", "name": "files.write", "arguments": {"path": "a.txt", "content": "x"}}\n'
        '{"tool": "files.read", "path": "missing.txt"}\n'
        '{"id": "mine", "tool": "files.list"}\n'
    )
    report = await run(app, reply)
    first, second, third = report.results
    assert (first.id, first.status) == ("mine", "completed")
    assert (second.id, second.status) == ("call_2", "failed")
    assert third.id == "call_3"  # the model's id was taken already
    assert list(first.times) == ["detected", "executing", "completed"] and list(second.times)[-1] == "failed"
    stamps = [datetime.fromisoformat(stamp.replace("Z", "+00:00")) for stamp in first.times.values()]
    assert stamps == sorted(stamps)


@pytest.mark.anyio
async def test_the_result_shapes_and_the_report(tmp_path: Path) -> None:
    app = text_app(tmp_path, ["files"])
    reply = scissors_reply(
        write("w", "a.txt", content="hello"),
        {"id": "r", "type": "read_file", "operation": "read", "parameters": {"path": "a.txt"}},
        {"id": "x", "type": "read_file", "operation": "read", "parameters": {"path": "nope.txt"}},
        {"id": "bad", "type": "read_file", "parameters": {}},
        markdown="I wrote **a.txt**.",
    )
    report = await run(app, reply)
    shape = report.as_dict()
    assert shape["format"] == "scissors" and shape["markdown"] == "I wrote **a.txt**."
    assert [call["id"] for call in shape["calls"]] == ["w", "r", "x"]
    read_call = shape["calls"][1]
    assert read_call["name"] == "files.read" and read_call["written_as"] == "read_file"
    assert read_call["operation"] == "read" and read_call["priority"] == 0 and read_call["status"] == "completed"
    write_result, read_result, missing = shape["results"]
    assert write_result["name"] == "files.write" and write_result["notice"].startswith("Action performed")
    assert read_result["content"]["content"] == "hello"
    assert missing["name"] == "files.read" and "error" in missing and "content" not in missing
    [problem] = shape["parse_errors"]
    assert problem["label"] == "block 1, item 4" and "operation must be a string" in problem["message"]
    assert [item.get("error", "")[:9] for item in report.as_results()][-1] == "block 1, "


@pytest.mark.anyio
async def test_markdown_shows_each_call_and_result_and_fences_cannot_break(tmp_path: Path) -> None:
    app = text_app(tmp_path, ["files"])
    content = "before\n```\ninside\n````\nafter"
    report = await run(app, json.dumps({"tool": "files.write", "path": "a.md", "content": content}))
    markdown = render_markdown(report.results)
    assert markdown.startswith("### `files.write` (call_1): ok\n")
    assert "`````json\n" in markdown  # longer than any backtick run in the content
    assert json.dumps(content)[1:-1] in markdown


@pytest.mark.anyio
async def test_a_high_risk_call_from_text_needs_an_approval(tmp_path: Path) -> None:
    app = text_app(tmp_path, ["files"])
    target = tmp_path / "data" / "files" / "keep.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("precious")
    report = await run(
        app, scissors_reply({"id": "d", "type": "delete_file", "operation": "rm", "parameters": {"path": "keep.txt"}})
    )
    [result] = report.results
    assert result.outcome.error is not None and result.outcome.error["kind"] == "approval_required"
    assert target.exists()


def test_the_cli_prints_the_markdown_after_the_results(tmp_path: Path) -> None:
    config = demo_config(tmp_path, servers='["demo"]')
    reply = scissors_reply(
        {"id": "e", "type": "demo.echo", "operation": "echo", "parameters": {"text": "hi"}},
        markdown='Here you go.\n{"name": "demo.echo", "arguments": {"text": "never"}}',
    )
    result = run_cli(config, "call-text", "-", input_text=reply)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "[block 1, item 1] demo.echo: ok\necho: hello: hi\n\n"
        'Here you go.\n{"name": "demo.echo", "arguments": {"text": "never"}}\n'
    )
    only_markdown = run_cli(config, "call-text", "-", "--format", "scissors", input_text="No calls, just words.")
    assert only_markdown.returncode == 0 and only_markdown.stdout == "No calls, just words.\n"


@pytest.mark.parametrize("output", ["results", "report", "markdown"])
def test_the_cli_output_formats(tmp_path: Path, output: str) -> None:
    config = demo_config(tmp_path, servers='["demo"]')
    reply = (
        '{"id": "c1", "name": "demo.echo", "arguments": {"text": "hi"}} and '
        '<tool_call>{"name": "demo.nope", "arguments": {}}</tool_call>'
    )
    result = run_cli(config, "call-text", "-", "--output", output, input_text=reply)
    assert result.returncode == 1, result.stderr
    if output == "markdown":
        assert result.stdout.startswith("### `demo.echo` (c1): ok\n")
        assert "### `demo.nope` (call_2): error" in result.stdout
        return
    shaped = json.loads(result.stdout)
    if output == "results":
        assert shaped[0] == {"id": "c1", "name": "demo.echo", "content": {"echo": "hello: hi"}}
        assert shaped[1]["name"] == "demo.nope" and shaped[1]["error"].startswith("there is no tool named 'demo.nope'")
    else:
        assert set(shaped) == {"format", "calls", "results", "markdown", "parse_errors"}
        assert shaped["format"] == "prose" and shaped["markdown"] == " and "
        assert [call["status"] for call in shaped["calls"]] == ["completed", "failed"]


@pytest.mark.anyio
async def test_a_streamed_reply_runs_each_call_as_it_completes(tmp_path: Path) -> None:
    from mcp_tools.policy.gate import Caller
    from mcp_tools.textcalls import stream_reply

    app = text_app(tmp_path, ["files"])
    reply = scissors_reply(
        write("a", "a.txt"), write("b", "b.txt", 5), {"id": "c", "type": "read_file"}, markdown="Done. " * 8
    )
    sizes = []

    async def pieces():
        for start in range(0, len(reply), 16):
            sizes.append(len(list((tmp_path / "data" / "files").glob("*.txt"))))
            yield reply[start : start + 16]

    async with app.running():
        events = [event async for event in stream_reply(app, pieces(), Caller(transport="text"))]
    kinds = [(event["event"], event.get("id")) for event in events]
    assert kinds[:3] == [("result", "b"), ("result", "a"), ("parse_error", "call_3")]
    assert {kind for kind, _ in kinds[3:-1]} == {"prose"} and kinds[-1] == ("done", None)
    assert events[0]["status"] == "completed" and set(events[0]["times"]) == {"detected", "executing", "completed"}
    assert events[-1] == {"event": "done", "format": "scissors", "markdown": "Done. " * 8, "failed": True}
    assert sizes[-1] == 2  # both files existed before the reply had finished arriving


def test_the_cli_streams_events_as_the_reply_arrives(tmp_path: Path) -> None:
    config = demo_config(tmp_path, servers='["demo"]')
    reply = scissors_reply({"id": "e", "type": "demo.echo", "operation": "echo", "parameters": {"text": "hi"}})
    result = run_cli(config, "call-text", "-", "--stream", input_text=reply)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [event["event"] for event in events] == ["result", "prose", "done"]
    assert events[0]["content"] == {"echo": "hello: hi"} and events[-1]["markdown"] == "All done."
    failing = run_cli(
        config, "call-text", "-", "--stream", input_text='<tool_call>{"name": "demo.nope", "arguments": {}}</tool_call>'
    )
    assert failing.returncode == 1 and json.loads(failing.stdout.splitlines()[-1])["failed"] is True


@pytest.mark.parametrize("option", [["--output", "markdown"], ["--json"]])
def test_stream_with_an_output_it_cannot_honour_is_refused_not_ignored(tmp_path: Path, option: list[str]) -> None:
    config = demo_config(tmp_path, servers='["demo"]')
    reply = '<tool_call>{"name": "demo.echo", "arguments": {"text": "hi"}}</tool_call>'
    result = run_cli(config, "call-text", "-", "--stream", *option, input_text=reply)
    assert result.returncode == 2 and "--stream" in result.stderr and result.stdout == ""


def test_text_from_the_command_line_reaches_only_what_mcp_serves(tmp_path: Path) -> None:
    config = demo_config(tmp_path, servers='["demo"]\ntools = ["demo", "-demo.erase"]')
    refused = run_cli(
        config,
        "call-text",
        "-",
        "--output",
        "results",
        input_text='{"name": "demo.erase", "arguments": {"target": "x"}}',
    )
    assert refused.returncode == 1
    [result] = json.loads(refused.stdout)
    assert "is not served to this client" in result["error"]
    served = run_cli(config, "call-text", "-", input_text='{"name": "demo.echo", "arguments": {"text": "hi"}}')
    assert served.returncode == 0 and "hello: hi" in served.stdout
