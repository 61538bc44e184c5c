"""Every example in README.md, CONTRIBUTING.md, CHANGELOG.md and docs/ runs as written.

Each fenced block is checked by its language: `toml` loads through the real config model (the
core sections, and each namespace's own section model, so a key in the wrong table is caught;
an option shown commented out must exist too); `json` holds one value and `jsonl` one value a
line (JSON Lines), a tool call in either names a real tool with arguments its input model accepts, and an error
result has the one error shape; `bash`, `sh`, `shell` and `console` command lines that run
`mcp-tools` parse in the real CLI parser (they are not run). Outside code blocks, a command
named in inline code must exist with the options it names. New documents are picked up
without changing this file.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import shlex
import textwrap
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Any, cast

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from mcp_tools.cli.call import cmd_call
from mcp_tools.cli.main import build_parser, namespaces_wanted
from mcp_tools.core.config import (
    ConfigError,
    HttpSettings,
    PolicyRule,
    PolicySettings,
    ServerSettings,
    parse_config,
    validate_section,
)
from mcp_tools.core.tooling import ToolSpec
from mcp_tools.servers import CATALOG, SHARED_SECTIONS, load_namespace, shared_section_model
from tests.results import ERROR_RESULT_SCHEMA, schema_errors

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    ROOT / "CHANGELOG.md",
    *sorted((ROOT / "docs").rglob("*.md")),
]
SHELL = {"bash", "sh", "shell", "console"}
CHECKED = {"toml", "json", "jsonl", *SHELL}
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+-]*)[^`]*$")
COMMENTED_OPTION = re.compile(r"^#[ \t]*(?P<key>[A-Za-z_][\w-]*)[ \t]*=[ \t]*(?P<value>.+)$")
PLACEHOLDER = re.compile(r"^(?:<.*>|[A-Z][A-Z_.]*|\.\.\.)$")
REDIRECTION = re.compile(r"^(?:<<?<?|>>?|>&|&>>?|<&)$")
CORE_MODELS: dict[str, type[BaseModel]] = {
    "server": ServerSettings,
    "policy": PolicySettings,
    "http": HttpSettings,
    "policy.rules": PolicyRule,
}


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    lang: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def fenced_blocks(path: Path) -> Iterator[Block]:
    """Fenced code blocks of a Markdown file, dedented (a block inside a list item is indented)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        index += 1
        if not opening:
            continue
        fence = opening["fence"]
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        start = index
        while index < len(lines) and not closing.match(lines[index]):
            index += 1
        body = textwrap.dedent("\n".join(lines[start:index]))
        index += 1
        yield Block(path, start, opening["lang"].lower(), body)


def all_blocks() -> list[Block]:
    return [block for path in DOCUMENTS for block in fenced_blocks(path) if block.lang in CHECKED]


BLOCKS = all_blocks()


def blocks_of(*langs: str) -> list[Any]:
    return [pytest.param(block, id=block.where) for block in BLOCKS if block.lang in langs]


# --- TOML ------------------------------------------------------------------------------------


def section_model(table: str) -> type[BaseModel] | None:
    if table in CORE_MODELS:
        return CORE_MODELS[table]
    model: type[BaseModel] | None = None
    if table in CATALOG:
        model = load_namespace(table).config_model
    elif table in SHARED_SECTIONS:
        model = shared_section_model(table)
    return model


def check_config(raw: dict[str, Any]) -> None:
    """Load a (possibly partial) config the way `mcp-tools` does, namespace sections included."""
    config = parse_config(raw, environ={})
    for name, section in config.sections.items():
        model = load_namespace(name).config_model if name in CATALOG else shared_section_model(name)
        validate_section(name, model, section)


def check_commented_options(block: Block) -> None:
    """`# key = value` under a table documents an option: the key must exist and take that value."""
    table: str | None = None
    for line in block.text.splitlines():
        line = line.strip()
        header = re.match(r"^\[\[?([\w.-]+)\]\]?", line)
        if header:
            table = header[1]
            continue
        option = COMMENTED_OPTION.match(line)
        model = section_model(table) if table else None
        if not option or model is None:
            continue
        try:
            value = tomllib.loads(f"{option['key']} = {option['value']}")[option["key"]]
        except tomllib.TOMLDecodeError:
            continue  # prose that merely looks like an assignment
        field = model.model_fields.get(option["key"])
        assert field is not None, f"{block.where}: [{table}] has no option {option['key']!r}"
        try:
            TypeAdapter(cast(Any, Annotated[field.annotation, field])).validate_python(value)
        except ValidationError as exc:
            raise AssertionError(f"{block.where}: [{table}] {option['key']} = {value!r}: {exc}") from None


