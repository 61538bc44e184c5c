"""Tool calls written as text: parsing every format, the file-tool aliases, and the same policy gate."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.composition.app import App, build_app
from mcp_tools.core.tooling import ToolFailure
from mcp_tools.policy.gate import Answer, Caller, ConfirmationRequest
from mcp_tools.textcalls import (
    ALIASES,
    MAX_CALLS,
    MAX_TEXT_CHARS,
    ParsedCall,
    ParseProblem,
    TextCallResult,
    parse_tool_calls,
    resolve_alias,
    run_text_calls,
)
from tests.harness import make_config
from tests.processes import answer_on_terminal, cli_in_process, demo_config, run_cli

FENCE = "```"


def calls(text: str) -> list[ParsedCall]:
    items = parse_tool_calls(text)
    assert all(isinstance(item, ParsedCall) for item in items), items
    return items  # type: ignore[return-value]


def problems(text: str) -> list[ParseProblem]:
    return [item for item in parse_tool_calls(text) if isinstance(item, ParseProblem)]


def one(text: str) -> tuple[str, dict[str, Any]]:
    [call] = calls(text)
    return call.name, call.arguments


# -- parsing: the formats -----------------------------------------------------------------------


@pytest.mark.parametrize("label", ["json", "tool_call", "tool", "", "JSON"])
def test_fenced_blocks_with_each_label(label: str) -> None:
    text = f'Reading it now.\n{FENCE}{label}\n{{"name": "files.read", "arguments": {{"path": "a.md"}}}}\n{FENCE}\nDone.'
    assert one(text) == ("files.read", {"path": "a.md"})


def test_tilde_fences_and_longer_markers_are_fences_too() -> None:
    text = '~~~json\n{"name": "files.read", "arguments": {"path": "a"}}\n~~~\n````tool\n{"name": "files.list"}\n````'
    assert [(call.name, call.arguments) for call in calls(text)] == [("files.read", {"path": "a"}), ("files.list", {})]


def test_indented_fences_count_and_inline_triple_backticks_do_not() -> None:
    text = '1. Read it:\n    ```json\n    {"name": "files.read", "arguments": {"path": "a"}}\n    ```\n'
    assert one(text) == ("files.read", {"path": "a"})
    inline = '```python``` then {"tool": "files.list"}'
    assert one(inline) == ("files.list", {})


def test_a_longer_outer_fence_carries_content_with_fences_in_it() -> None:
    text = '````json\n{"tool": "write_file", "path": "R.md", "content": "# T\n```sh\nls\n```\n"}\n````\n'
    assert one(text + "Done.") == ("write_file", {"path": "R.md", "content": "# T\n```sh\nls\n```\n"})


@pytest.mark.parametrize("tag", ["tool_call", "function_call"])
def test_hermes_and_function_call_tags(tag: str) -> None:
    text = f'<{tag}>\n{{"name": "demo_echo", "arguments": {{"text": "hi"}}}}\n</{tag}>'
    [call] = calls(text)
    assert (call.name, call.arguments, call.source) == ("demo_echo", {"text": "hi"}, "tag")


def test_a_fence_inside_a_tag_is_unwrapped() -> None:
    text = '<tool_call>\n```json\n{"name": "files.read", "arguments": {"path": "a"}}\n```\n</tool_call>'
    assert one(text) == ("files.read", {"path": "a"})


def test_bare_objects_in_prose_with_braces_and_escapes_inside_strings() -> None:
    text = (
        'First {"name": "files.write", "arguments": {"path": "x.py", '
        '"content": "def f():\\n    return {\\"a\\": \\"}\\"}"}}'
        ' and then {"tool": "read_file", "path": "x.py"} for a check.'
    )
    first, second = calls(text)
    assert first.name == "files.write" and first.source == "text"
    assert first.arguments["content"] == 'def f():\n    return {"a": "}"}'
    assert (second.name, second.arguments) == ("read_file", {"path": "x.py"})


def test_nested_braces_inside_strings_in_a_fence() -> None:
    content = 'if (x) { y = "}"; } \\ {{ }}'
    body = json.dumps({"name": "files.write", "arguments": {"path": "a.c", "content": content}})
    assert one(f"{FENCE}json\n{body}\n{FENCE}")[1]["content"] == content


def test_several_calls_in_one_reply_come_in_order_of_appearance() -> None:
    text = (
        '{"tool": "files.list"}\n'
        '<tool_call>{"name": "files.read", "arguments": {"path": "b"}}</tool_call>\n'
        f'{FENCE}json\n{{"name": "files.read", "arguments": {{"path": "c"}}}}\n{FENCE}\n'
        'and last {"name": "files.read", "arguments": {"path": "d"}}'
    )
    found = calls(text)
    assert [call.arguments.get("path") for call in found] == [None, "b", "c", "d"]
    assert [call.label for call in found] == ["block 1", "block 2", "block 3", "block 4"]
    assert [call.line for call in found] == [1, 2, 3, 6]


def test_arrays_and_json_lines_number_their_items() -> None:
    array = f'{FENCE}json\n[{{"name": "files.read", "arguments": {{"path": "a"}}}}, {{"tool": "list_files"}}]\n{FENCE}'
    first, second = calls(array)
    assert (first.label, second.label) == ("block 1, item 1", "block 1, item 2")
    assert (second.name, second.arguments) == ("list_files", {})
    lines = (
        f'{FENCE}tool_call\n{{"name": "files.read", "arguments": {{"path": "a"}}}}\n{{"name": "files.list"}}\n{FENCE}'
    )
    assert [call.name for call in calls(lines)] == ["files.read", "files.list"]


@pytest.mark.parametrize("key", ["arguments", "args", "parameters", "input"])
@pytest.mark.parametrize("name_key", ["name", "tool", "tool_name", "function"])
def test_every_name_and_arguments_key(name_key: str, key: str) -> None:
    text = f'{FENCE}json\n{{"{name_key}": "files.read", "{key}": {{"path": "a"}}}}\n{FENCE}'
    assert one(text) == ("files.read", {"path": "a"})


def test_arguments_as_a_json_string_and_the_openai_shape() -> None:
    assert one('<tool_call>{"name": "files.read", "arguments": "{\\"path\\": \\"a\\"}"}</tool_call>') == (
        "files.read",
        {"path": "a"},
    )
    openai = {"id": "call_1", "type": "function", "function": {"name": "files_read", "arguments": '{"path": "b"}'}}
    assert one(json.dumps(openai)) == ("files_read", {"path": "b"})
    assert one(json.dumps({"type": "function", "function": {"name": "files.list", "arguments": ""}})) == (
        "files.list",
        {},
    )


def test_flat_code_writer_style_keeps_the_other_keys_as_arguments() -> None:
    text = f'{FENCE}\n{{"tool": "write_file", "path": "a.txt", "content": "x", "name": "kept"}}\n{FENCE}'
    assert one(text) == ("write_file", {"path": "a.txt", "content": "x", "name": "kept"})


def test_raw_line_breaks_inside_fenced_strings_are_accepted() -> None:
    text = f'{FENCE}json\n{{"tool": "write_file", "path": "a.txt", "content": "one\ntwo\n"}}\n{FENCE}'
    assert one(text)[1]["content"] == "one\ntwo\n"


@pytest.mark.parametrize(
    "text",
    [
        'The config is {"a": 1, "b": {"c": [1, 2]}} as before.',
        'A person: {"name": "Ada", "input": "hello"}.',
        'A form: {"input": {"label": "Name"}} and {"name": null, "args": [1]}.',
        'A record {"name": "Ada", "age": 36} and {"tool": "hammer", "weight": 3}.',
        f'{FENCE}json\n{{"users": [{{"name": "Ada"}}], "count": 1}}\n{FENCE}',
        f"{FENCE}json\n[1, 2, 3]\n{FENCE}",
        f"{FENCE}\n$ ls -la\ntotal 0\n{FENCE}",
        f'{FENCE}python\nx = {{"tool": "delete_file", "path": "a"}}\n{FENCE}',
        f'{FENCE}bash\necho \'{{"name": "files.delete", "arguments": {{"path": "a"}}}}\'\n{FENCE}',
        'Use {braces} freely, and {"unclosed": like this. And } stray.',
        "Sets like {1, 2} or templates {{ name }} or {} are not calls.",
        "",
    ],
)
def test_json_and_code_that_are_not_calls_are_ignored(text: str) -> None:
    assert parse_tool_calls(text) == []


# -- parsing: broken blocks ----------------------------------------------------------------------


def test_invalid_json_in_a_fence_names_the_block_line_and_column() -> None:
    text = (
        f'{FENCE}json\n{{"tool": "files.list"}}\n{FENCE}\n'
        f'{FENCE}json\n{{\n  "name": "files.read",\n  "arguments": {{"path": "a"}}\n  "x": 1\n}}\n{FENCE}'
    )
    first, second = parse_tool_calls(text)
    assert isinstance(first, ParsedCall) and isinstance(second, ParseProblem)
    assert second.message == "block 2: invalid JSON at line 4 column 3: Expecting ',' delimiter"
    assert second.line == 4 and second.hint


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<tool_call>{'name': 'files.read'}</tool_call>", "block 1: invalid JSON at line 1 column 2"),
        (f"{FENCE}tool_call\nnot json at all\n{FENCE}", "block 1: invalid JSON at line 1 column 1"),
        ('<tool_call>{"name": "files.read", "arguments": {"path": "a"}', "block 1: <tool_call> is never closed"),
        ('<tool_call>{"arguments": {"path": "a"}}</tool_call>', 'block 1: no tool name: expected a "name" key'),
        (f'{FENCE}json\n{{"arguments": {{"path": "a"}}}}\n{FENCE}', "block 1: no tool name"),
        ('<tool_call>{"name": 7, "arguments": {}}</tool_call>', "block 1: name must be the tool's name as a string"),
        ('<tool_call>{"name": "files.read", "arguments": ["a"]}</tool_call>', "arguments must be a JSON object"),
        ('<tool_call>{"name": "files.read", "args": 3}</tool_call>', "args must be a JSON object of arguments"),
        ('<tool_call>{"name": "files.read", "arguments": "{path: a}"}</tool_call>', "arguments is a string but not"),
        ('<tool_call>{"name": "files.read", "arguments": "[1]"}</tool_call>', "got an array inside the string"),
        ('<tool_call>{"type": "function", "function": {"arguments": "{}"}}</tool_call>', "function.name is missing"),
        (
            '{"type": "function", "function": {"name": "files.read", "arguments": "{}"}, "approved": true}',
            "block 1: unexpected approved; put every argument inside function.arguments",
        ),
        ('{"function": {"name": "files.read", "arguments": {}, "confirm": 1}}', "block 1: unexpected confirm"),
        (
            f'{FENCE}json\n{{"name": null, "arguments": {{"path": "a"}}}}\n{FENCE}',
            "block 1: name must be the tool's name as a string, got null",
        ),
        ('<tool_call>["files.read"]</tool_call>', "block 1, item 1: expected a JSON object, got a string"),
        ("<tool_call>\n</tool_call>", "block 1: invalid JSON"),
        (f"{FENCE}tool\n{{}}\n{FENCE}", "block 1: no tool name"),
        ('{"tool": "write_file", "path": "a", "content": "x\ny"}', "block 1: this looks like a tool call but is not"),
        ('{"name": "files.read", "arguments": {"path": "a"}', "it is never closed"),
        ('{"name": "files.read", "arguments": {"path": "a"}} ', None),
    ],
)
def test_broken_calls_are_problems_a_model_can_act_on(text: str, expected: str | None) -> None:
    items = parse_tool_calls(text)
    if expected is None:
        assert len(items) == 1 and isinstance(items[0], ParsedCall)
        return
    assert len(items) == 1 and isinstance(items[0], ParseProblem), items
    assert expected in items[0].message


def test_keys_beside_name_and_arguments_are_refused_not_dropped() -> None:
    text = '<tool_call>{"name": "files.delete", "arguments": {"path": "a"}, "approved": true}</tool_call>'
    [problem] = problems(text)
    assert "unexpected approved beside name and arguments" in problem.message
    assert problem.name == "files.delete"
    both = '<tool_call>{"name": "files.read", "arguments": {}, "args": {}}</tool_call>'
    assert "both arguments and args" in problems(both)[0].message


def test_one_broken_item_does_not_hide_the_good_ones() -> None:
    calls_ = '[{"name": "files.read", "arguments": {"path": "a"}}, {"name": "files.read", "arguments": 1}]'
    text = f"{FENCE}json\n{calls_}\n{FENCE}"
    good, bad = parse_tool_calls(text)
    assert isinstance(good, ParsedCall) and isinstance(bad, ParseProblem)
    assert bad.message.startswith("block 1, item 2: arguments must be")


@pytest.mark.parametrize(
    "text",
    [
        "{" * 5000,
        '{"' * 5000,
        "<tool_call>" * 100,
        "```json\n" * 100,
        '{"name": "a", "arguments": ' * 2000,
        "\\" * 1000 + '{"name"',
        '<tool_call>{"name": "x", "arguments": {"a": ' + "[" * 100_000 + "</tool_call>",
        "```tool_call\n" + "[" * 100_000 + "\n```",
    ],
)
def test_garbage_never_raises(text: str) -> None:
    assert isinstance(parse_tool_calls(text), list)


def test_work_is_bounded_on_adversarial_text() -> None:
    started = time.perf_counter()
    parse_tool_calls('{"a":' * 150_000)
    parse_tool_calls('{"x{' * 200_000)
    parse_tool_calls("```json\n```\n" * 80_000)
    assert time.perf_counter() - started < 10


def test_too_many_calls_are_cut_and_reported() -> None:
    text = "\n".join(f'{{"tool": "files.read", "path": "f{index}"}}' for index in range(MAX_CALLS + 5))
    items = parse_tool_calls(text)
    assert len(items) == MAX_CALLS + 1
    assert all(isinstance(item, ParsedCall) for item in items[:MAX_CALLS])
    last = items[-1]
    assert isinstance(last, ParseProblem) and last.block is None
    assert f"only the first {MAX_CALLS} tool calls were read" in last.message
    assert f"from line {MAX_CALLS + 1}" in last.message


def test_text_beyond_the_size_cap_is_not_read_and_says_so() -> None:
    call = '{"tool": "files.read", "path": "a"}'
    text = call + " " * MAX_TEXT_CHARS + call
    items = parse_tool_calls(text)
    assert isinstance(items[0], ParsedCall) and len(items) == 2
    assert isinstance(items[1], ParseProblem) and f"longer than {MAX_TEXT_CHARS} characters" in items[1].message


# -- aliases --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("alias", "arguments", "tool"),
    [
        ("write_file", {"path": "a", "content": "x"}, "files.write"),
        ("delete_file", {"path": "a"}, "files.delete"),
        ("read_file", {"path": "a"}, "files.read"),
        ("list_files", {}, "files.list"),
        ("list_files", {"path": "docs"}, "files.list"),
        ("create_directory", {"path": "docs/new"}, "files.mkdir"),
    ],
)
def test_each_alias_maps_to_its_files_tool(alias: str, arguments: dict[str, Any], tool: str) -> None:
    assert resolve_alias(alias, arguments) == (tool, arguments)


def test_the_alias_table_covers_the_code_writer_tools() -> None:
    assert {name: alias.tool for name, alias in ALIASES.items()}.items() >= {
        "write_file": "files.write",
        "edit_file": "files.edit",
        "delete_file": "files.delete",
        "read_file": "files.read",
        "list_files": "files.list",
        "create_directory": "files.mkdir",
        "pilotwrite": "files.write",
        "pilotedit": "files.edit",
        "pilotdelete": "files.delete",
    }.items()


def test_other_names_pass_through_untouched() -> None:
    arguments = {"text": "hi"}
    assert resolve_alias("demo.echo", arguments) == ("demo.echo", arguments)
    assert resolve_alias("files_write", arguments) == ("files_write", arguments)


def test_edit_file_with_one_search_replace() -> None:
    tool, arguments = resolve_alias(
        "edit_file", {"path": "a.txt", "search_replace": {"old_string": "a", "new_string": "b"}, "dry_run": True}
    )
    assert tool == "files.edit"
    assert arguments == {"path": "a.txt", "dry_run": True, "edits": [{"old_string": "a", "new_string": "b"}]}


def test_edit_file_with_a_list_and_a_top_level_replace_all() -> None:
    _, arguments = resolve_alias(
        "edit_file",
        {
            "path": "a.txt",
            "replace_all": True,
            "search_replace": [
                {"old_string": "a", "new_string": "b"},
                {"old_string": "c", "new_string": "d", "replace_all": False},
            ],
        },
    )
    assert arguments["edits"] == [
        {"old_string": "a", "new_string": "b", "replace_all": True},
        {"old_string": "c", "new_string": "d", "replace_all": False},
    ]
    assert "replace_all" not in arguments and "search_replace" not in arguments


def test_dollar_groups_and_backslashes_stay_literal() -> None:
    entry = {"old_string": r"(\w+)\s*=\s*\1", "new_string": r"$1 \1 \\n \g<0>"}
    _, arguments = resolve_alias("edit_file", {"path": "a", "search_replace": entry})
    assert arguments["edits"] == [entry]


def test_edit_file_already_in_files_edit_terms_passes_through() -> None:
    arguments = {"path": "a", "edits": [{"old_string": "a", "new_string": "b"}]}
    assert resolve_alias("edit_file", arguments) == ("files.edit", arguments)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "a", "search_replace": {"new_string": "b"}}, "edit_file needs search_replace.old_string"),
        ({"path": "a", "search_replace": {"old_string": "a"}}, "edit_file needs search_replace.new_string"),
        (
            {"path": "a", "search_replace": [{"old_string": "a", "new_string": "b"}, {"old_string": "c"}]},
            "edit_file search_replace[1] needs new_string",
        ),
        ({"path": "a", "search_replace": [{"new_string": "b"}]}, "edit_file search_replace[0] needs old_string"),
        ({"path": "a"}, "edit_file needs search_replace"),
        ({"path": "a", "search_replace": []}, "edit_file needs at least one entry in search_replace"),
        ({"path": "a", "search_replace": "a->b"}, "edit_file search_replace must be an object or a list"),
        ({"path": "a", "search_replace": ["a"]}, "edit_file search_replace[0] must be an object"),
    ],
)
def test_edit_file_errors_name_the_field_in_its_own_terms(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolFailure) as caught:
        resolve_alias("edit_file", arguments)
    assert caught.value.kind == "invalid_arguments"
    assert caught.value.message.startswith(message)


def test_unknown_keys_are_passed_on_for_the_gate_to_report() -> None:
    _, arguments = resolve_alias(
        "edit_file", {"path": "a", "search_replace": {"old_string": "a", "new_string": "b", "regex": True}, "x": 1}
    )
    assert arguments == {"path": "a", "x": 1, "edits": [{"old_string": "a", "new_string": "b", "regex": True}]}
    assert resolve_alias("write_file", {"path": "a", "content": "", "mode": "w"})[1]["mode"] == "w"


# -- end to end through the real gate -------------------------------------------------------------


class Yes:
    """A person who says yes to everything, and remembers what they were asked."""

    def __init__(self) -> None:
        self.asked: list[ConfirmationRequest] = []

    async def ask(self, request: ConfirmationRequest) -> Answer:
        self.asked.append(request)
        return Answer.ACCEPT


def text_app(tmp_path: Path, servers: list[str], **policy: Any) -> App:
    return build_app(make_config(tmp_path, {"server": {"servers": servers}, "policy": policy}))


async def run(app: App, text: str, caller: Caller | None = None) -> list[TextCallResult]:
    async with app.running():
        return await run_text_calls(app, text, caller or Caller(transport="text"))


def error_kind(result: TextCallResult) -> str:
    assert result.is_error and result.outcome.error is not None, result.outcome.text
    return result.outcome.error["kind"]


def audit_rows(app: App) -> list[dict[str, Any]]:
    return [row.as_dict() for row in app.store.tail(100)]


@pytest.mark.anyio
async def test_demo_calls_go_through_the_same_policy(tmp_path: Path, demo_namespace: str) -> None:
    app = text_app(tmp_path, ["demo"])
    reply = (
        '{"name": "demo.echo", "arguments": {"text": "hi"}}\n'
        '<tool_call>{"name": "demo_note", "arguments": {"key": "k", "text": "v"}}</tool_call>\n'
        '{"name": "demo.erase", "arguments": {"target": "everything"}}\n'
        '<tool_call>{"name": "demo.nothing", "arguments": {}}</tool_call>\n'
        f'{FENCE}tool_call\n{{"name": "demo.echo", "arguments": [1]}}\n{FENCE}'
    )
    echo, note, erase, unknown, broken = await run(app, reply)
    assert not echo.is_error and echo.outcome.structured == {"echo": "hello: hi"} and echo.name == "demo.echo"
    assert not note.is_error and note.outcome.notice and note.outcome.notice.startswith("Action performed")
    assert error_kind(erase) == "approval_required"
    assert app.services["demo"].erased == []
    assert error_kind(unknown) == "unknown_tool"
    assert error_kind(broken) == "invalid_arguments"
    assert broken.outcome.text.startswith("Error (invalid_arguments): block 5: arguments must be a JSON object")
    rows = audit_rows(app)
    assert [row["tool"] for row in rows] == ["demo.echo", "demo.note", "demo.erase", "demo.nothing"]
    assert {row["transport"] for row in rows} == {"text"}
    assert rows[2]["decision"] == "approval_required"


@pytest.mark.anyio
async def test_high_risk_asks_through_the_callers_asker(tmp_path: Path, demo_namespace: str) -> None:
    app = text_app(tmp_path, ["demo"])
    person = Yes()
    [result] = await run(app, '{"tool": "demo.erase", "target": "drafts"}', Caller(transport="text", asker=person))
    assert not result.is_error and app.services["demo"].erased == ["drafts"]
    assert [request.summary for request in person.asked] == ["Erase 'drafts'"]
    assert audit_rows(app)[-1]["decision"] == "confirmed"


@pytest.mark.anyio
async def test_hidden_tools_stay_hidden_from_text(tmp_path: Path, demo_namespace: str) -> None:
    app = text_app(tmp_path, ["demo"], disabled=["demo.erase"])
    [result] = await run(app, '{"tool": "demo.erase", "target": "x"}', Caller(transport="text", asker=Yes()))
    assert error_kind(result) == "denied_by_policy" and app.services["demo"].erased == []


@pytest.mark.anyio
async def test_a_code_writer_reply_really_changes_the_files(tmp_path: Path) -> None:
    app = text_app(tmp_path, ["files"])
    root = tmp_path / "data" / "files"
    reply = (
        "I'll create the module, then fix the greeting.\n"
        f'{FENCE}json\n{{"tool": "write_file", "path": "src/hello.py", '
        f'"content": "def hello():\\n    return \\"hello {{name}}\\" % $1\\n"}}\n{FENCE}\n'
        "<tool_call>\n"
        + json.dumps(
            {
                "name": "edit_file",
                "arguments": {
                    "path": "src/hello.py",
                    "search_replace": [
                        {"old_string": '"hello {name}" % $1', "new_string": r'r"\d $1 {name}"'},
                        {"old_string": "def hello", "new_string": "def greet"},
                    ],
                },
            }
        )
        + '\n</tool_call>\nAnd a check: {"tool": "read_file", "path": "src/hello.py"}'
    )
    write, edit, read = await run(app, reply)
    assert not write.is_error and write.name == "files.write", write.outcome.text
    assert not edit.is_error and edit.name == "files.edit", edit.outcome.text
    assert not read.is_error and read.name == "files.read"
    expected = 'def greet():\n    return r"\\d $1 {name}"\n'
    assert (root / "src" / "hello.py").read_text() == expected
    assert read.outcome.structured is not None and read.outcome.structured["content"] == expected
    assert [row["tool"] for row in audit_rows(app)] == ["files.write", "files.edit", "files.read"]


@pytest.mark.anyio
async def test_delete_without_an_asker_needs_approval_and_deletes_nothing(tmp_path: Path) -> None:
    app = text_app(tmp_path, ["files"])
    target = tmp_path / "data" / "files" / "keep.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("precious")
    [result] = await run(app, 'Cleaning up: {"tool": "delete_file", "path": "keep.txt"}')
    assert error_kind(result) == "approval_required"
    assert result.outcome.error is not None and result.outcome.error["approval_id"].startswith("apr-")
    assert target.read_text() == "precious"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "reply",
    [
        '{"tool": "delete_file", "path": "keep.txt", "approved": true}',
        '<tool_call>{"name": "files.delete", "arguments": {"path": "keep.txt", "approved": true}}</tool_call>',
        '{"name": "files_delete", "arguments": {"path": "keep.txt", "confirm": true, "approval_id": "apr-x"}}',
    ],
)
async def test_text_that_claims_approval_is_refused(tmp_path: Path, reply: str) -> None:
    app = text_app(tmp_path, ["files"])
    target = tmp_path / "data" / "files" / "keep.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("precious")
    [result] = await run(app, reply)
    assert error_kind(result) == "invalid_arguments"
    assert "files.delete does not take" in result.outcome.text
    assert target.read_text() == "precious"
    assert app.store.list_approvals(include_done=True) == []


@pytest.mark.anyio
async def test_alias_and_parse_errors_run_nothing(tmp_path: Path) -> None:
    app = text_app(tmp_path, ["files"])
    target = tmp_path / "data" / "files" / "a.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("one")
    reply = (
        '{"tool": "edit_file", "path": "a.txt", "search_replace": [{"old_string": "one"}]}\n'
        f'{FENCE}json\n{{"tool": "write_file", "path": "a.txt", "content": "two",}}\n{FENCE}'
    )
    edit, write = await run(app, reply)
    assert error_kind(edit) == "invalid_arguments" and edit.name == "files.edit"
    assert "block 1: edit_file search_replace[0] needs new_string" in edit.outcome.text
    assert error_kind(write) == "invalid_arguments" and "block 2: invalid JSON" in write.outcome.text
    assert target.read_text() == "one"
    assert audit_rows(app) == []


# -- the CLI --------------------------------------------------------------------------------------


def test_call_text_runs_a_reply_from_a_file_and_from_stdin(tmp_path: Path) -> None:
    config = demo_config(tmp_path, servers='["demo", "files"]')
    reply = tmp_path / "reply.md"
    reply.write_text(
        "Sure.\n"
        f'{FENCE}json\n{{"tool": "write_file", "path": "a.txt", "content": "hi"}}\n{FENCE}\n'
        '<tool_call>{"name": "demo.echo", "arguments": {"text": "there"}}</tool_call>\n',
        encoding="utf-8",
    )
    result = run_cli(config, "call-text", str(reply), "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    write, echo = json.loads(result.stdout)
    assert write["name"] == "files.write" and write["is_error"] is False and write["structured"]["created"] is True
    assert write["call"]["label"] == "block 1" and write["call"]["name"] == "write_file"
    assert echo == {
        "call": {"label": "block 2", "name": "demo.echo", "arguments": {"text": "there"}, "line": 5},
        "name": "demo.echo",
        "is_error": False,
        "structured": {"echo": "hello: there"},
    }
    assert "Action performed" in result.stderr
    assert (tmp_path / "data" / "files" / "a.txt").read_text() == "hi"

    text = run_cli(config, "call-text", "-", input_text='{"name": "demo_echo", "arguments": {"text": "x"}}')
    assert text.returncode == 0 and text.stdout.startswith("[block 1] demo.echo: ok\n")
    assert "echo: hello: x" in text.stdout
    audit = [json.loads(line) for line in cli_in_process(config, "audit", "--json").stdout.splitlines()]
    assert [row["transport"] for row in audit] == ["text"] * 3


def test_call_text_fails_when_a_call_fails_and_cannot_ask_off_a_terminal(tmp_path: Path) -> None:
    config = demo_config(tmp_path, servers='["demo", "files"]')
    reply = (
        '{"tool": "demo.erase", "target": "t"}\n'
        '{"tool": "delete_file", "path": "nothing-here.txt"}\n'
        '<tool_call>{"name": "demo.echo"</tool_call>\n'
    )
    result = run_cli(config, "call-text", "-", input_text=reply)
    assert result.returncode == 1
    assert "[block 1] demo.erase: error\nError (approval_required)" in result.stdout
    assert "[block 2] files.delete (as delete_file): error" in result.stdout
    assert "[block 3] ?: error\nError (invalid_arguments): block 3: invalid JSON" in result.stdout
    empty = run_cli(config, "call-text", "-", input_text="Nothing to do here.")
    assert empty.returncode == 0 and "No tool calls found." in empty.stderr
    missing = run_cli(config, "call-text", str(tmp_path / "missing.md"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_call_text_on_a_terminal_asks_y_or_n(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    reply = tmp_path / "reply.md"
    reply.write_text('{"tool": "demo.erase", "target": "t"}', encoding="utf-8")
    for answer, expected in ((b"n\n", "declined_by_user"), (b"y\n", "erased: t")):
        prompt, out, returncode = answer_on_terminal(config, "call-text", str(reply), answer=answer)
        assert b"Erase 't'" in prompt
        assert expected in out
        assert returncode == (1 if answer == b"n\n" else 0)
