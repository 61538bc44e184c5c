"""files.search: text inside the store, a literal string or a regular expression, newest files first.

Every call is bounded, on the local folder and on S3 alike: it reads at most FILE_BYTES of each
file (a larger one is searched in its start and named in `partial`; S3 sends only that range)
and CALL_BYTES in all, and runs at most CALL_SECONDS; then `next_cursor` says where to go on.
A regular expression runs in the `regex` package with a processor-time limit per line and the
GIL released, so a pathological one (`(a+)+$` on a long line) is stopped and reported while the
server goes on answering other calls.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio.to_thread

from mcp_tools.core.tooling import CallContext, ToolFailure
from mcp_tools.servers.files.backend import StoredEntry, compile_glob, matches
from mcp_tools.servers.files.models import LineHit, SearchArgs, SearchResult
from mcp_tools.servers.files.service import FilesService
from mcp_tools.util.sandbox import check_key
from mcp_tools.util.wording import plural

MIB = 1024 * 1024
FILE_BYTES = 4 * MIB  # read of one file; a larger one is searched in its start and named
CALL_BYTES = 32 * MIB  # read per call; then next_cursor
CALL_SECONDS = 10.0  # per call; then next_cursor
REGEX_SECONDS = 1.0  # processor time one line's match may take before the expression is stopped
HITS_CHARS = 12_000  # characters of paths, lines and context per page, so a page fits the result budget
LINE_CHARS = 240  # a longer line is shown as a window around the match
LEAD_CHARS = 60  # of that window, before the match
SNIFF_BYTES = 8192  # a NUL in these makes a file binary
CHECK_EVERY = 512  # lines between looks at the clock


@dataclass(frozen=True)
class Resume:
    """Where the previous page stopped: the file (by its place in the order) and the next line."""

    mtime: float
    key: str
    line: int  # 0-based index of the next line to search in that file

    @property
    def order(self) -> tuple[float, str]:
        return (-self.mtime, self.key)


def _order(entry: StoredEntry) -> tuple[float, str]:
    return (-(entry.mtime or 0.0), entry.key)


def encode_cursor(entry: StoredEntry, line: int) -> str:
    raw = json.dumps([entry.mtime or 0.0, entry.key, line], ensure_ascii=False, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii")


def decode_cursor(cursor: str) -> Resume:
    try:
        mtime, key, line = json.loads(base64.b64decode(cursor.encode("ascii"), altchars=b"-_", validate=True))
        if not (isinstance(mtime, int | float) and isinstance(key, str) and isinstance(line, int) and line >= 0):
            raise ValueError
        return Resume(float(mtime), key, line)
    except (binascii.Error, UnicodeError, ValueError, TypeError):
        raise ToolFailure(
            "invalid_arguments", "cursor is not one this tool returned", "pass next_cursor unchanged, or omit it"
        ) from None


Finder = Callable[[str], int | None]


@dataclass(frozen=True)
class Matcher:
    find: Finder  # where the query first matches in one line, or None
    maybe_in: Callable[[str], bool]  # a quick look at a whole file: False means no line can match


def build_matcher(args: SearchArgs) -> Matcher:
    if not args.query:
        raise ToolFailure("invalid_arguments", "query is empty", "give the text to find")
    if not args.regex:
        if args.case_sensitive:
            literal = args.query

            def find_exact(line: str) -> int | None:
                at = line.find(literal)
                return None if at < 0 else at

            return Matcher(find_exact, lambda text: literal in text)
        folded = re.compile(re.escape(args.query), re.IGNORECASE)  # a literal: linear, never backtracks

        def find_folded(line: str) -> int | None:
            found = folded.search(line)
            return None if found is None else found.start()

        return Matcher(find_folded, lambda text: folded.search(text) is not None)
    import regex

    try:
        expression = regex.compile(args.query, 0 if args.case_sensitive else regex.IGNORECASE)
    except (regex.error, ValueError, OverflowError) as error:
        raise ToolFailure(
            "invalid_arguments",
            f"query is not a valid regular expression: {error}",
            "fix it, or pass regex: false to search for the text as written",
        ) from None

    def find_pattern(line: str) -> int | None:
        found = expression.search(line, timeout=REGEX_SECONDS, concurrent=True)
        return None if found is None else int(found.start())

    return Matcher(find_pattern, lambda text: True)


def _shown(line: str, at: int = 0) -> str:
    if len(line) <= LINE_CHARS:
        return line
    start = max(0, min(at - LEAD_CHARS, len(line) - LINE_CHARS))
    piece = line[start : start + LINE_CHARS]
    return ("…" if start else "") + piece + ("…" if start + LINE_CHARS < len(line) else "")


def _hidden_allowed(pattern: str | None) -> bool:
    """Names starting with '.' are searched only when the glob asks for them ('.config/**', '**/.env')."""
    return pattern is not None and re.search(r"(?:^|/)\.", pattern) is not None


def _candidates(service: FilesService, args: SearchArgs) -> tuple[list[StoredEntry], int]:
    """The files to search, newest first, and how many have names the store's rule refuses."""
    glob = compile_glob(args.pattern) if args.pattern else None
    hidden = _hidden_allowed(args.pattern)
    found: list[StoredEntry] = []
    refused = 0
    for entry in service.store.entries("", recursive=True, after=None):
        if entry.type != "file" or not matches(glob, entry.key):
            continue
        if not hidden and (entry.key.startswith(".") or "/." in entry.key):
            continue
        try:
            check_key(entry.key, service.names)
        except ToolFailure:
            refused += 1
            continue
        found.append(entry)
    found.sort(key=_order)
    return found, refused


