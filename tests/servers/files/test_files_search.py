"""files.search through a real MCP client: literal and regular expressions, paging, bounds and hostile input.

Both backends run where the behaviour is the store's (the local folder and moto's S3 on loopback);
the hostile expression runs beside other calls, which must be answered while it is stopped.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_tools.core.tooling import Environment
from mcp_tools.servers.files import create
from mcp_tools.servers.files.config import FilesConfig
from mcp_tools.servers.files.grep import FILE_BYTES, search
from mcp_tools.servers.files.models import SearchArgs
from tests.harness import connect, failure, ok, text_of
from tests.servers.files import fixtures as files_fixtures
from tests.servers.files.fixtures import S3_KEY_ID, S3_SECRET, FilesBackend, MotoEndpoint, s3_backend

backend = files_fixtures.backend
local = files_fixtures.local
moto_endpoint = files_fixtures.moto_endpoint

pytestmark = pytest.mark.anyio


def hits_of(result: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(hit["path"], hit["line"], hit["text"]) for hit in result["hits"]]


async def test_finds_lines_with_their_numbers_on_both_backends(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("notes/plan.md", b"# Plan\nShip the Release\r\nthen rest\n")
    backend.put("notes/other.txt", b"nothing here\nrelease notes\n")
    backend.put("image.png", b"\x89PNG\r\n\x1a\n\x00\x00release")
    backend.put(".cache/release.txt", b"release in a hidden folder\n")
    async with connect(tmp_path, backend.settings) as client:
        found = ok(await client.call_tool("files_search", {"query": "release"}))
        exact = ok(await client.call_tool("files_search", {"query": "Release", "case_sensitive": True}))
        only_md = ok(await client.call_tool("files_search", {"query": "release", "pattern": "**/*.md"}))
        hidden = ok(await client.call_tool("files_search", {"query": "release", "pattern": ".cache/*"}))
        shown = text_of(await client.call_tool("files_search", {"query": "release", "context_lines": 1}))
    assert sorted(hits_of(found)) == [("notes/other.txt", 2, "release notes"), ("notes/plan.md", 2, "Ship the Release")]
    assert found["binary"] == 1 and found["searched"] == 2 and found.get("next_cursor") is None
    assert hits_of(exact) == [("notes/plan.md", 2, "Ship the Release")]  # the CR of the CRLF line is not shown
    assert hits_of(only_md) == [("notes/plan.md", 2, "Ship the Release")]
    assert hits_of(hidden) == [(".cache/release.txt", 1, "release in a hidden folder")]
    assert "notes/plan.md:2:Ship the Release" in shown and "notes/plan.md-1-# Plan" in shown


async def test_context_lines_and_newest_files_first(tmp_path: Path, local: FilesBackend) -> None:
    assert local.root is not None
    for index, name in enumerate(["old.txt", "middle.txt", "new.txt"]):
        local.put(name, b"one\ntwo needle\nthree\n")
        os.utime(local.root / name, (1_700_000_000 + index * 100, 1_700_000_000 + index * 100))
    async with connect(tmp_path, local.settings) as client:
        found = ok(await client.call_tool("files_search", {"query": "NEEDLE", "context_lines": 2}))
    assert [hit["path"] for hit in found["hits"]] == ["new.txt", "middle.txt", "old.txt"]
    assert found["hits"][0] == {
        "path": "new.txt",
        "line": 2,
        "text": "two needle",
        "before": ["one"],
        "after": ["three"],
    }


async def test_pages_follow_the_cursor_and_miss_nothing(tmp_path: Path, backend: FilesBackend) -> None:
    for number in range(7):
        backend.put(f"logs/{number}.log", "".join(f"line {line} match\n" for line in range(9)).encode())
    seen: list[tuple[str, int, str]] = []
    cursor = None
    pages = 0
    async with connect(tmp_path, backend.settings) as client:
        while True:
            arguments: dict[str, Any] = {"query": "match", "limit": 10}
            if cursor:
                arguments["cursor"] = cursor
            page = ok(await client.call_tool("files_search", arguments))
            seen += hits_of(page)
            pages += 1
            cursor = page.get("next_cursor")
            if cursor is None:
                break
        forged = failure(await client.call_tool("files_search", {"query": "match", "cursor": "bm90IG91cnM="}))
    assert pages == 7 and len(seen) == 63 and len(set(seen)) == 63
    assert forged["kind"] == "invalid_arguments"


async def test_a_regular_expression_on_request(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("code.py", b"def alpha():\n    return 1\ndef beta_2():\n")
    async with connect(tmp_path, backend.settings) as client:
        found = ok(await client.call_tool("files_search", {"query": r"^def \w+_\d\(", "regex": True}))
        literal = ok(await client.call_tool("files_search", {"query": r"^def \w+_\d\("}))
        broken = failure(await client.call_tool("files_search", {"query": "(unclosed", "regex": True}))
    assert hits_of(found) == [("code.py", 3, "def beta_2():")]
    assert literal["hits"] == []  # without regex the characters are taken as written
    assert broken["kind"] == "invalid_arguments" and "regular expression" in broken["message"]


async def test_a_hostile_expression_is_stopped_while_other_calls_are_answered(
    tmp_path: Path, local: FilesBackend
) -> None:
    local.put("hostile.txt", b"a" * 50_000 + b"b\n")
    local.put("plain.txt", b"hello\n")
    answered_during: list[bool] = []
    async with connect(tmp_path, local.settings) as client:
        outcome: dict[str, Any] = {}

        async def hostile() -> None:
            outcome["result"] = await client.call_tool("files_search", {"query": "(a+)+$", "regex": True})

        async with anyio.create_task_group() as group:
            group.start_soon(hostile)
            for _ in range(3):
                listed = ok(await client.call_tool("files_list", {}))
                assert {entry["path"] for entry in listed["entries"]} == {"hostile.txt", "plain.txt"}
                answered_during.append("result" not in outcome)
        stopped = failure(outcome["result"])
        after = ok(await client.call_tool("files_search", {"query": "hello"}))
    assert all(answered_during)  # every listing came back while the expression still ran
    assert stopped["kind"] == "timeout" and "hostile.txt" in stopped["message"]
    assert "regex: false" in stopped["hint"]
    assert hits_of(after) == [("plain.txt", 1, "hello")]  # the server goes on


async def test_a_200_mb_log_is_searched_in_its_start_and_named(tmp_path: Path, local: FilesBackend) -> None:
    assert local.root is not None
    log = local.root / "big.log"
    with log.open("wb") as file:  # text up to past the bound, then sparse: 200 MB on paper
        file.write(b"ERROR first failure\n" + b"INFO all is well\n" * (FILE_BYTES // 17 + 100))
        file.write(b"ERROR beyond the bound\n")
        file.truncate(200 * 1024 * 1024)
    local.put("small.log", b"ERROR small\n")
    async with connect(tmp_path, local.settings) as client:
        found = ok(await client.call_tool("files_search", {"query": "ERROR"}))
    assert sorted(hits_of(found)) == [("big.log", 1, "ERROR first failure"), ("small.log", 1, "ERROR small")]
    assert found["partial"] == ["big.log"] and "first 4 MiB" in found["note"]


def test_s3_reads_only_the_bounded_range(tmp_path: Path, moto_endpoint: MotoEndpoint) -> None:
    store = s3_backend(moto_endpoint)
    store.put("huge.log", b"needle at the start\n" + b"x" * (FILE_BYTES + 100_000) + b"\nneedle at the end\n")
    settings = dict(store.settings["files"], access_key_id=S3_KEY_ID, secret_access_key=S3_SECRET)
    service = create(FilesConfig(**settings), Environment(data_dir=tmp_path, state_dir=tmp_path))
    ranges: list[str | None] = []
    client = service.store.client  # type: ignore[attr-defined]
    client.meta.events.register(
        "before-send.s3.GetObject", lambda request, **_: ranges.append(request.headers.get("Range"))
    )
    result = search(service, SearchArgs(query="needle"))
    assert [(hit.path, hit.line) for hit in result.hits] == [("huge.log", 1)]
    assert result.partial == ["huge.log"]
    assert ranges == [f"bytes=0-{FILE_BYTES - 1}".encode()] or ranges == [f"bytes=0-{FILE_BYTES - 1}"]


async def test_names_text_and_arguments_from_outside(tmp_path: Path, local: FilesBackend) -> None:
    assert local.root is not None
    (local.root / "caf\xe9.txt").write_bytes(b"needle in a unicode name\n")
    os.makedirs(local.root / "raw", exist_ok=True)
    (local.root / "raw").joinpath(os.fsdecode(b"bad\xffname.txt")).write_bytes(b"needle behind a raw name\n")
    local.put("latin1.txt", "needle caf\xe9\n".encode("latin-1"))
    long_line = ("x" * 5000 + "needle" + "y" * 5000 + "\n").encode()
    local.put("long.txt", long_line)
    async with connect(tmp_path, local.settings) as client:
        found = ok(await client.call_tool("files_search", {"query": "needle"}))
        nul = failure(await client.call_tool("files_search", {"query": "a\x00b"}))
        huge = failure(await client.call_tool("files_search", {"query": "x" * 5000}))
        keys = {f"k{index}": 1 for index in range(3000)}
        many = failure(await client.call_tool("files_search", {"query": "needle", **keys}))
    paths = {hit["path"] for hit in found["hits"]}
    assert "caf\xe9.txt" not in paths and "names rule" in found["note"]  # strict names: not searched, said
    assert {"latin1.txt", "long.txt"} <= paths
    latin = next(hit for hit in found["hits"] if hit["path"] == "latin1.txt")
    assert latin["text"] == "needle caf\ufffd"
    shown = next(hit for hit in found["hits"] if hit["path"] == "long.txt")["text"]
    assert "needle" in shown and len(shown) <= 242 and shown.startswith("…") and shown.endswith("…")
    assert {nul["kind"], huge["kind"], many["kind"]} == {"invalid_arguments"}


async def test_unicode_names_are_searched_when_the_store_allows_them(tmp_path: Path, local: FilesBackend) -> None:
    assert local.root is not None
    (local.root / "caf\xe9.txt").write_bytes(b"needle\n")
    async with connect(tmp_path, local.with_files(names="unicode")) as client:
        found = ok(await client.call_tool("files_search", {"query": "needle"}))
        read = ok(await client.call_tool("files_read", {"path": found["hits"][0]["path"]}))
    assert hits_of(found) == [("caf\xe9.txt", 1, "needle")] and found.get("note") is None
    assert read["content"] == "needle\n"


async def test_the_page_fits_the_result_budget(tmp_path: Path, local: FilesBackend) -> None:
    line = "needle " + "z" * 1000 + "\n"
    local.put("wide.txt", (line * 400).encode())
    async with connect(tmp_path, local.settings) as client:
        result = await client.call_tool("files_search", {"query": "needle", "limit": 200, "context_lines": 5})
    found = ok(result)
    assert 0 < len(found["hits"]) < 200 and found["next_cursor"] is not None
    assert "cut to fit" not in text_of(result)  # paged by the tool itself, not cut by the gate


async def test_a_glob_with_a_folder_lists_below_the_folder(tmp_path: Path, local: FilesBackend) -> None:
    for key in ("top.pdf", "a/one.pdf", "a/b/two.pdf", "a/b/note.txt"):
        local.put(key, b"%PDF")
    async with connect(tmp_path, local.settings) as client:
        deep = ok(await client.call_tool("files_list", {"pattern": "**/*.pdf"}))
        names_only = ok(await client.call_tool("files_list", {"pattern": "*.pdf"}))
    assert [entry["path"] for entry in deep["entries"]] == ["a/b/two.pdf", "a/one.pdf", "top.pdf"]
    assert [entry["path"] for entry in names_only["entries"]] == ["top.pdf"]  # no '/': this folder, as before
