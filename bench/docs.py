"""Benchmark the docs namespace against the fake Google Docs on 127.0.0.1 (no network).

1. `docs.read` of a long document (headings, paragraphs with bold and links, nested lists,
   tables; converted whole, answered up to `max_chars` 30,000, the most one answer gives)
   through the real MCP client and the policy layer, against `documents.get` of the same
   document with googleapiclient alone: p50 and p95, interleaved call by call. The difference is
   the Markdown conversion, MCP and the audit row.
2. What the model would read: the Markdown against Google's JSON of the same document.

Run: .venv/bin/python bench/docs.py [--sections 150] [--calls 30]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.measure import direct_service, fake_google, interleaved, print_against, signed_in_token  # noqa: E402
from mcp_tools.servers.docs.render import to_markdown  # noqa: E402
from tests.harness import connect  # noqa: E402
from tests.servers.docs.fixtures import docs_settings  # noqa: E402
from tests.servers.fake_google import FakeDocs, FakeGoogle  # noqa: E402


def long_markdown(sections: int) -> str:
    parts = []
    for number in range(sections):
        parts.append(f"## Section {number}\n")
        parts.append(
            f"Paragraph {number} with **bold words**, *an aside* and [a link](https://example.org/{number}). "
            "The rest is ordinary prose that a report would hold, long enough to wrap on screen.\n"
        )
        parts.append("- first point\n  - a detail\n  - another detail\n- second point\n1. step one\n2. step two\n")
        if number % 10 == 0:
            parts.append("| Name | Value |\n| --- | --- |\n" + "".join(f"| row {r} | {r * 7} |\n" for r in range(5)))
    return "\n".join(parts)


def direct_get(google: FakeGoogle, token: str, document_id: str):
    service = direct_service(google, token, "docs", "v1")
    return lambda: service.documents().get(documentId=document_id).execute()


async def main(sections: int, calls: int) -> None:
    with fake_google() as google, tempfile.TemporaryDirectory() as tmp:
        FakeDocs(google)
        base = Path(tmp)
        settings = docs_settings(base, google)
        token = signed_in_token(base)
        async with connect(base, settings) as client:
            started = time.perf_counter()
            made = await client.call_tool("docs_create", {"title": "Bench", "text": long_markdown(sections)})
            created = time.perf_counter() - started
            document_id = made.structured_content["id"]
            direct = direct_get(google, token, document_id)
            arguments = {"id": document_id, "max_chars": 30_000}  # the most one answer gives
            fetched: list[dict] = []

            async def ours_read() -> None:
                result = await client.call_tool("docs_read", arguments)
                assert not result.is_error

            def direct_read() -> None:
                fetched[:] = [direct()]

            ours, theirs = await interleaved(ours_read, direct_read, calls, warm_ups=3)  # warm up both
            document = fetched[0]
        markdown = to_markdown(document)
        started = time.perf_counter()
        for _ in range(20):
            to_markdown(document)
        convert = (time.perf_counter() - started) / 20
    raw = json.dumps(document)
    print(
        f"document: {sections} sections, {len(markdown):,} characters of Markdown; created in {created * 1000:.0f} ms"
    )
    print(
        f"docs.read of a long document, converted whole, answered to max_chars 30,000 ({calls} calls each, interleaved)"
    )
    print_against(
        ours, theirs, "documents.get, googleapiclient", ratio_note=f"; to_markdown alone {convert * 1000:.1f} ms"
    )
    print(
        f"what the model reads: Markdown {len(markdown):,} chars vs Google's JSON {len(raw):,} "
        f"(x{len(raw) / len(markdown):.0f})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, default=150)
    parser.add_argument("--calls", type=int, default=30)
    options = parser.parse_args()
    anyio.run(main, options.sections, options.calls)