class _Page:
    def __init__(self, args: SearchArgs) -> None:
        self.args = args
        self.hits: list[LineHit] = []
        self.chars = 0
        self.searched = 0
        self.binary = 0
        self.partial: list[str] = []
        self.read = 0
        self.cursor: str | None = None
        self.why: str | None = None

    def stop(self, entry: StoredEntry, line: int, why: str | None = None) -> None:
        self.cursor = encode_cursor(entry, line)
        self.why = why

    def add(self, entry: StoredEntry, lines: list[str], index: int, at: int) -> bool:
        """Keep a hit; False when the page is full (the hit is left for the next page)."""
        context = self.args.context_lines
        hit = LineHit(
            path=entry.key,
            line=index + 1,
            text=_shown(lines[index].rstrip("\r"), at),
            before=[_shown(line.rstrip("\r")) for line in lines[max(0, index - context) : index]],
            after=[_shown(line.rstrip("\r")) for line in lines[index + 1 : index + 1 + context]],
        )
        cost = len(hit.path) + len(hit.text) + sum(len(line) + 8 for line in hit.before + hit.after) + 24
        if len(self.hits) >= self.args.limit or (self.hits and self.chars + cost > HITS_CHARS):
            return False
        self.hits.append(hit)
        self.chars += cost
        return True


def _search_file(page: _Page, matcher: Matcher, entry: StoredEntry, text: str, start: int, deadline: float) -> bool:
    """Search one file's text from line `start`; False when the page stopped inside it."""
    if not matcher.maybe_in(text):
        return True
    lines = text.split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()  # the end of the last line, not a line of its own
    for index in range(start, len(lines)):
        if index % CHECK_EVERY == 0 and index > start and time.monotonic() > deadline:
            page.stop(entry, index, "time")
            return False
        try:
            at = matcher.find(lines[index].rstrip("\r"))
        except TimeoutError:
            raise ToolFailure(
                "timeout",
                f"the regular expression was stopped after {REGEX_SECONDS:g} s of processor time on line "
                f"{index + 1} of {entry.key}; nested repeats such as (a+)+ can take forever on a long line",
                "simplify it (no repeat inside a repeat), or search for the text as written (regex: false)",
            ) from None
        if at is None:
            continue
        if not page.add(entry, lines, index, at):
            page.stop(entry, index)
            return False
    return True


def search(service: FilesService, args: SearchArgs) -> SearchResult:
    matcher = build_matcher(args)
    resume = decode_cursor(args.cursor) if args.cursor else None
    deadline = time.monotonic() + CALL_SECONDS
    files, refused = _candidates(service, args)
    page = _Page(args)
    for entry in files:
        start = 0
        if resume is not None:
            if _order(entry) < resume.order:
                continue
            if _order(entry) == resume.order:
                start = resume.line
        size = min(entry.size or 0, FILE_BYTES)
        if page.read and (page.read + size > CALL_BYTES or time.monotonic() > deadline):
            page.stop(entry, start, "bytes" if page.read + size > CALL_BYTES else "time")
            break
        try:
            data = service.store.read_head(entry.key, FILE_BYTES)
        except ToolFailure as failure:
            if failure.kind in ("not_found", "conflict", "invalid_arguments"):
                continue  # gone, or turned into something else, since it was listed
            raise
        page.read += len(data)
        if b"\x00" in data[:SNIFF_BYTES]:
            page.binary += 1
            continue
        page.searched += 1
        if (entry.size or 0) > FILE_BYTES:
            page.partial.append(entry.key)
        if not _search_file(page, matcher, entry, data.decode("utf-8", "replace"), start, deadline):
            break
    return SearchResult(
        hits=page.hits,
        searched=page.searched,
        binary=page.binary,
        partial=page.partial,
        next_cursor=page.cursor,
        note=_note(page, refused),
    )


def _note(page: _Page, refused: int) -> str | None:
    parts = []
    if page.why == "time":
        parts.append(f"stopped after {CALL_SECONDS:g} s; call again with next_cursor to search on")
    elif page.why == "bytes":
        parts.append(f"stopped after reading {CALL_BYTES // MIB} MiB; call again with next_cursor to search on")
    if page.partial:
        parts.append(f"files over {FILE_BYTES // MIB} MiB were searched in their first {FILE_BYTES // MIB} MiB only")
    if refused:
        parts.append(f"{refused} files have names this store's [files] names rule refuses, so they were not searched")
    return "; ".join(parts) or None


async def search_files(service: FilesService, args: SearchArgs, ctx: CallContext) -> SearchResult:
    """Always in a worker thread, whatever the backend: the matching is work for the processor."""
    return await anyio.to_thread.run_sync(partial(search, service, args), abandon_on_cancel=True)


def render_search(result: SearchResult) -> str:
    files = len({hit.path for hit in result.hits})
    hits, searched = len(result.hits), result.searched
    lines = [
        f"{hits} {plural(hits, 'hit')} in {files} {plural(files, 'file')} ({searched} {plural(searched, 'file')}"
        f" searched, {result.binary} binary skipped)"
    ]
    for hit in result.hits:
        first = hit.line - len(hit.before)
        lines += [f"{hit.path}-{first + offset}-{text}" for offset, text in enumerate(hit.before)]
        lines.append(f"{hit.path}:{hit.line}:{hit.text}")
        lines += [f"{hit.path}-{hit.line + 1 + offset}-{text}" for offset, text in enumerate(hit.after)]
    if result.partial:
        lines.append("searched in their start only: " + ", ".join(result.partial))
    if result.next_cursor:
        lines.append(f"more: cursor={result.next_cursor}")
    if result.note:
        lines.append(f"({result.note})")
    return "\n".join(lines)


def describe_search(args: Any) -> str:
    kind = "regular expression" if args.regex else "text"
    where = f" in {args.pattern}" if args.pattern else ""
    return f"Search files{where} for the {kind} {args.query!r}"
