"""Benchmark of the secret scrubber on a 1 MB tool result, against the previous scrubber.

    .venv/bin/python bench/scrubber.py            # 1 MB results, 7 repeats
    .venv/bin/python bench/scrubber.py --mb 0.2   # a quick run
    .venv/bin/python bench/scrubber.py --secrets 48   # the old cost grows with each secret, the new barely

What the gate does for every result: a presence check, then a scrub when something was found.
Workloads: plain prose with no secret (nearly every result), a JSON text with escapes (`\\n`,
`\\"`, `%20`: the decoded second search runs), and prose holding secrets, raw and cut. The
baseline is the previous scrubber (one `str.find` per secret's first 8 characters, secrets one
after another; no encoded forms), kept below, run in the same process; figures are medians of
interleaved repeats, reported as new/old ratios.
"""

# ruff: noqa: E402  (the import path is fixed before the standard library is imported)
from __future__ import annotations

import os
import sys

# bench/ holds scripts named like standard modules (calendar.py): keep it off the import path
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import argparse
import json
import random
import statistics
import string
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_tools.util.secrets import KnownSecrets

WORDS = "the model reads notes files mail and writes a short answer with `inline code` and approval links".split()  # noqa: SIM905


class OldScrubber:
    """The previous scrubber: secrets one after another, by length, no encoded forms."""

    def __init__(self, values: list[str]) -> None:
        self.values = frozenset(values)

    def present(self, text: str) -> bool:
        for secret in self.values:
            head = secret[:8]
            escaped = json.dumps(head, ensure_ascii=False)[1:-1]
            if head in text or escaped in text:
                return True
        return False

    def scrub(self, text: str) -> str:
        for secret in sorted(self.values, key=len, reverse=True):
            text = self._scrub_one(text, secret)
        return text

    @staticmethod
    def _scrub_one(text: str, secret: str) -> str:
        head = secret[:8]
        start = text.find(head)
        if start < 0:
            return text
        out: list[str] = []
        position = 0
        while start >= 0:
            end = start + 8
            while end < len(text) and end - start < len(secret) and text[end] == secret[end - start]:
                end += 1
            out += [text[position:start], "[redacted]"]
            position = end
            start = text.find(head, position)
        out.append(text[position:])
        return "".join(out)


def make_secrets(rng: random.Random, count: int) -> list[str]:
    alphabet = string.ascii_letters + string.digits
    shapes = ["tvly-dev-", "tvly-prod-", "ghp_", "sk-proj-", "xoxb-", "ya29.", "", "", "1//", "AKIA", "", "Bearer "]
    return [shapes[index % len(shapes)] + "".join(rng.choice(alphabet) for _ in range(32)) for index in range(count)]


def prose(size: int, rng: random.Random) -> str:
    words: list[str] = []
    total = 0
    while total < size:
        word = rng.choice(WORDS)
        words.append(word)
        total += len(word) + 1
    return " ".join(words)


def workloads(size: int, secrets: list[str], rng: random.Random) -> dict[str, str]:
    plain = prose(size, rng)
    lines = [{"line": index, "text": prose(80, rng) + ' "quoted" 100%20'} for index in range(size // 120)]
    escaped = json.dumps(lines)
    cut = list(plain)
    for index, secret in enumerate(secrets):
        at = rng.randrange(len(cut))
        cut[at] = f" {secret if index % 2 else secret[:20]} "
    return {"prose, no secret": plain, "JSON with escapes": escaped, "prose with secrets": "".join(cut)}


def gate_flow(scrubber: OldScrubber | KnownSecrets) -> Callable[[str], str]:
    def run(text: str) -> str:
        return scrubber.scrub(text) if scrubber.present(text) else text

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--secrets", type=int, default=12, help="known secrets (a busy config has a dozen)")
    args = parser.parse_args()
    rng = random.Random(7)
    secrets = make_secrets(rng, args.secrets)
    new = KnownSecrets()
    new.add_all(secrets)
    old = OldScrubber(secrets)
    size = int(args.mb * 1_000_000)
    print(f"{len(secrets)} secrets, results of {size:,} characters, {args.repeats} interleaved repeats")
    for name, text in workloads(size, secrets, rng).items():
        times: dict[str, list[float]] = {"old": [], "new": []}
        for _ in range(args.repeats):
            for label, run in (("old", gate_flow(old)), ("new", gate_flow(new))):
                started = time.perf_counter()
                run(text)
                times[label].append(time.perf_counter() - started)
        old_ms, new_ms = (statistics.median(times[label]) * 1000 for label in ("old", "new"))
        print(f"{name:22} old {old_ms:8.2f} ms   new {new_ms:8.2f} ms   new/old {new_ms / old_ms:6.2f}")


if __name__ == "__main__":
    main()
