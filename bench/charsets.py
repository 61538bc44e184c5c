"""Charset decoding by the WHATWG label table against Python's own codecs, and what header reading costs.

Run: .venv/bin/python bench/charsets.py [--repeat 9]
Each pair is timed interleaved in the same run; prints medians and the ratio (table / Python).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import statistics
import time
from collections.abc import Callable
from email import policy
from email.parser import BytesParser

from mcp_tools.servers.inbox.parsing import _parse as read_headers
from mcp_tools.servers.inbox.parsing import parse_message
from mcp_tools.util.text import decode_bytes
from tests.servers.charset_mail import SAMPLES

BODY = "\u201cQuarterly\u201d numbers \u2013 revenue \u20ac1,250 (na\u00efve estimate). " * 15_000
CASES: dict[str, tuple[bytes, str, str]] = {
    "windows-1252 (iso-8859-1 label), 1 MB": (BODY.encode("cp1252"), "iso-8859-1", "cp1252"),
    "Shift_JIS (x-sjis label), 1 MB": (("会議は①時から～。" * 40_000).encode("cp932"), "x-sjis", "cp932"),
    "UTF-8, 1 MB": (BODY.encode("utf-8"), "utf-8", "utf-8"),
}


def timed(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def compare(name: str, ours: Callable[[], object], baseline: Callable[[], object], repeat: int) -> None:
    mine, theirs = [], []
    for _ in range(repeat):  # interleaved, so both see the same noise
        mine.append(timed(ours))
        theirs.append(timed(baseline))
    a, b = statistics.median(mine), statistics.median(theirs)
    print(f"{name:46} table {a * 1000:8.2f} ms  python {b * 1000:8.2f} ms  ratio {a / b:5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    repeat = parser.parse_args().repeat
    for name, (data, label, codec) in CASES.items():
        compare(
            name,
            lambda data=data, label=label: decode_bytes(data, label, [], "body"),
            lambda data=data, codec=codec: data.decode(codec, "replace"),
            repeat,
        )
    raws = [factory().raw for factory in SAMPLES.values()] * 50
    compare(
        f"MIME parse of {len(raws)} client mails, headers read",
        lambda: [read_headers(raw) for raw in raws],
        lambda: [BytesParser(policy=policy.default).parsebytes(raw) for raw in raws],
        repeat,
    )
    started = time.perf_counter()
    for raw in raws:
        parse_message(raw)
    print(f"(the whole of inbox parsing, for scale: {(time.perf_counter() - started) * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
