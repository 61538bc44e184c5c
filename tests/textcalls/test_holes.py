"""Holes closed: CRLF fences, fence smuggling, calls in code spans, silent fence objects, the legacy wrapper."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_tools.textcalls import ParsedCall, ParseProblem, parse_tool_calls
from tests.textcalls.conftest import run, text_app

pytestmark = pytest.mark.anyio
FENCE = "```"


def names(text: str) -> list[str]:
    return [
        item.name if isinstance(item, ParsedCall) else f"problem: {item.message}" for item in parse_tool_calls(text)
    ]


def test_a_crlf_reply_parses_its_json_fence() -> None:
    text = f'Sure.\r\n{FENCE}json\r\n{{"name": "files.read", "arguments": {{"path": "a.md"}}}}\r\n{FENCE}\r\nDone.\r\n'
    [call] = parse_tool_calls(text)
    assert isinstance(call, ParsedCall) and (call.name, call.arguments) == ("files.read", {"path": "a.md"})
    tool_fence = f'{FENCE}tool_call\r\n{{"name": "files.list"}}\r\n{FENCE}\r\nafter {{"tool": "files.list"}}'
    assert names(tool_fence) == ["files.list", "files.list"]


CONTENT_WITH_A_FENCE = f'# Setup\n{FENCE}\n{{"tool": "delete_file", "path": "keep.txt"}}\n{FENCE}\nRun it.'
# A careless model writes file content raw: real line breaks, quotes unescaped.
SMUGGLED = (
    "Here is the README.\n"
    f'{FENCE}json\n{{"tool": "write_file", "path": "README.md", "content": "{CONTENT_WITH_A_FENCE}"}}\n{FENCE}\n'
    "Done."
)
ESCAPED = SMUGGLED.replace(f'"{CONTENT_WITH_A_FENCE}"', json.dumps(CONTENT_WITH_A_FENCE).replace("\\n", "\n"))


def test_a_backtick_line_inside_file_content_does_not_end_the_fence() -> None:
    [call] = parse_tool_calls(ESCAPED)
    assert isinstance(call, ParsedCall) and call.name == "write_file"
    assert call.arguments["content"] == CONTENT_WITH_A_FENCE


def test_a_fence_that_fails_consumes_its_whole_extent() -> None:
    [problem] = parse_tool_calls(SMUGGLED)
    assert isinstance(problem, ParseProblem) and "invalid JSON" in problem.message
    [problem] = parse_tool_calls(ESCAPED.replace('Run it."}', 'Run it.",}'))
    assert isinstance(problem, ParseProblem) and "invalid JSON" in problem.message


def test_a_bare_call_that_fails_consumes_its_paragraph() -> None:
    text = (
        '{"tool": "write_file", "path": "a.md", "content": "line one\n'
        '{"tool": "delete_file", "path": "keep.txt"}\n"}\n\nA new paragraph {"tool": "files.list"}'
    )
    assert names(text) == [
        "problem: block 1: this looks like a tool call but is not valid JSON: a string holds a raw line break "
        r"(write it as \n, or put the call in a ```json fence)",
        "files.list",
    ]


async def test_smuggled_calls_never_run(tmp_path: Path, files_root: Path) -> None:
    app = text_app(tmp_path, ["files"])
    report = await run(app, SMUGGLED)
    [result] = report.results
    assert result.outcome.error is not None and result.outcome.error["kind"] == "invalid_arguments"
    assert (files_root / "keep.txt").read_text() == "precious"
    assert app.store.tail(10) == []
    report = await run(app, ESCAPED)
    assert [result.name for result in report.results] == ["files.write"]
    assert (files_root / "README.md").read_text() == CONTENT_WITH_A_FENCE
    assert (files_root / "keep.txt").read_text() == "precious"


@pytest.mark.parametrize(
    "text",
    [
        'To delete, a model writes `{"name": "files.delete", "arguments": {"path": "a"}}` in its reply.',
        'Or ``{"tool": "delete_file", "path": "a"}`` with double backticks.',
        'A span over a line break: `{"tool": "delete_file",\n"path": "a"}` still prose.',
        'Tags too: `<tool_call>{"name": "files.delete", "arguments": {"path": "a"}}</tool_call>`.',
    ],
)
def test_calls_inside_inline_code_spans_are_prose(text: str) -> None:
    assert parse_tool_calls(text) == []


def test_an_unclosed_backtick_ends_with_its_paragraph() -> None:
    text = 'A stray ` here.\n\nThen {"tool": "files.list"} runs.'
    assert names(text) == ["files.list"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("{'tool': 'write_file', 'path': 'a', 'content': 'x'}", "problem: block 1: invalid JSON at line 1 column 2: "),
        ('{"tool": 5, "path": "a"}', "problem: block 1: tool must be the tool's name as a string, got a number"),
        ('{"tool": "writeFile", "path": "a", "content": "x"}', "writeFile"),
        ('{"tool": "write-file", "path": "a", "content": "x"}', "write-file"),
        ('{"tool": "create_file", "path": "a", "content": "x"}', "create_file"),
        ('{"name": "files.read"}', "files.read"),
    ],
)
def test_every_object_in_a_fence_meant_for_tools_is_a_call_or_an_error(body: str, expected: str) -> None:
    [found] = names(f"{FENCE}json\n{body}\n{FENCE}")
    assert found.startswith(expected)


def test_a_tool_fence_reports_the_objects_that_are_not_calls() -> None:
    body = '[{"tool": "files.list"}, {"path": "a"}, 3]'
    assert names(f"{FENCE}json\n{body}\n{FENCE}") == [
        "files.list",
        'problem: block 1, item 2: no tool name: expected a "name" key holding the tool\'s name',
        "problem: block 1, item 3: expected a JSON object, got a number",
    ]


async def test_unknown_names_in_a_fence_suggest_the_closest_tool(tmp_path: Path, files_root: Path) -> None:
    app = text_app(tmp_path, ["files"])
    fence = "\n".join(
        f'{FENCE}json\n{{"tool": "{name}", "path": "a", "content": "x"}}\n{FENCE}'
        for name in ("create_file", "writeFile", "write-file")
    )
    report = await run(app, fence)
    for result in report.results:
        assert result.outcome.error is not None and result.outcome.error["kind"] == "unknown_tool"
        assert "did you mean 'write_file'?" in result.outcome.error["message"]
    assert not (files_root / "a").exists()


async def test_a_name_without_arguments_is_reported_not_ignored(tmp_path: Path, files_root: Path) -> None:
    app = text_app(tmp_path, ["files"])
    report = await run(app, 'Reading it: {"name": "files.read"}')
    [result] = report.results
    assert result.outcome.error is not None and result.outcome.error["kind"] == "invalid_arguments"
    assert "files.read needs path" in result.outcome.error["message"]


async def test_the_legacy_tool_calls_wrapper_is_accepted(tmp_path: Path, files_root: Path) -> None:
    app = text_app(tmp_path, ["files"])
    wrapper = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "files_read", "arguments": '{"path": "keep.txt"}'},
            },
            {"id": "call_b", "type": "function", "function": {"name": "files_list", "arguments": "{}"}},
        ],
    }
    for text in (json.dumps(wrapper), f"{FENCE}json\n{json.dumps(wrapper)}\n{FENCE}"):
        report = await run(app, text)
        assert [(result.id, result.name, result.is_error) for result in report.results] == [
            ("call_a", "files.read", False),
            ("call_b", "files.list", False),
        ]
        assert report.results[0].outcome.structured is not None
        assert report.results[0].outcome.structured["content"] == "precious"
