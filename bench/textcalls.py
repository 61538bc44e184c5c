"""Benchmark of the text-call parser: throughput for a 1 MB reply in each format, whole and streamed.

    .venv/bin/python bench/textcalls.py                    # 1 MB replies, 5 repeats
    .venv/bin/python bench/textcalls.py --mb 0.2           # a quick run
    .venv/bin/python bench/textcalls.py --before 6728c33   # also an earlier commit's parser, same run

Each format's reply is about the size asked for: prose with calls in it (JSON-in-prose), a
code-writing reply whose ```json fence writes a large file, and a scissors-cat reply (a call array
with large parameters, the delimiter, then markdown). "streamed" feeds the UTF-8 bytes in 64-byte
chunks to one StreamParser; "decode + Prose per 64 B piece" only decodes each chunk and makes its
event, what handing out each piece as it comes costs before any parsing. The baseline is
`json.loads` of a JSON document of the same size, in the same process; figures are medians of
interleaved repeats, timed in CPU seconds of the process (on busy shared cores, wall time mostly
measures the wait for a core). With `--before COMMIT` the parser of that commit (taken from git
into a temporary package) runs interleaved with today's, so before and after are ratios of the
same run.

Then hostile replies of the same size (unbalanced braces, runs of quotes, backticks, fences, tags,
comments) are each parsed once against a time budget: no pattern may backtrack catastrophically.
"""

# ruff: noqa: E402  (the import path is fixed before the standard library is imported)
from __future__ import annotations

import os
import sys

# bench/ holds scripts named like standard modules (calendar.py): keep it off the import path
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import argparse
import importlib
import json
import random
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_tools.textcalls import StreamParser, parse_reply
from mcp_tools.textcalls.calls import prose_of

WORDS = "the model reads notes files mail and writes a short answer with `inline code` and [links](x) ünï".split()  # noqa: SIM905
SCISSORS = "\u2702\ufe0f\U0001f431"


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))).capitalize() + "."


def prose_reply(size: int, rng: random.Random) -> str:
    parts: list[str] = []
    total, calls = 0, 0
    while total < size:
        paragraph = " ".join(sentence(rng) for _ in range(rng.randint(3, 8)))
        if calls < 40 and rng.random() < 0.01:
            paragraph += f' Now {{"name": "files.read", "arguments": {{"path": "notes/{calls}.md"}}}} to check.'
            calls += 1
        parts.append(paragraph + "\n\n")
        total += len(paragraph) + 2
    return "".join(parts)


def code_reply(size: int, rng: random.Random) -> str:
    lines: list[str] = []
    total = 0
    while total < size - size // 20:  # escaping adds a little; stay under the 1,000,000 characters read
        line = f'    value_{rng.randint(0, 999)} = "{sentence(rng)}"  # {{"tool": "delete_file"}}'
        lines.append(line)
        total += len(line) + 1
    content = "\n".join(lines)
    body = content.replace("\\", "\\\\").replace('"', '\\"')  # raw line breaks, as code-writing models send
    return (
        "I'll write the module.\n```json\n"
        f'{{"tool": "write_file", "path": "src/big.py", "content": "{body}"}}\n```\n'
        'Then check it:\n```tool_call\n{"name": "files.read", "arguments": {"path": "src/big.py"}}\n```\n'
    )


