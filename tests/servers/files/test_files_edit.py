"""The hard cases of exact edits: uniqueness, literal replacement, line endings, final newlines."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.files.edit import EditRequest, apply_edits, unified_diff
from tests.harness import connect, failure, ok
from tests.servers.files import fixtures as files_fixtures
from tests.servers.files.fixtures import FilesBackend

local = files_fixtures.local


def edit(text: str, *edits: tuple[str, str] | tuple[str, str, bool]) -> str:
    return apply_edits(text, [EditRequest(*item) for item in edits])[0]


def test_several_matches_are_refused_with_their_lines() -> None:
    text = "a = 1\nb = 2\na = 1\nc = 3\na = 1\n"
    with pytest.raises(ToolFailure) as caught:
        edit(text, ("a = 1", "a = 9"))
    assert caught.value.kind == "invalid_arguments"
    assert "edits[0].old_string matches 3 times (lines 1, 3, 5)" in caught.value.message
    assert "replace_all" in (caught.value.hint or "")


def test_replace_all_replaces_every_match() -> None:
    assert apply_edits("x x x", [EditRequest("x", "yy", True)]) == ("yy yy yy", 3)


def test_zero_matches_name_the_edit_and_help() -> None:
    with pytest.raises(ToolFailure) as caught:
        edit("    indented = True\n", ("first = 1", "x"), ("nope", "y"))
    assert caught.value.kind == "not_found" and caught.value.message.startswith("edits[0].old_string")
    with pytest.raises(ToolFailure) as caught:
        edit("    indented = True\n", ("indented", "kept"), ("  indented = True  ", "y"))
    assert "edits[1].old_string was not found" in caught.value.message


def test_whitespace_hint_points_at_the_line() -> None:
    with pytest.raises(ToolFailure) as caught:
        edit("one\n  two\n", ("two  \n", "2"))
    assert "line 2" in (caught.value.hint or "")


def test_replacement_is_literal() -> None:
    text = "name = value\n"
    assert edit(text, ("value", r"$1 \1 \n \\ ${x} $&")) == "name = $1 \\1 \\n \\\\ ${x} $&\n"
    assert edit("path = C:\\old\n", ("C:\\old", "C:\\new\\$0")) == "path = C:\\new\\$0\n"


def test_empty_new_string_deletes() -> None:
    assert edit("keep\ndrop me\nkeep too\n", ("drop me\n", "")) == "keep\nkeep too\n"


def test_empty_old_string_and_no_op_are_refused() -> None:
    with pytest.raises(ToolFailure, match=r"edits\[0\]\.old_string must not be empty"):
        edit("text", ("", "x"))
    with pytest.raises(ToolFailure, match=r"edits\[1\]: old_string and new_string are identical"):
        edit("text", ("e", "E"), ("x", "x"))


def test_crlf_is_preserved_when_the_model_writes_lf() -> None:
    text = "first\r\nsecond\r\nthird\r\n"
    result = edit(text, ("first\nsecond", "one\ntwo\nthree"))
    assert result == "one\r\ntwo\r\nthree\r\nthird\r\n"
    assert "\n" not in result.replace("\r\n", "")


def test_crlf_written_exactly_also_matches() -> None:
    assert edit("a\r\nb\r\n", ("a\r\nb", "c\r\nd")) == "c\r\nd\r\n"


def test_lf_file_is_not_turned_into_crlf() -> None:
    assert edit("a\nb\n", ("a\nb", "x\ny")) == "x\ny\n"


def test_missing_final_newline_is_preserved() -> None:
    assert edit("last line", ("last", "final")) == "final line"
    assert edit("a\r\nlast", ("last", "end")) == "a\r\nend"


def test_edits_apply_in_order_to_the_result() -> None:
    assert edit("alpha", ("alpha", "beta"), ("beta", "gamma")) == "gamma"


def test_overlapping_candidates_count_like_replace() -> None:
    with pytest.raises(ToolFailure, match=r"matches 2 times \(line 1\)"):
        edit("aaaa", ("aa", "b"))


def test_many_matches_are_summarised() -> None:
    with pytest.raises(ToolFailure, match=r"matches 30 times \(lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and further\)"):
        edit("x\n" * 30, ("x", "y"))


def test_unicode_and_bom_survive() -> None:
    text = "\ufeffname: Zoë\nemoji: 🙂\n"
    assert edit(text, ("Zoë", "Zoé")) == "\ufeffname: Zoé\nemoji: 🙂\n"


def test_diff_is_readable_for_crlf_and_missing_newline() -> None:
    diff = unified_diff("a\r\nb", "a\r\nc", "x.txt")
    assert "\r" not in diff
    assert "-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n" in diff
    assert diff.startswith("--- a/x.txt\n+++ b/x.txt\n")


@pytest.mark.anyio
async def test_crlf_file_keeps_its_bytes_through_the_tool(tmp_path: Path, local: FilesBackend) -> None:
    local.put("win.txt", b"one\r\ntwo\r\nthree")
    async with connect(tmp_path, local.settings) as client:
        result = ok(
            await client.call_tool(
                "files_edit",
                {"path": "win.txt", "edits": [{"old_string": "one\ntwo", "new_string": "1\n$2\n\\3"}]},
            )
        )
    assert local.get("win.txt") == b"1\r\n$2\r\n\\3\r\nthree"
    assert result["replacements"] == 1


@pytest.mark.anyio
async def test_failed_edit_changes_nothing(tmp_path: Path, local: FilesBackend) -> None:
    local.put("a.txt", b"x\ny\nx\n")
    async with connect(tmp_path, local.settings) as client:
        error = failure(
            await client.call_tool(
                "files_edit",
                {
                    "path": "a.txt",
                    "edits": [{"old_string": "y", "new_string": "Y"}, {"old_string": "x", "new_string": "X"}],
                },
            )
        )
        binary = b"\xff\xfe\x00bin"
        local.put("b.bin", binary)
        not_text = failure(
            await client.call_tool("files_edit", {"path": "b.bin", "edits": [{"old_string": "b", "new_string": "c"}]})
        )
    assert "edits[1].old_string matches 2 times (lines 1, 3)" in error["message"]
    assert local.get("a.txt") == b"x\ny\nx\n"
    assert not_text["kind"] == "invalid_arguments" and "not UTF-8" in not_text["message"]
    assert local.get("b.bin") == binary


def apply_unified_diff(before: str, diff: str) -> str:
    """A minimal patch applier over display lines, to check diffs by their effect."""
    old_lines = before.split("\n")
    lines = diff.split("\n")[2:]
    output: list[str] = []
    position = 0
    index = 0
    while index < len(lines) and lines[index]:
        header = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", lines[index])
        assert header, lines[index]
        start = int(header.group(1)) - (1 if header.group(2) != "0" else 0)
        output += old_lines[position:start]
        position = start
        index += 1
        while index < len(lines) and lines[index] and not lines[index].startswith("@@"):
            marker, body = lines[index][0], lines[index][1:]
            if marker in " -":
                assert old_lines[position].removesuffix("\r") == body
                position += 1
            if marker in " +":
                output.append(body)
            if marker == "\\" and output and lines[index - 1][0] in " +":
                output[-1] += "<no-eol>"
            index += 1
    output += old_lines[position:]
    return "\n".join(output)


def normalised(text: str) -> str:
    return "\n".join(line.removesuffix("\r") for line in text.split("\n"))


def test_diff_of_a_large_file_has_true_line_numbers() -> None:
    before = "".join(f"line {number}\n" for number in range(1, 3001))
    after = before.replace("line 1500\n", "changed\n")
    diff = unified_diff(before, after, "big.txt")
    assert "@@ -1497,7 +1497,7 @@\n line 1497\n line 1498\n line 1499\n-line 1500\n+changed\n" in diff


@pytest.mark.parametrize("seed", range(4))
def test_diffs_reproduce_the_new_text(seed: int) -> None:
    chooser = random.Random(seed)
    for _ in range(300):
        lines = [chooser.choice(["a", "b", "c\r", "dd", ""]) for _ in range(chooser.randint(0, 40))]
        before = "\n".join(lines) + chooser.choice(["", "\n"])
        changed = before.split("\n")
        for _ in range(chooser.randint(1, 4)):
            spot = chooser.randint(0, len(changed))
            action = chooser.random()
            if action < 0.4:
                changed.insert(spot, chooser.choice(["x", "y\r"]))
            elif changed and action < 0.7:
                del changed[min(spot, len(changed) - 1)]
            elif changed:
                changed[min(spot, len(changed) - 1)] = "q"
        after = "\n".join(changed)
        diff = unified_diff(before, after, "f")
        if "No newline" in diff:
            continue  # the applier does not model end-of-file markers
        assert normalised(apply_unified_diff(before, diff)) == normalised(after), (before, after, diff)
