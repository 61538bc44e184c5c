"""The files part of `search.all`: file names and the text of small files, scanned within a budget.

The store has no index, so the scan stops after a time and file budget; names count more than
content, and a file matching more of the words ranks above one repeating a single word.
"""

from __future__ import annotations

import math
import re
import time
from typing import TYPE_CHECKING

from mcp_tools.core.tooling import SearchHit, ToolFailure

if TYPE_CHECKING:
    from mcp_tools.servers.files.service import FilesService

SCAN_SECONDS = 3.0
SCAN_FILES = 5_000
CONTENT_BYTES = 256 * 1024  # larger files are matched by name only
SNIPPET_RADIUS = 80
WORD = re.compile(r"\w+", re.UNICODE)


def scan(service: FilesService, query: str, limit: int) -> list[SearchHit]:
    terms = list(dict.fromkeys(word.lower() for word in WORD.findall(query)))
    if not terms:
        return []
    deadline = time.monotonic() + SCAN_SECONDS
    scored: list[tuple[float, SearchHit]] = []
    for examined, entry in enumerate(service.store.entries("", recursive=True, after=None)):
        if examined >= SCAN_FILES or time.monotonic() > deadline:
            break
        if entry.type != "file" or entry.key.startswith(".") or "/." in entry.key:
            continue
        name = entry.key.lower()
        text = ""
        if entry.size is not None and entry.size <= CONTENT_BYTES:
            try:
                data = service.store.read_all(entry.key, CONTENT_BYTES)
            except ToolFailure:
                data = b""
            if b"\x00" not in data[:4096]:
                text = data.decode("utf-8", errors="replace")
        lowered = text.lower()
        in_name = sum(1 for term in terms if term in name)
        counts = [lowered.count(term) for term in terms]
        matched = sum(1 for term, count in zip(terms, counts, strict=True) if count or term in name)
        if not matched:
            continue
        score = matched / len(terms) * 10 + in_name * 2 + math.log1p(sum(counts))
        scored.append((score, SearchHit(entry.key, _snippet(text, lowered, terms), entry.key, round(score, 4))))
    scored.sort(key=lambda item: -item[0])
    return [hit for _, hit in scored[:limit]]


def _snippet(text: str, lowered: str, terms: list[str]) -> str:
    positions = [lowered.find(term) for term in terms if lowered.find(term) >= 0]
    if not positions:
        return " ".join(text[: SNIPPET_RADIUS * 2].split())
    at = min(positions)
    start = max(0, at - SNIPPET_RADIUS)
    piece = " ".join(text[start : at + SNIPPET_RADIUS].split())
    return ("…" if start else "") + piece + ("…" if at + SNIPPET_RADIUS < len(text) else "")


async def find(service: FilesService, query: str, limit: int) -> list[SearchHit]:
    import anyio

    return await anyio.to_thread.run_sync(scan, service, query, limit, abandon_on_cancel=True)
