"""The scissors-cat format: a JSON array of calls, the delimiter ✂️🐱, then markdown for the chat."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_tools.textcalls import DELIMITERS, ParsedCall, ParseProblem, parse_reply

SCISSORS = "\u2702\ufe0f\U0001f431"


def reply(calls: list[Any] | str, markdown: str = "Done.", delimiter: str = SCISSORS) -> str:
    section = calls if isinstance(calls, str) else json.dumps(calls)
    return f"{section}\n{delimiter}\n{markdown}"


def call(type_: str = "files_read", **overrides: Any) -> dict[str, Any]:
    return {"id": "1", "type": type_, "operation": "read it", "parameters": {"path": "a.md"}, **overrides}


def test_the_delimiter_forms_accepted() -> None:
    assert DELIMITERS[:2] == ("✂️🐱", "✂🐱")
    assert "‚úÇÔ∏èüê±" in DELIMITERS  # as the format's own documentation prints it (Mac Roman)
    assert "‚úÇüê±" in DELIMITERS


@pytest.mark.parametrize("delimiter", DELIMITERS)
def test_each_delimiter_form_splits_tools_from_markdown(delimiter: str) -> None:
    parsed = parse_reply(reply([call()], "Here it is.", delimiter))
    assert parsed.format == "scissors"
    [found] = parsed.items
    assert isinstance(found, ParsedCall)
    assert (found.name, found.arguments, found.call_id, found.operation) == (
        "files_read",
        {"path": "a.md"},
        "1",
        "read it",
    )
    assert parsed.markdown == "Here it is."


def test_no_delimiter_in_scissors_mode_is_all_markdown_and_runs_nothing() -> None:
    text = json.dumps([call()]) + "\nSome words."
    parsed = parse_reply(text, "scissors")
    assert parsed.items == [] and parsed.markdown == text


def test_an_empty_array_means_no_calls() -> None:
    parsed = parse_reply(reply([], "Just chatting."))
    assert parsed.format == "scissors" and parsed.items == [] and parsed.markdown == "Just chatting."


def test_the_markdown_is_never_read_for_calls() -> None:
    markdown = (
        "To write a file, a model writes:\n```json\n"
        '{"tool": "write_file", "path": "notes.md", "content": "x"}\n```\n'
        'or {"name": "files.delete", "arguments": {"path": "a.md"}} or <tool_call>{"name": "files.list"}</tool_call>'
    )
    parsed = parse_reply(reply([], markdown))
    assert parsed.items == [] and parsed.markdown == markdown


def test_each_invalid_call_is_reported_and_the_valid_ones_kept() -> None:
    calls = [
        call(id="a"),
        {"type": "files_read", "operation": "x", "parameters": {}},
        call(id="c", parameters="path=a.md"),
        call(id="d", priority="high"),
        call(id="e", type=7),
        {"id": "f", "type": "files_read", "parameters": {}},
        call(id="g", approved=True),
        "files_read",
        call(id="i", priority=2.5),
    ]
    items = parse_reply(reply(calls)).items
    messages = [item.message if isinstance(item, ParseProblem) else item.call_id for item in items]
    assert messages == [
        "a",
        "block 1, item 2: id must be the call's id as a non-empty string",
        "block 1, item 3: parameters must be a JSON object of arguments, got a string",
        "block 1, item 4: priority must be a number, got a string",
        "block 1, item 5: type must be the tool's name as a string, got a number",
        "block 1, item 6: operation must be a string saying what the call does, got null",
        "block 1, item 7: unexpected approved; put every argument inside parameters",
        "block 1, item 8: expected a JSON object, got a string",
        "i",
    ]
    assert [item.priority for item in items if isinstance(item, ParsedCall)] == [0, 2.5]


def test_a_numeric_id_and_a_type_split_into_type_and_operation() -> None:
    [found] = parse_reply(reply([{"id": 7, "type": "gmail", "operation": "send", "parameters": {}}])).items
    assert isinstance(found, ParsedCall) and (found.call_id, found.name) == ("7", "gmail_send")


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ('[{"id": "1", "type": "files_read",}]', "block 1, item 1: invalid JSON"),
        ('[{"id": "1"} {"id": "2"}]', "block 1: expected , or ] after item 1"),
        (
            'Reading it.\n[{"id": "1", "type": "files_read", "operation": "r", "parameters": {}}]',
            "must start with the JSON array of calls; it starts with text (it starts at line 2)",
        ),
    ],
)
def test_a_broken_tool_section_is_reported_in_scissors_mode(section: str, expected: str) -> None:
    parsed = parse_reply(reply(section), "scissors")
    assert parsed.markdown == "Done."
    assert any(isinstance(item, ParseProblem) and expected in item.message for item in parsed.items), parsed.items


def test_auto_mode_reads_a_reply_without_the_delimiter_as_prose() -> None:
    assert parse_reply("[a link](https://example.com) and more").format == "prose"
    assert parse_reply('[{"name": "files.read", "arguments": {"path": "a"}}]').format == "prose"
    assert parse_reply(reply([call()])).format == "scissors"


def test_string_contents_cannot_fake_the_end_of_the_array_or_the_delimiter() -> None:
    tricky = call(parameters={"path": "a.md", "note": f'"] {SCISSORS} [{{'})
    parsed = parse_reply(reply([tricky], "Ok."))
    [found] = parsed.items
    assert isinstance(found, ParsedCall) and found.arguments["note"] == f'"] {SCISSORS} [{{'
    assert parsed.markdown == "Ok."