def scissors_reply(size: int, rng: random.Random) -> str:
    calls = []
    half = size // 2
    for index in range(20):
        text = " ".join(sentence(rng) for _ in range(half // 20 // 90))
        calls.append(
            {
                "id": str(index),
                "type": "docs_append",
                "operation": "append",
                "parameters": {"documentId": "d", "text": text},
            }
        )
    section = json.dumps(calls, ensure_ascii=False)
    markdown = prose_reply(size - len(section), rng)
    return f"{section}\n{SCISSORS}\n{markdown}"


ROOT = Path(__file__).resolve().parents[1]
BUDGET_SECONDS = 3.0  # per hostile megabyte, on 2 busy cores; a catastrophic pattern takes minutes


def hostile_replies(size: int) -> dict[str, str]:
    call = '{"name": "files.read", "arguments": {"path": "a"}}'
    return {
        "nested open objects": '{"a":' * (size // 5),
        "braces inside keys": '{"x{' * (size // 4),
        "empty json fences": "```json\n```\n" * (size // 12),
        "unclosed fence": "```json\n" + '{"a": "' * (size // 7),
        "fence opener, then spaces": "```" + " " * size,
        "fence opener, tabs, json": "~~~" + "\t" * (size // 2) + "json" + "\t" * (size // 2),
        "quotes": '"' * size,
        "backticks": "`" * size,
        "backtick pairs and braces": "`{`" * (size // 3),
        "tags": "<tool_call>" * (size // 11),
        "comment openers": "<!--" * (size // 4),
        "blockquoted calls": f"> {call}\n" * (size // (len(call) + 3)),
        "array openers": "[" * size,
        "scissors-like prose": '[{"id": "1", "type": "x", ' * (size // 27),
        "escapes in a string": '```json\n{"tool": "write_file", "content": "' + "\\" * (size // 2),
    }


def load_before(commit: str, directory: str) -> Any:
    """The text-call package of an earlier commit, importable beside today's as `before_textcalls`."""
    package = Path(directory) / "before_textcalls"
    package.mkdir()
    names = subprocess.run(
        ["git", "ls-tree", "--name-only", commit, "mcp_tools/textcalls/"], cwd=ROOT, check=True, capture_output=True,
        text=True,
    ).stdout.split()  # fmt: skip
    for name in names:
        source = subprocess.run(["git", "show", f"{commit}:{name}"], cwd=ROOT, check=True, capture_output=True).stdout
        text = source.decode().replace("mcp_tools.textcalls", "before_textcalls")
        (package / Path(name).name).write_text(text)
    sys.path.insert(0, directory)
    return importlib.import_module("before_textcalls")


def whole(text: str, module: Any = None) -> Callable[[], object]:
    parse = module.parse_reply if module is not None else parse_reply
    return lambda: parse(text)


def streamed(data: bytes, chunk: int = 64, module: Any = None) -> Callable[[], object]:
    def run() -> object:
        parser = (module.StreamParser if module is not None else StreamParser)()
        for start in range(0, len(data), chunk):
            parser.feed(data[start : start + chunk])
        parser.flush()
        return parser.reply

    return run


def floor(data: bytes, chunk: int = 64) -> Callable[[], object]:
    """What any parser that hands out each piece as it comes pays: decoding it and making its Prose event."""

    def run() -> object:
        events = []
        for start in range(0, len(data), chunk):
            events.append([prose_of(data[start : start + chunk].decode("utf-8", "replace"))])
        return events

    return run


def seconds(function: Callable[[], object]) -> float:
    """CPU seconds of this process: on shared cores, time spent waiting for a core is not the parser's."""
    started = time.process_time()
    function()
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0, help="reply size in MB (default 1)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--before", metavar="COMMIT", help="also run this commit's parser, interleaved")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        before = load_before(args.before, directory) if args.before else None
        measure(args, before)
        hostile(int(args.mb * 1_000_000))


def measure(args: argparse.Namespace, before: Any) -> None:
    size = int(args.mb * 1_000_000)
    rng = random.Random(14)
    replies = {
        "prose": prose_reply(size, rng),
        "code block": code_reply(size, rng),
        "scissors": scissors_reply(size, rng),
    }
    baseline_doc = json.dumps([sentence(rng) for _ in range(size // 90)])
    cases: dict[str, tuple[int, Callable[[], object]]] = {
        "baseline json.loads": (len(baseline_doc.encode()), lambda: json.loads(baseline_doc))
    }
    for name, text in replies.items():
        data = text.encode()
        summary = parse_reply(text)
        assert summary.format == ("scissors" if name == "scissors" else "prose"), name
        assert streamed(data)() == summary, name  # the streamed result is the whole-reply result
        if before is not None:
            cases[f"{name} whole (before)"] = (len(data), whole(text, before))
        cases[f"{name} whole"] = (len(data), whole(text))
        if before is not None:
            cases[f"{name} streamed 64 B (before)"] = (len(data), streamed(data, module=before))
        cases[f"{name} streamed 64 B"] = (len(data), streamed(data))
        if name == "prose":
            cases["decode + Prose per 64 B piece, no parsing"] = (len(data), floor(data))
    timings: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.repeats):  # interleaved, so drift hits every case alike
        for name, (_, function) in cases.items():
            timings[name].append(seconds(function))
    baseline = len(baseline_doc.encode()) / statistics.median(timings["baseline json.loads"]) / 1e6
    print(f"{'case':<42} {'size':>9} {'median s':>9} {'MB/s':>8} {'vs json.loads':>14}")
    for name, (length, _) in cases.items():
        median = statistics.median(timings[name])
        rate = length / median / 1e6
        print(f"{name:<42} {length / 1e6:>8.2f}M {median:>9.4f} {rate:>8.1f} {rate / baseline:>13.3f}x")


def hostile(size: int) -> None:
    print(f"\nhostile replies, {size / 1e6:.1f} MB each, budget {BUDGET_SECONDS:.1f} s per MB")
    over = []
    for name, text in hostile_replies(size).items():
        for format in ("auto", "prose", "scissors"):
            took = seconds(lambda: parse_reply(text, format))  # noqa: B023 - called at once
            rate = took / (len(text) / 1e6)
            verdict = "ok" if rate <= BUDGET_SECONDS else "OVER BUDGET"
            over += [name] if rate > BUDGET_SECONDS else []
            print(f"  {name:<28} {format:<9} {took:>7.3f} s  {verdict}")
    if over:
        raise SystemExit(f"over the time budget: {', '.join(sorted(set(over)))}")


if __name__ == "__main__":
    main()
