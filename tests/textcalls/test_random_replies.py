"""Random replies of every format, split anywhere, read exactly as the whole and as one character at a time."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from mcp_tools.textcalls import DELIMITERS, Prose, parse_reply
from mcp_tools.textcalls.calls import Event
from tests.textcalls.test_streaming import streamed

WORDS_IN_A_LINE = (
    "the model reads notes and writes a short answer with `code` ``two`` ` \" ' “curly” ‘single’ "
    "ünï 🐱 ✂ ‚ [link](x) - * # > ~ ~~ `` \\ : , ] [ } <b> < <!-- --> --"
)
WORDS = WORDS_IN_A_LINE.split(" ")
CALLS = (
    '{"name": "files.read", "arguments": {"path": "a.md"}}',
    '{"tool": "write_file", "path": "b.md", "content": "one\\ntwo \\"q\\" \\\\ end"}',
    '{"name": "Ada", "age": 36}',
    '{"tool": "write_file", "path": "c"',
    '{"tool_calls": [{"id": "c9", "type": "function", "function": {"name": "files_list", "arguments": "{}"}}]}',
    '{"name": "files.list", "content": "an echoed result"}',
    "{'tool': 'files.list'}",
    '{"a": {"b": [1, 2, {"c": "}"}]}}',
)
ARRAY_CALL = '{"id": "%s", "type": "files_read", "operation": "read", "parameters": {"path": "%s"}}'


def words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) if rng.random() < 0.3 else rng.choice(WORDS[:8]) for _ in range(count))


def long_string(rng: random.Random) -> str:
    """File content as code-writing models send it: raw line breaks, escaped quotes and backslashes."""
    lines = []
    for _ in range(rng.randint(1, 60)):
        line = words(rng, rng.randint(0, 14)).replace("\\", "\\\\").replace('"', '\\"')
        line += rng.choice(["", ' \\"x\\"', " \\\\", " C:\\\\dir\\\\", " \\n", " \\t", " ```", " </tool_call>"])
        lines.append(line)
    return "\n".join(lines)


def fragment(rng: random.Random) -> str:
    kind = rng.randrange(16)
    if kind < 4:
        return words(rng, rng.randint(1, 400 if kind == 0 else 20))
    if kind == 4:
        return rng.choice(["\n", "\n\n", "\r\n", "\n\n\n", "\n  ", "\n> ", "\n    ", "\n\t"])
    if kind == 5:
        return rng.choice(CALLS)
    if kind == 6:
        label = rng.choice(["json", "tool_call", "", "python", "JSON ", "tool"])
        marker = rng.choice(["```", "~~~", "````"])
        body = rng.choice([*CALLS, '{"tool": "write_file", "path": "f", "content": "' + long_string(rng) + '"}'])
        closing = "" if rng.random() < 0.1 else f"\n{marker}\n"
        return f"\n{marker}{label}\n{body}{closing}"
    if kind == 7:
        tag = rng.choice(["tool_call", "function_call"])
        closing = "" if rng.random() < 0.1 else f"</{tag}>"
        return f"<{tag}>{rng.choice(CALLS)}{closing}"
    if kind == 8:
        return f"<!-- {words(rng, 5)} {rng.choice(CALLS)} -->" if rng.random() < 0.8 else "<!-- open"
    if kind == 9:
        return rng.choice(DELIMITERS)
    if kind == 10:
        return f"\n> {words(rng, 6)} {rng.choice(CALLS)}\n"
    if kind == 11:
        return f'"{words(rng, 3)} {rng.choice(CALLS)}"' if rng.random() < 0.5 else f"`{rng.choice(CALLS)}`"
    if kind == 12:
        return rng.choice(["`", "``", "```", "~", "~~", "\\", '"', "{", "}", "<", "‚", "✂", "\u201c", "\u201d"])
    if kind == 13:
        return "".join(rng.choice(" \t`~>\n{}<\"'\\") for _ in range(rng.randint(1, 12)))
    if kind == 14:
        return rng.choice(["ünïcödé", "🐱🐱", "\u2702\ufe0f", "\u00e2\u0153\u201a", "日本語のテキスト", "\u200b"])
    return "\ud800" if rng.random() < 0.5 else "a\udfffb"


def scissors_section(rng: random.Random) -> str:
    calls = [ARRAY_CALL % (index, long_string(rng)[:200].replace("\n", "\\n")) for index in range(rng.randint(0, 4))]
    section = rng.choice([f"[{', '.join(calls)}]", calls[0] if calls else "[]", f"```json\n[{', '.join(calls)}]\n```"])
    if rng.random() < 0.2:
        section = section[: rng.randint(0, len(section))]
    return rng.choice(["", " ", "\n", "Text first "]) + section + rng.choice(["\n", "", " "])


def random_reply(rng: random.Random) -> str:
    """A reply in one of the formats, with whatever a model might write around its calls."""
    body = "".join(fragment(rng) for _ in range(rng.randint(1, 30)))
    if rng.random() < 0.35:
        return scissors_section(rng) + rng.choice(DELIMITERS) + rng.choice(["\n", "", "\n\n  "]) + body
    return body


def random_pieces(rng: random.Random, data: str | bytes) -> list:
    """The reply cut at random places: a few cuts, many, or pieces of one size."""
    if len(data) < 2:
        return [data]
    style = rng.randrange(3)
    if style == 0:
        size = rng.choice([1, 2, 3, 7, 64, 100])
        return [data[start : start + size] for start in range(0, len(data), size)]
    count = rng.randint(1, 8) if style == 1 else rng.randint(1, max(1, len(data) // 4))
    cuts = sorted({rng.randrange(1, len(data)) for _ in range(count)})
    bounds = [0, *cuts, len(data)]
    return [data[start:end] for start, end in itertools.pairwise(bounds)]


def merged(events: list[Event]) -> list[Event]:
    """The events with neighbouring prose joined: what a reader sees, whatever the pieces were."""
    joined: list[Event] = []
    for event in events:
        if isinstance(event, Prose) and joined and isinstance(joined[-1], Prose):
            joined[-1] = Prose(joined[-1].text + event.text)
        else:
            joined.append(event)
    return joined


@pytest.mark.parametrize("seed", range(8))
def test_random_replies_split_anywhere_read_as_the_whole(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(40):
        text = random_reply(rng)
        format = rng.choice(["auto", "auto", "prose", "scissors"])
        as_bytes = "\ud800" not in text and "\udfff" not in text and rng.random() < 0.6
        data: str | bytes = text.encode() if as_bytes else text
        whole, whole_events = streamed([data], format)
        assert whole == parse_reply(data, format)
        result, events = streamed(random_pieces(rng, data), format)
        by_one, events_by_one = streamed(list(data) if isinstance(data, str) else [bytes([b]) for b in data], format)
        for reply, handed_out in ((result, events), (by_one, events_by_one)):
            assert reply == whole, (text, format)
            assert [event for event in handed_out if not isinstance(event, Prose)] == whole.items
            assert "".join(event.text for event in handed_out if isinstance(event, Prose)) == whole.markdown
            if not whole.problems or "not valid Unicode" not in json.dumps([p.message for p in whole.problems]):
                assert merged(handed_out) == merged(whole_events), (text, format)
