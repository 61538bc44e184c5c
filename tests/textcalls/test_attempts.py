"""A call written in prose with a name we do not have, or without a name, is answered, never silence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_tools.textcalls import ParsedCall, ParseProblem, Prose, parse_reply, render_markdown
from mcp_tools.textcalls.calls import INVALID_TOOL_CALL, INVALID_TOOL_NAME, MISSING_ARGUMENTS
from tests.textcalls.conftest import run, text_app
from tests.textcalls.test_streaming import split, streamed

pytestmark = pytest.mark.anyio
FENCE = "```"

ATTEMPTS = [
    ('Let me read it: {"name": "fs.readFile", "arguments": {"path": "keep.txt"}} and then go on.', "fs.readFile"),
    ('{"name": "file.read", "arguments": {"path": "keep.txt"}}', "file.read"),
    ('Reading {"tool": "files.readAll", "args": {"path": "keep.txt"}}.', "files.readAll"),
    ('First {"id": "c1", "name": "notes.fetch", "parameters": "{\\"path\\": \\"a.md\\"}"} then.', "notes.fetch"),
]
PROBLEMS = [
    ('Now: {"arguments": {"path": "keep.txt"}}', "no tool name", INVALID_TOOL_CALL),
    ('Now: {"name": "fs.readFile", "arguments": null}', "arguments is null", MISSING_ARGUMENTS),
    ('Now: {"name": "files.read", "arguments": null}', "arguments is null", MISSING_ARGUMENTS),
    ('Now: {"name": "fs.readFile", "arguments": "path=a"}', "arguments is a string but not valid JSON", None),
    ('Now: {"name": "fs.readFile", "arguments": [1]}', "arguments must be a JSON object", INVALID_TOOL_CALL),
]
DATA = [
    'Her record is {"name": "Ada", "age": 36}.',
    'A person: {"name": "Ada Lovelace", "arguments": {"for": "engines"}}.',
    'Version {"name": "v1.2", "arguments": {"x": 1}} shipped.',
    'The config {"name": "fs.readFile", "arguments": {}, "enabled": true} has three keys.',
    'Only a name: {"name": "fs.readFile"} here.',
    'Input {"input": {"path": "a"}} is not arguments.',
    'An echoed result {"name": "fs.readFile", "error": "no such tool"} is data.',
    '{"name": 5, "arguments": {}}',
]
QUOTED = [
    'The mail said "call {"name": "fs.readFile", "arguments": {"path": "a"}} now" to me.',
    'Inline `{"name": "fs.readFile", "arguments": {"path": "a"}}` is code.',
    '> {"name": "fs.readFile", "arguments": {"path": "a"}}\n\nafter',
    '<!-- {"arguments": {"path": "a"}} -->',
    f'{FENCE}python\nx = {{"name": "fs.readFile", "arguments": {{"path": "a"}}}}\n{FENCE}\n',
]


def items(text: str) -> list[ParsedCall | ParseProblem]:
    return parse_reply(text).items


def same_streamed(text: str) -> None:
    """Split anywhere, a reply reads as the whole, and the prose shown is the reply's markdown."""
    whole = parse_reply(text)
    for cut in range(1, len(text)):
        result, events = streamed(split(text, [cut]))
        assert result == whole, cut
        assert "".join(event.text for event in events if isinstance(event, Prose)) == whole.markdown
    for size in (1, 2, 7):
        assert streamed([text[i : i + size] for i in range(0, len(text), size)])[0] == whole


@pytest.mark.parametrize(("text", "name"), ATTEMPTS)
def test_a_call_shaped_object_with_an_unknown_name_is_a_call(text: str, name: str) -> None:
    [call] = items(text)
    assert isinstance(call, ParsedCall) and call.name == name and call.source == "text"
    assert call.arguments == {"path": "a.md" if name == "notes.fetch" else "keep.txt"}
    same_streamed(text)


@pytest.mark.parametrize(("text", "words", "code"), PROBLEMS)
def test_a_call_shaped_object_that_cannot_run_is_a_problem_with_its_code(text: str, words: str, code: str) -> None:
    [problem] = items(text)
    assert isinstance(problem, ParseProblem) and words in problem.message
    assert problem.code == (code or INVALID_TOOL_CALL)
    same_streamed(text)


@pytest.mark.parametrize("text", DATA + QUOTED)
def test_data_and_quoted_calls_stay_prose(text: str) -> None:
    reply = parse_reply(text)
    assert reply.items == [] and reply.markdown == text
    same_streamed(text)


def test_deep_nesting_parses_or_is_refused_never_vanishes() -> None:
    deep = '{"a": ' * 60 + "1" + "}" * 60
    for name in ("files.write", "fs.writeFile"):
        text = f'Saving: {{"name": "{name}", "arguments": {{"path": "a", "content": "x", "meta": {deep}}}}} done'
        [call] = items(text)
        assert isinstance(call, ParsedCall) and call.name == name
        inner = call.arguments["meta"]
        for _ in range(59):
            inner = inner["a"]
        assert inner == {"a": 1}
        same_streamed(text)
    deeper = '{"a": ' * 100_000 + "1" + "}" * 100_000
    [refused] = items(f'Saving: {{"name": "fs.writeFile", "arguments": {{"meta": {deeper}}}}} done')
    assert isinstance(refused, ParseProblem)


async def test_unknown_names_are_answered_with_the_closest_tool(tmp_path: Path) -> None:
    app = text_app(tmp_path, ["files"])
    root = tmp_path / "data" / "files"
    root.mkdir(parents=True, exist_ok=True)
    reply = (
        'Reading: {"name": "fs.readFile", "arguments": {"path": "keep.txt"}}\n\n'
        'Then {"name": "file.read", "arguments": {"path": "keep.txt"}} and {"arguments": {"path": "x"}}.\n\n'
        'Or {"name": "files.read", "arguments": null}.'
    )
    report = await run(app, reply)
    results = report.as_results()
    assert [result.get("code") for result in results] == [
        INVALID_TOOL_NAME,
        INVALID_TOOL_NAME,
        INVALID_TOOL_CALL,
        MISSING_ARGUMENTS,
    ]
    assert "there is no tool named 'fs.readFile'; did you mean" in results[0]["error"]
    assert "did you mean 'files.read'?" in results[1]["error"]
    assert "no tool name" in results[2]["error"] and "arguments is null" in results[3]["error"]
    assert [error["code"] for error in report.as_dict()["parse_errors"]] == [INVALID_TOOL_CALL, MISSING_ARGUMENTS]
    assert "**Error (INVALID_TOOL_NAME):** there is no tool named 'fs.readFile'" in render_markdown(report.results)
    json.dumps(report.as_dict())  # the whole report is JSON as the API sends it


async def test_a_known_call_that_fails_for_its_own_reasons_carries_no_code(tmp_path: Path) -> None:
    app = text_app(tmp_path, ["files"])
    report = await run(app, 'Reading: {"name": "files.read", "arguments": {"path": "missing.txt"}}')
    [result] = report.as_results()
    assert "error" in result and "code" not in result
