"""The streaming parser: any split of a reply reads exactly as the whole, and prose is never held long."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_tools.textcalls import DELIMITERS, ParsedCall, ParsedReply, ParseProblem, Prose, StreamParser, parse_reply
from mcp_tools.textcalls.calls import Event

FENCE = "```"
SCISSORS = "\u2702\ufe0f\U0001f431"
SCISSORS_REPLY = (
    json.dumps(
        [
            {"id": "a", "type": "gmail_list", "operation": "latest mail", "parameters": {"maxResults": 5}},
            {"id": "b", "type": "files_read", "operation": "read", "parameters": {"path": "ü/✂.md"}, "priority": 2},
        ]
    )
    + f"\n{SCISSORS}\n"
    + 'Here is your mail, ünïcödé 🐱.\n```json\n{"name": "files.delete", "arguments": {"path": "x"}}\n```\n'
)
PROSE_REPLY = (
    "I will write it.\r\n"
    f'{FENCE}json\r\n{{"tool": "write_file", "path": "a.md", "content": "# T\n{FENCE}\n{{\\"x\\": 1}}\n{FENCE}\n"}}\r\n'
    f"{FENCE}\r\n"
    'Then `{"name": "files.delete", "arguments": {"path": "b"}}` stays prose and {"name": "files.read", '
    '"arguments": {"path": "c"}} runs.\n\n'
    f'{FENCE}python\nx = {{"tool": "delete_file", "path": "d"}}\n{FENCE}\n'
    '<tool_call>{"name": "demo.echo", "arguments": {"text": "</tool_call> is text here"}}</tool_call>\n'
    '{"tool": "write_file", "path": "e", "content": "one\ntwo"}\nstill that paragraph {"tool": "files.list"}\n\n'
    '{"tool_calls": [{"id": "c9", "type": "function", "function": {"name": "files_list", "arguments": "{}"}}]}\n'
    "The end, ünïcödé 🐱."
)
REPLIES = [SCISSORS_REPLY, PROSE_REPLY, *(f"[]\n{form}\nok ✂" for form in DELIMITERS)]


def streamed(pieces: list[str] | list[bytes], format: str = "auto") -> tuple[ParsedReply, list[Event]]:
    parser = StreamParser(format)
    events: list[Event] = []
    for piece in pieces:
        events += parser.feed(piece)
    events += parser.flush()
    return parser.reply, events


def split(data: str | bytes, cuts: list[int]) -> list:
    bounds = [0, *sorted(set(cuts)), len(data)]
    return [data[start:end] for start, end in itertools.pairwise(bounds)]


def test_the_whole_replies_read_as_intended() -> None:
    scissors = parse_reply(SCISSORS_REPLY)
    assert scissors.format == "scissors" and [call.name for call in scissors.calls] == ["gmail_list", "files_read"]
    assert scissors.markdown.startswith("Here is your mail") and "files.delete" in scissors.markdown
    prose = parse_reply(PROSE_REPLY)
    assert [(item.name if isinstance(item, ParsedCall) else "problem") for item in prose.items] == [
        "write_file",
        "files.read",
        "demo.echo",
        "problem",
        "files_list",
    ]
    assert prose.calls[0].arguments["content"] == '# T\n```\n{"x": 1}\n```\n'
    assert prose.calls[-1].call_id == "c9"
    assert 'x = {"tool": "delete_file"' in prose.markdown and "files.delete" in prose.markdown
    assert "files.list" not in prose.markdown.split("The end")[0].split("paragraph")[-1]


@pytest.mark.parametrize("delimiter", DELIMITERS)
@pytest.mark.parametrize("as_bytes", [False, True])
def test_every_split_point_inside_and_around_the_delimiter(delimiter: str, as_bytes: bool) -> None:
    text = f'[{{"id": "1", "type": "files_list", "operation": "list", "parameters": {{}}}}]\n{delimiter}\nDone ✂.'
    whole = parse_reply(text)
    data: str | bytes = text.encode() if as_bytes else text
    start = text.index(delimiter)
    first, last = (
        (len(text[:start].encode()), len(text[: start + len(delimiter)].encode()))
        if as_bytes
        else (
            start,
            start + len(delimiter),
        )
    )
    for cut in range(max(1, first - 2), last + 3):
        assert streamed(split(data, [cut]))[0] == whole, cut
    for cut in range(1, len(data)):
        assert streamed(split(data, [cut]))[0] == whole, cut


@pytest.mark.parametrize("text", REPLIES)
def test_every_single_split_point_of_each_reply(text: str) -> None:
    whole = parse_reply(text)
    for cut in range(1, len(text)):
        result, events = streamed(split(text, [cut]))
        assert result == whole, cut
        assert "".join(event.text for event in events if isinstance(event, Prose)) == whole.markdown


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), index=st.sampled_from(range(len(REPLIES))), as_bytes=st.booleans())
def test_random_splits_read_as_the_whole(data: st.DataObject, index: int, as_bytes: bool) -> None:
    text = REPLIES[index]
    payload: str | bytes = text.encode() if as_bytes else text
    cuts = data.draw(st.lists(st.integers(min_value=1, max_value=len(payload) - 1), max_size=40))
    result, events = streamed(split(payload, cuts))
    whole = parse_reply(text)
    assert result == whole
    assert [event for event in events if not isinstance(event, Prose)] == whole.items


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(
        st.sampled_from(
            ["{", "}", '"', "\\", "\n", "\n\n", "`", "```", "```json\n", "<tool_call>", "</tool_call>", " ", "a",
             '"name": ', '"files.read"', '"tool": "write_file"', ", ", ":", "[", "]", SCISSORS, "\r\n", "ü", "~~~"]
        ),
        max_size=40,
    ),
    data=st.data(),
)  # fmt: skip
def test_random_replies_split_randomly_read_as_the_whole(pieces: list[str], data: st.DataObject) -> None:
    text = "".join(pieces)
    whole = parse_reply(text)
    cuts = data.draw(st.lists(st.integers(min_value=1, max_value=max(1, len(text) - 1)), max_size=20)) if text else []
    result, events = streamed(split(text, [cut for cut in cuts if cut < len(text)]))
    assert result == whole
    assert "".join(event.text for event in events if isinstance(event, Prose)) == whole.markdown


def test_prose_streams_at_once_and_a_call_comes_as_soon_as_it_closes() -> None:
    parser = StreamParser()
    assert parser.feed("Hello there, I will read ") == [Prose("Hello there, I will read ")]
    assert parser.feed("the file.\nNow: ") == [Prose("the file.\nNow: ")]
    assert parser.feed('{"name": "files.read", "arguments": {"path"') == []
    [call] = parser.feed(': "a.md"}}')
    assert isinstance(call, ParsedCall) and call.arguments == {"path": "a.md"}
    assert parser.feed(" and more") == [Prose(" and more")]
    assert parser.flush() == []


def test_only_a_possible_fence_or_delimiter_start_is_held_back() -> None:
    parser = StreamParser()
    assert parser.feed("Para one.\n\nPara two is long and has no calls at all.\n") == [
        Prose("Para one.\n\nPara two is long and has no calls at all.\n")
    ]
    assert parser.feed("``") == []  # could still open a fence
    assert parser.feed("` and then inline code`") == [Prose("``` and then inline code")]  # ` may grow to ``
    assert parser.feed(" done") == [Prose("` done")]
    scissors = StreamParser()
    scissors.feed('[{"id": "1", "type": "files_list", "operation": "l", "parameters": {}}]\n')
    assert scissors.feed(SCISSORS[:1]) == []  # could still be the delimiter
    events = scissors.feed(SCISSORS[1:] + "\nMarkdown streams ")
    assert isinstance(events[0], ParsedCall) and events[1:] == [Prose("Markdown streams ")]
    assert scissors.feed("word by word") == [Prose("word by word")]


def test_prose_fences_stream_line_by_line() -> None:
    parser = StreamParser()
    assert parser.feed("```python\nprint(1)\n") == [Prose("```python\nprint(1)\n")]
    assert parser.feed("print(2)\n```\nafter") == [Prose("print(2)\n```\nafter")]


def test_a_utf8_sequence_split_between_byte_chunks() -> None:
    data = 'Grüße 🐱 {"tool": "files.list"}'.encode()
    pieces = [data[index : index + 1] for index in range(len(data))]
    result, events = streamed(pieces)
    assert result == parse_reply(data) and "".join(e.text for e in events if isinstance(e, Prose)) == "Grüße 🐱 "


def test_a_problem_is_an_event_too_and_flush_ends_an_unclosed_call() -> None:
    parser = StreamParser()
    assert parser.feed('<tool_call>{"name": "files.read"') == []
    [problem] = parser.flush()
    assert isinstance(problem, ParseProblem) and "never closed" in problem.message


def test_a_flushed_parser_takes_no_more() -> None:
    parser = StreamParser()
    parser.flush()
    with pytest.raises(RuntimeError):
        parser.feed("more")
    with pytest.raises(ValueError):
        StreamParser("xml")


@pytest.mark.parametrize("chunk", [64, 4096, 70_000])
def test_long_fences_and_tags_stream_in_pieces_and_read_as_the_whole(chunk: int) -> None:
    content = "".join(f'line {index} with "quotes" and ``` fences\n' for index in range(6000))  # about 250 KB
    escaped = json.dumps(content).replace("\\n", "\n")
    text = (
        f'Writing.\n{FENCE}json\n{{"tool": "write_file", "path": "big.txt", "content": {escaped}}}\n{FENCE}\n'
        f'<tool_call>{{"name": "files.write", "arguments": {{"path": "b", "content": {escaped}}}}}</tool_call>\nEnd.'
    )
    whole = parse_reply(text)
    assert [call.arguments["content"] for call in whole.calls] == [content, content]
    data = text.encode()
    result, events = streamed([data[start : start + chunk] for start in range(0, len(data), chunk)])
    assert result == whole
    assert "".join(event.text for event in events if isinstance(event, Prose)) == "Writing.\n\nEnd."


def test_past_the_call_limit_the_rest_streams_as_prose_and_the_cut_is_reported_once() -> None:
    text = "".join(f'{{"tool": "files.read", "path": "f{index}"}}\n' for index in range(60)) + "tail"
    whole = parse_reply(text)
    assert len(whole.calls) == 50 and whole.problems[-1].message.endswith("from line 51, was not run")
    for chunk in (7, 64):
        result, events = streamed([text[start : start + chunk] for start in range(0, len(text), chunk)])
        assert result == whole and result.markdown.endswith("tail")
        assert sum(isinstance(event, ParseProblem) for event in events) == 1


@pytest.mark.parametrize(
    "text",
    [
        '✂ü\t"}``\n~~~\n</tool_call>\n\n:```tool_call\n🐱```tool_call\n<function_call>  \n\n',  # a fence marker split
        '\\{\n\n"tool": "write_file"{"a": 1}',  # a name key not yet arrived when the object fails
        "~~~json\n, x\n\r~~~\n```tool\n[x](y)a",  # a closing line that starts with a stray CR
    ],
)
def test_splits_found_by_fuzzing(text: str) -> None:
    whole = parse_reply(text)
    for cut in range(1, len(text)):
        assert streamed(split(text, [cut]))[0] == whole, cut


@pytest.mark.parametrize("opening", ['```json\n{"tool": "write_file", "path": "a", "content": "', "<tool_call>"])
@pytest.mark.parametrize("chunk", [None, 64, 70_000])
def test_a_long_block_left_open_at_the_end_is_reported(opening: str, chunk: int | None) -> None:
    text = opening + "x\n" * 50_000
    pieces = [text] if chunk is None else [text[start : start + chunk] for start in range(0, len(text), chunk)]
    result, _ = streamed(pieces)
    [problem] = result.items
    assert isinstance(problem, ParseProblem) and (
        "invalid JSON" in problem.message or "never closed" in problem.message
    )
    assert result == parse_reply(text)


LINES_REPLY = (
    'Plain words on a line with `code` and “curly” and "straight" quotes.\n'
    "A span opened here `` stays open\nacross a line with ` inside ``, then closed.\n\n"
    '> a quoted line {"name": "files.read", "arguments": {"path": "quoted"}}\n'
    "still the quote\n\n"
    '    indented {"name": "files.read", "arguments": {"path": "indented"}}\n\n'
    "~~~python\nx = 1\n~~~\n"
    + "".join(f"Line {index} of words, ünï, `tick` and more words.\n" for index in range(40))
    + '\nNow {"name": "files.read", "arguments": {"path": "after-lines"}} runs.\n'
    'A line ending in a tick `\nand "an odd quote\n{"name": "files.read", "arguments": {"path": "in-quote"}}\n\n'
    f'{FENCE}json\n{{"tool": "write_file", "path": "w", "content": "a \\"b\\" \\\\ c\n'
    + 'long line of the file \\\\ with \\"escapes\\"\n' * 40
    + f'end"}}\n{FENCE}\nThe end.'
)


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 200])
@pytest.mark.parametrize("as_bytes", [False, True])
def test_lines_words_and_long_strings_in_small_pieces_read_as_the_whole(chunk: int, as_bytes: bool) -> None:
    whole = parse_reply(LINES_REPLY)
    assert [call.arguments.get("path") for call in whole.calls] == ["indented", "after-lines", "w"]
    assert whole.calls[1].line == LINES_REPLY[: LINES_REPLY.index("after-lines")].count("\n") + 1
    data: str | bytes = LINES_REPLY.encode() if as_bytes else LINES_REPLY
    result, events = streamed([data[start : start + chunk] for start in range(0, len(data), chunk)])
    assert result == whole
    assert [event for event in events if not isinstance(event, Prose)] == whole.items
    assert "".join(event.text for event in events if isinstance(event, Prose)) == whole.markdown


def test_words_and_lines_stream_at_once_and_a_line_start_that_may_open_a_fence_waits() -> None:
    parser = StreamParser()
    assert parser.feed("Words\nand lines\n\nwith `code`\n") == [Prose("Words\nand lines\n\nwith `code`\n")]
    assert parser.feed("plain again ") == [Prose("plain again ")]
    assert parser.feed("\n``") == [Prose("\n")]  # a line opening with backticks may be a fence
    assert parser.feed("`json\n") == []
    [call] = parser.feed('{"name": "files.read", "arguments": {"path": "a"}}\n```\n')
    assert isinstance(call, ParsedCall) and call.line == 6  # the fence's line, counted across the passed lines


def test_a_long_scissors_section_in_small_pieces_reads_as_the_whole() -> None:
    calls = [
        {"id": str(index), "type": "files_write", "operation": "w", "parameters": {"path": "a", "content": "x" * 5000}}
        for index in range(10)
    ]
    text = json.dumps(calls) + f"\n{SCISSORS}\nDone."
    whole = parse_reply(text)
    assert whole.format == "scissors" and len(whole.calls) == 10
    data = text.encode()
    parser = StreamParser()
    pieces = [data[start : start + 64] for start in range(0, len(data), 64)]
    cut = data.index(SCISSORS.encode())
    before = [event for piece in pieces[: cut // 64] for event in parser.feed(piece)]
    assert before == []  # the section may still turn out to be markdown until the delimiter comes
    rest = [event for piece in pieces[cut // 64 :] for event in parser.feed(piece)] + parser.flush()
    assert rest[:10] == whole.calls and parser.reply == whole


def test_a_backtick_run_that_ends_a_piece_waits_and_indented_lines_stream_at_once() -> None:
    parser = StreamParser()
    assert parser.feed("Use `x` and ``") == [Prose("Use `x` and ")]  # the run may go on in the next piece
    assert parser.feed("y`` now\n") == [Prose("``y`` now\n")]
    assert parser.feed("  indented words\n") == [Prose("  indented words\n")]
    assert parser.feed("  ") == []  # spaces at a line start may still open a blockquote or a fence
    assert parser.feed('> {"name": "files.read", "arguments": {}}\n') == [
        Prose('  > {"name": "files.read", "arguments": {}}\n')  # quoted: never a call
    ]
    assert parser.flush() == [] and parser.reply.calls == []


@pytest.mark.parametrize("chunk", [1, 2, 5, 64])
def test_a_long_string_whose_pieces_end_in_backslashes_reads_as_the_whole(chunk: int) -> None:
    content = 'line \\\\ with \\"quotes\\" and a path C:\\\\dir\\\\\n' * 200 + "ends in a backslash \\\\"
    text = f'```json\n{{"tool": "write_file", "path": "p", "content": "{content}"}}\n```\nDone.'
    whole = parse_reply(text)
    assert [call.arguments["content"] for call in whole.calls] == [json.loads(f'"{content}"', strict=False)]
    result, events = streamed([text[start : start + chunk] for start in range(0, len(text), chunk)])
    assert result == whole and [event for event in events if not isinstance(event, Prose)] == whole.items