@pytest.mark.parametrize("block", blocks_of("toml"))
def test_toml_examples_load_through_the_config_model(block: Block) -> None:
    try:
        raw = tomllib.loads(block.text)
    except tomllib.TOMLDecodeError as exc:
        raise AssertionError(f"{block.where}: not valid TOML: {exc}") from None
    try:
        check_config(raw)
    except ConfigError as exc:
        raise AssertionError(f"{block.where}: {exc}") from None
    check_commented_options(block)


# --- JSON ------------------------------------------------------------------------------------


def json_values(text: str) -> list[Any]:
    """One JSON value, or several one after another (JSON Lines, or separated by blank lines)."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            return values
        value, position = decoder.raw_decode(text, position)
        values.append(value)


@cache
def tools_by_name() -> dict[str, ToolSpec[Any, Any, Any]]:
    tools: dict[str, ToolSpec[Any, Any, Any]] = {}
    for name in CATALOG:
        for spec in load_namespace(name).tools:
            tools[spec.name] = tools[spec.name.replace(".", "_")] = spec
    return tools


def check_tool_call(where: str, value: Any) -> None:
    """`{"name"|"tool": X, "arguments": {...}}` naming one of our tools must be a call it accepts."""
    if not isinstance(value, dict) or not isinstance(value.get("arguments"), dict):
        return
    name = value.get("name", value.get("tool"))
    spec = tools_by_name().get(name) if isinstance(name, str) else None
    if spec is None:
        return
    try:
        spec.input_model.model_validate(value["arguments"])
    except ValidationError as exc:
        raise AssertionError(f"{where}: {name} does not accept {value['arguments']}: {exc}") from None


def check_error_example(where: str, value: Any) -> None:
    """`{"error": {...}}` shows an error result: it must have the one error shape."""
    if isinstance(value, dict) and set(value) == {"error"}:
        problems = schema_errors(ERROR_RESULT_SCHEMA, value)
        assert not problems, f"{where}: not the error shape: {problems}"


@pytest.mark.parametrize("block", blocks_of("json", "jsonl"))
def test_json_examples_parse(block: Block) -> None:
    """A `json` block holds one value, as a reader pasting it whole expects; several values, one
    a line, are a `jsonl` block."""
    try:
        if block.lang == "jsonl":
            values = [json.loads(line) for line in block.text.splitlines() if line.strip()]
        else:
            values = json_values(block.text)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"{block.where}: not valid JSON: {exc}") from None
    assert values, f"{block.where}: empty JSON block"
    assert block.lang == "jsonl" or len(values) == 1, f"{block.where}: {len(values)} values in a json block (jsonl?)"
    for value in values:
        check_tool_call(block.where, value)
        check_error_example(block.where, value)


# --- shell -----------------------------------------------------------------------------------


def command_lines(block: Block) -> list[str]:
    """The commands of a block: every line of a script; only `$ ` lines of a console transcript."""
    joined = re.sub(r"\\\n", " ", block.text)
    lines = joined.splitlines()
    if block.lang == "console":
        return [line[2:] for line in lines if line.startswith("$ ")]
    return [line for line in lines if line.strip()]


def simple_commands(line: str) -> list[list[str]]:
    """Split a shell line at `&&`, `||`, `;`, `|` and `&` into word lists, comments and
    redirections (`> out.json`, `2>/dev/null`, `< reply.md`) dropped."""
    line = re.sub(r"(^|\s)\d+(?=[<>])", r"\1", line)  # `2>/dev/null`: the descriptor is no argument
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens = list(lexer)
    commands: list[list[str]] = [[]]
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if token in {"&&", "||", ";", "|", "&", ";;"}:
            commands.append([])
        elif REDIRECTION.match(token):
            if index < len(tokens) and not REDIRECTION.match(tokens[index]):
                index += 1  # the redirection's target
        else:
            commands[-1].append(token)
    return [command for command in commands if command]


def mcp_tools_arguments(words: list[str]) -> list[str] | None:
    """The arguments after `mcp-tools` / `.venv/bin/mcp-tools` / `python -m mcp_tools`, if any."""
    for index, word in enumerate(words):
        if word == "mcp-tools" or word.endswith(("/mcp-tools", "\\mcp-tools")):
            return words[index + 1 :]
        if word == "-m" and words[index + 1 : index + 2] == ["mcp_tools"]:
            return words[index + 2 :]
    return None


def check_cli_arguments(where: str, argv: list[str]) -> None:
    parser = build_parser(namespaces_wanted(argv))
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
            args = parser.parse_args(argv)
    except SystemExit as exit:
        assert exit.code == 0, f"{where}: `mcp-tools {shlex.join(argv)}` does not parse: {errors.getvalue().strip()}"
        return  # --help, --version
    assert getattr(args, "handler", None), f"{where}: `mcp-tools {shlex.join(argv)}` is not a complete command"
    if args.handler is cmd_call:
        check_call_arguments(where, args.name, args.args)


def check_call_arguments(where: str, name: str, arguments: str) -> None:
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"{where}: --args of {name} is not JSON: {exc}") from None
    spec = tools_by_name().get(name)
    assert spec is not None, f"{where}: no tool named {name}"
    check_tool_call(where, {"name": name, "arguments": parsed})


@pytest.mark.parametrize("block", blocks_of(*SHELL))
def test_shell_examples_are_real_commands(block: Block) -> None:
    for line in command_lines(block):
        for words in simple_commands(line):
            argv = mcp_tools_arguments(words)
            if argv is not None:
                check_cli_arguments(block.where, argv)


def inline_commands(path: Path) -> Iterator[str]:
    """`mcp-tools ...` in inline code outside fenced blocks: prose mentions and synopses."""
    text = re.sub(r"^([ \t]*)(`{3,}|~{3,}).*?^\1\2", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    for span in re.finditer(r"(?<!`)`([^`\n]+)`(?!`)", text):
        if re.match(r"^(?:\S*/)?mcp-tools\s", span[1]):
            yield span[1]


def check_synopsis(where: str, synopsis: str) -> None:
    """A synopsis such as `mcp-tools audit [--tail N] [--json]` may hold placeholders and
    brackets, so it is not parsed whole: its command words must lead to a real (sub)command,
    and every `--option` it names must belong to that command."""
    words = re.sub(r"[\[\]|\\]", " ", synopsis).split()[1:]
    parser = build_parser(namespaces_wanted(words))
    options = dict(parser._option_string_actions)
    found_command = False
    index = 0
    while index < len(words):
        word = words[index].split("=")[0]
        index += 1
        if word.startswith("-") and word != "-":  # a lone - is stdin, an argument
            action = options.get(word)
            assert action is not None, f"{where}: `{synopsis}` names {word}, which that command does not take"
            if action.nargs != 0 and "=" not in words[index - 1]:
                index += 1  # the option's value
            continue
        subcommands = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})
        if word in subcommands:
            parser, found_command = subcommands[word], True
            options.update(parser._option_string_actions)
        elif not found_command and not PLACEHOLDER.match(word):
            raise AssertionError(f"{where}: `{synopsis}`: {word!r} is no mcp-tools command")


@pytest.mark.parametrize(
    ("path", "synopsis"),
    [
        pytest.param(path, synopsis, id=f"{path.name}:{synopsis}")
        for path in DOCUMENTS
        for synopsis in inline_commands(path)
    ],
)
def test_commands_named_in_prose_exist(path: Path, synopsis: str) -> None:
    check_synopsis(str(path.relative_to(ROOT)), synopsis)


# --- the checks themselves -------------------------------------------------------------------


def test_every_document_is_read_and_examples_are_found() -> None:
    assert {path.name for path in DOCUMENTS} >= {"README.md", "policy.md", "files.md"}
    languages = {block.lang for block in BLOCKS}
    assert {"toml", "json", "bash", "console"} <= languages
    assert sum(1 for block in BLOCKS for line in command_lines(block) if "mcp-tools" in line) >= 5


def check_toml(text: str) -> None:
    block = Block(ROOT / "README.md", 1, "toml", text)
    test_toml_examples_load_through_the_config_model(block)


@pytest.mark.parametrize(
    ("toml", "complaint"),
    [
        ('[policy]\n[[policy.rules]]\nmatch = "web.search"\nrisk = "high"\nread_only = true\n', "unknown setting"),
        ('[files]\nmax_read_bytes = "big"\n', "max_read_bytes"),
        ("[files]\nroot = \n", "not valid TOML"),
        ("[nosuch]\nx = 1\n", "unknown section"),
        ('[web]\n# api_kee = "tvly-..."\n', "no option 'api_kee'"),
        ("[policy]\n# read_only = maybe\n", None),  # not TOML: prose, not an option
        ('[policy]\n# on_no_elicitation = "ask"\n', "on_no_elicitation"),
    ],
)
def test_the_toml_check_catches_broken_examples(toml: str, complaint: str | None) -> None:
    if complaint is None:
        check_toml(toml)
        return
    with pytest.raises(Exception, match=complaint):
        check_toml(toml)


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        (".venv/bin/mcp-tools serve --htttp", "does not parse"),
        ("mcp-tools approvals approve", "does not parse"),
        ("python -m mcp_tools nosuch", "does not parse"),
        ("export X=1 && mcp-tools notes", "not a complete command"),
        ("some-model | mcp-tools call files.read --args '{\"path\": 1}'", "does not accept"),
        ("mcp-tools call files.nosuch", "no tool named"),
        ("mcp-tools --config my.toml serve --http  # comment --nonsense", None),
        ("npx @modelcontextprotocol/inspector .venv/bin/mcp-tools serve", None),
        ("mcp-tools audit --json --tail 2 > audit.jsonl 2>/dev/null", None),
        ("mcp-tools call-text --json < reply.md 2>&1 | jq .", None),
        ("mcp-tools approvals approve <id>", "does not parse"),
    ],
)
def test_the_shell_check_catches_broken_commands(line: str, complaint: str | None) -> None:
    block = Block(ROOT / "README.md", 1, "bash", line)
    if complaint is None:
        test_shell_examples_are_real_commands(block)
        return
    with pytest.raises(AssertionError, match=complaint):
        test_shell_examples_are_real_commands(block)


@pytest.mark.parametrize(
    ("synopsis", "complaint"),
    [
        ("mcp-tools audit [--tail N] [--json]", None),
        ("mcp-tools approvals list [--all] | show ID | approve ID | deny ID", None),
        ("mcp-tools inbox smtp [--listen 127.0.0.1:2525]", None),
        ("mcp-tools --config my.toml serve", None),
        ("mcp-tools audit [--tail N] [--jsonl]", "--jsonl"),
        ("mcp-tools serve --htttp", "--htttp"),
        ("mcp-tools approve ID", "no mcp-tools command"),
    ],
)
def test_the_synopsis_check_catches_unknown_commands_and_options(synopsis: str, complaint: str | None) -> None:
    if complaint is None:
        check_synopsis("README.md", synopsis)
        return
    with pytest.raises(AssertionError, match=complaint):
        check_synopsis("README.md", synopsis)


def test_the_json_check_reads_several_values_and_checks_tool_calls() -> None:
    assert json_values('{"a": 1}\n{"b": 2}\n\n[3]') == [{"a": 1}, {"b": 2}, [3]]
    with pytest.raises(json.JSONDecodeError):
        json_values('{"a": 1} → {"b": ...}')
    with pytest.raises(AssertionError, match="does not accept"):
        check_tool_call("x", {"name": "inbox_read", "arguments": {"id": "x", "offset": "far"}})
    with pytest.raises(AssertionError, match="not the error shape"):
        check_error_example("x", {"error": {"kind": "approval_required", "message": "m"}})


def test_the_config_that_config_init_writes_documents_real_options() -> None:
    """`mcp-tools config init` writes sections and options commented out: each must exist, with
    the value shown valid, as in the docs."""
    from mcp_tools.composition.config_template import config_template
    from mcp_tools.core.config import NAMESPACE_TABLES

    template = config_template()
    check_config(tomllib.loads(template))
    # every commented table and option turned on at once still loads: no option lands in the wrong table
    opened = re.sub(r"(?m)^# (\[\[?[\w.\"]+\]\]?([ \t]+#.*)?|\w+ = \S.*)$", r"\1", template)
    assert opened.count("\n[") > template.count("\n[") + 8
    test_toml_examples_load_through_the_config_model(
        Block(ROOT / "mcp_tools" / "composition" / "config_template.py", 1, "toml", opened)
    )
    assert all(f"\n[{NAMESPACE_TABLES.get(name, name)}]\n" in opened for name in CATALOG)


def test_a_json_block_holds_one_value_and_jsonl_one_a_line() -> None:
    two = '{"name": "inbox_read", "arguments": {"id": "a"}}\n\n{"name": "inbox_read", "arguments": {"id": "b"}}'
    with pytest.raises(AssertionError, match="2 values in a json block"):
        test_json_examples_parse(Block(ROOT / "README.md", 1, "json", two))
    test_json_examples_parse(Block(ROOT / "README.md", 1, "jsonl", two))
    with pytest.raises(AssertionError, match="not valid JSON"):
        test_json_examples_parse(Block(ROOT / "README.md", 1, "jsonl", '{"name": "inbox_read",\n "arguments": {}}'))
