"""The files tools through a real MCP client, on the local backend and on S3 (moto on loopback)."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import mcp_types as types
import pytest

from mcp_tools.composition.app import build_app
from mcp_tools.core.config import ConfigError
from mcp_tools.core.tooling import Environment, NotConfigured
from mcp_tools.servers.files import NAMESPACE, create
from mcp_tools.servers.files.config import FilesConfig
from tests.harness import annotation, connect, failure, make_config, ok, text_of
from tests.servers.files import fixtures as files_fixtures
from tests.servers.files.fixtures import S3_SECRET, FilesBackend, MotoEndpoint, s3_backend

backend = files_fixtures.backend
local = files_fixtures.local
moto_endpoint = files_fixtures.moto_endpoint

pytestmark = pytest.mark.anyio


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def test_tools_are_listed_with_honest_annotations(tmp_path: Path, local: FilesBackend) -> None:
    async with connect(tmp_path, local.settings) as client:
        listing = await client.list_tools()
    tools = {tool.name: tool for tool in listing.tools}
    methods = ("list", "search", "read", "write", "edit", "copy", "mkdir", "move", "delete", "import")
    assert set(tools) == {f"files_{name}" for name in methods}
    assert annotation(tools["files_read"], "read_only_hint") is True
    assert annotation(tools["files_list"], "read_only_hint") is True
    assert annotation(tools["files_delete"], "destructive_hint") is True
    assert annotation(tools["files_write"], "read_only_hint") is not True
    assert "path" in tools["files_read"].input_schema["required"]
    edit_schema = tools["files_edit"].input_schema
    assert edit_schema["required"] == ["path", "edits"]


async def test_works_with_no_config_at_all(tmp_path: Path) -> None:
    async with connect(tmp_path, {"server": {"servers": ["files"]}}) as client:
        ok(await client.call_tool("files_write", {"path": "hello.txt", "content": "hi"}))
        read = ok(await client.call_tool("files_read", {"path": "hello.txt"}))
    assert read["content"] == "hi"
    assert (tmp_path / "data" / "files" / "hello.txt").read_text() == "hi"


def test_s3_without_bucket_is_not_configured(tmp_path: Path) -> None:
    env = Environment(data_dir=tmp_path, state_dir=tmp_path)
    with pytest.raises(NotConfigured, match="bucket"):
        create(FilesConfig(backend="s3"), env)
    assert NAMESPACE.needs_account is False


def test_unknown_config_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        build_app(make_config(tmp_path, {"server": {"servers": ["files"]}, "files": {"rooot": "/tmp"}}))


async def test_write_then_read_text(tmp_path: Path, backend: FilesBackend) -> None:
    content = "Grüße\nline two\n"
    async with connect(tmp_path, backend.settings) as client:
        written = ok(await client.call_tool("files_write", {"path": "docs/hello.md", "content": content}))
        read = ok(await client.call_tool("files_read", {"path": "docs/hello.md"}))
    data = content.encode()
    assert written == {"path": "docs/hello.md", "size": len(data), "sha256": sha(data), "created": True}
    assert read["content"] == content and read["encoding"] == "text"
    assert read["size"] == len(data) and read["sha256"] == sha(data)
    assert read["mime_type"] == "text/markdown" and read["truncated"] is False
    assert backend.get("docs/hello.md") == data


async def test_binary_round_trips_as_base64(tmp_path: Path, backend: FilesBackend) -> None:
    data = b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe" + bytes(range(256))
    encoded = base64.b64encode(data).decode()
    async with connect(tmp_path, backend.settings) as client:
        ok(await client.call_tool("files_write", {"path": "img/a.png", "content": encoded, "encoding": "base64"}))
        ok(await client.call_tool("files_write", {"path": "img/a.bin", "content": encoded, "encoding": "base64"}))
        read = ok(await client.call_tool("files_read", {"path": "img/a.bin"}))
        shown = await client.call_tool("files_read", {"path": "img/a.png"})
        bad = failure(await client.call_tool("files_write", {"path": "b.bin", "content": "@@", "encoding": "base64"}))
    assert read["encoding"] == "base64" and read["mime_type"] == "application/octet-stream"
    assert base64.b64decode(read["content"]) == data and read["sha256"] == sha(data)
    image = [block for block in shown.content if isinstance(block, types.ImageContent)]
    assert ok(shown)["encoding"] == "image" and ok(shown)["content"] == ""  # a small image is shown, once
    assert [(base64.b64decode(block.data), block.mime_type) for block in image] == [(data, "image/png")]
    assert bad["kind"] == "invalid_arguments" and "base64" in bad["message"]


async def test_read_in_windows_never_splits_a_character(tmp_path: Path, backend: FilesBackend) -> None:
    text = "aé" * 1000  # 3000 bytes, a two-byte character at every odd offset
    backend.put("big.txt", text.encode())
    pieces: list[str] = []
    offset = 0
    async with connect(tmp_path, backend.settings) as client:
        while True:
            read = ok(await client.call_tool("files_read", {"path": "big.txt", "offset": offset, "limit": 1000}))
            assert read["sha256"] == sha(text.encode()) and read["size"] == 3000
            pieces.append(read["content"])
            if not read["truncated"]:
                break
            offset = read["next_offset"]
        past = failure(await client.call_tool("files_read", {"path": "big.txt", "offset": 5000}))
    assert "".join(pieces) == text and 3 <= len(pieces) <= 4
    assert past["kind"] == "invalid_arguments"


async def test_reads_are_capped_by_max_read_bytes(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("big.txt", b"x" * 5000)
    async with connect(tmp_path, backend.with_files(max_read_bytes=2048)) as client:
        read = ok(await client.call_tool("files_read", {"path": "big.txt", "limit": 30000}))
    assert len(read["content"]) == 2048 and read["truncated"] is True and read["next_offset"] == 2048


async def test_missing_and_folder_reads_fail_clearly(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("folder/inside.txt", b"x")
    async with connect(tmp_path, backend.settings) as client:
        missing = failure(await client.call_tool("files_read", {"path": "nope.txt"}))
        folder = failure(await client.call_tool("files_read", {"path": "folder"}))
    assert missing["kind"] == "not_found" and "nope.txt" in missing["message"]
    assert folder["kind"] == "conflict" and "folder" in folder["message"]


async def test_creating_a_file_does_not_ask(tmp_path: Path, backend: FilesBackend) -> None:
    seen: list = []
    async with connect(tmp_path, backend.settings, elicit=None, seen=seen) as client:
        result = await client.call_tool("files_write", {"path": "new.txt", "content": "x"})
    ok(result)
    assert "Create new.txt" in text_of(result)


async def test_replacing_without_hash_asks_first(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("report.md", b"old text")
    seen: list = []
    async with connect(tmp_path, backend.settings, elicit="decline", seen=seen) as client:
        declined = failure(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
    assert declined["kind"] == "declined_by_user"
    assert backend.get("report.md") == b"old text"
    assert len(seen) == 1 and "Replace report.md (8 B) with 3 B of new text" in seen[0].message

    async with connect(tmp_path, backend.settings, elicit=None) as client:
        pending = failure(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
    assert pending["kind"] == "approval_required"
    assert backend.get("report.md") == b"old text"

    async with connect(tmp_path, backend.settings, elicit="accept") as client:
        replaced = ok(await client.call_tool("files_write", {"path": "report.md", "content": "new"}))
    assert replaced["created"] is False and backend.get("report.md") == b"new"


async def test_expected_sha256_replaces_without_asking_and_detects_conflicts(
    tmp_path: Path, backend: FilesBackend
) -> None:
    backend.put("notes.txt", b"v1")
    seen: list = []
    async with connect(tmp_path, backend.settings, elicit=None, seen=seen) as client:
        read = ok(await client.call_tool("files_read", {"path": "notes.txt"}))
        written = ok(
            await client.call_tool(
                "files_write", {"path": "notes.txt", "content": "v2", "expected_sha256": read["sha256"]}
            )
        )
        backend.put("notes.txt", b"v3 from someone else")
        stale = failure(
            await client.call_tool(
                "files_write", {"path": "notes.txt", "content": "v4", "expected_sha256": written["sha256"]}
            )
        )
        absent = failure(
            await client.call_tool(
                "files_write", {"path": "ghost.txt", "content": "v4", "expected_sha256": written["sha256"]}
            )
        )
    assert seen == []
    assert stale["kind"] == "conflict" and "changed since you read it" in stale["message"]
    assert backend.get("notes.txt") == b"v3 from someone else"
    assert absent["kind"] == "conflict" and backend.get("ghost.txt") is None


async def test_write_size_limit(tmp_path: Path, backend: FilesBackend) -> None:
    async with connect(tmp_path, backend.with_files(max_write_bytes=1024)) as client:
        too_big = failure(await client.call_tool("files_write", {"path": "big.txt", "content": "x" * 1025}))
        fits = ok(await client.call_tool("files_write", {"path": "ok.txt", "content": "x" * 1024}))
    backend.put("huge.txt", b"y" * 2048)
    async with connect(tmp_path, backend.with_files(max_write_bytes=1024)) as client:
        edit = failure(
            await client.call_tool(
                "files_edit", {"path": "huge.txt", "edits": [{"old_string": "y", "new_string": "z"}]}
            )
        )
    assert edit["kind"] == "too_large" and "edit limit of 1024 bytes" in edit["message"]
    assert too_big["kind"] == "too_large" and "1024" in too_big["message"]
    assert backend.get("big.txt") is None and fits["size"] == 1024


async def test_edit_returns_diff_and_new_hash(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("app.py", b"def main():\n    return 1\n")
    async with connect(tmp_path, backend.settings) as client:
        preview = ok(
            await client.call_tool(
                "files_edit",
                {"path": "app.py", "edits": [{"old_string": "return 1", "new_string": "return 2"}], "dry_run": True},
            )
        )
        assert backend.get("app.py") == b"def main():\n    return 1\n"
        edited = ok(
            await client.call_tool(
                "files_edit",
                {
                    "path": "app.py",
                    "edits": [{"old_string": "return 1", "new_string": "return 2"}],
                    "expected_sha256": preview["sha256"],
                },
            )
        )
        stale = failure(
            await client.call_tool(
                "files_edit",
                {
                    "path": "app.py",
                    "edits": [{"old_string": "return 2", "new_string": "return 3"}],
                    "expected_sha256": preview["sha256"],
                },
            )
        )
    new = b"def main():\n    return 2\n"
    assert preview["dry_run"] is True and preview["diff"] == edited["diff"]
    assert "-    return 1\n+    return 2\n" in edited["diff"]
    assert edited["sha256"] == sha(new) and edited["replacements"] == 1
    assert stale["kind"] == "conflict" and backend.get("app.py") == new


async def test_edit_errors_name_the_field(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("a.txt", b"x = 1\nx = 1\n")
    async with connect(tmp_path, backend.settings) as client:
        several = failure(
            await client.call_tool(
                "files_edit",
                {
                    "path": "a.txt",
                    "edits": [
                        {"old_string": "x", "new_string": "y", "replace_all": True},
                        {"old_string": "1", "new_string": "2"},
                    ],
                },
            )
        )
        missing_field = failure(await client.call_tool("files_edit", {"path": "a.txt", "edits": [{"new_string": "y"}]}))
        extra_field = failure(
            await client.call_tool(
                "files_edit", {"path": "a.txt", "edits": [{"old_string": "x", "new_string": "y", "regex": True}]}
            )
        )
    assert several["kind"] == "invalid_arguments"
    assert "edits[1].old_string matches 2 times (lines 1, 2)" in several["message"]
    assert backend.get("a.txt") == b"x = 1\nx = 1\n"
    assert missing_field["kind"] == "invalid_arguments" and "old_string" in missing_field["message"]
    assert extra_field["kind"] == "invalid_arguments" and "regex" in extra_field["message"]


async def test_list_folder_recursive_pattern_and_pages(tmp_path: Path, backend: FilesBackend) -> None:
    for index in range(7):
        backend.put(f"src/m{index}.py", b"pass\n")
    backend.put("src/pkg/deep.py", b"")
    backend.put("src/readme.md", b"# hi")
    backend.put("top.txt", b"t")
    async with connect(tmp_path, backend.settings) as client:
        root = ok(await client.call_tool("files_list", {}))
        flat = ok(await client.call_tool("files_list", {"path": "src"}))
        python = ok(await client.call_tool("files_list", {"path": "src", "recursive": True, "pattern": "*.py"}))
        deep = ok(await client.call_tool("files_list", {"recursive": True, "pattern": "src/**/deep.py"}))
        paged: list[str] = []
        cursor = None
        pages = 0
        while True:
            arguments = {"path": "src", "recursive": True, "limit": 3, **({"cursor": cursor} if cursor else {})}
            page = ok(await client.call_tool("files_list", arguments))
            paged += [entry["path"] for entry in page["entries"]]
            pages += 1
            cursor = page.get("next_cursor")
            if not cursor:
                break
        missing = failure(await client.call_tool("files_list", {"path": "nowhere"}))
        of_file = failure(await client.call_tool("files_list", {"path": "top.txt"}))
        bad_cursor = failure(await client.call_tool("files_list", {"cursor": "!!!"}))
    assert [(entry["path"], entry["type"]) for entry in root["entries"]] == [("src", "folder"), ("top.txt", "file")]
    assert [entry["path"] for entry in flat["entries"]] == [
        *(f"src/m{index}.py" for index in range(7)),
        "src/pkg",
        "src/readme.md",
    ]
    assert flat["entries"][0]["size"] == 5 and flat["entries"][0]["modified"].endswith("Z")
    assert [entry["path"] for entry in python["entries"]] == [
        *(f"src/m{index}.py" for index in range(7)),
        "src/pkg/deep.py",
    ]
    assert [entry["path"] for entry in deep["entries"]] == ["src/pkg/deep.py"]
    assert paged == [*(f"src/m{index}.py" for index in range(7)), "src/pkg", "src/pkg/deep.py", "src/readme.md"]
    assert pages == 4
    assert missing["kind"] == "not_found" and of_file["kind"] == "conflict"
    assert bad_cursor["kind"] == "invalid_arguments"


async def test_mkdir_is_idempotent_and_listed(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("file.txt", b"x")
    async with connect(tmp_path, backend.settings) as client:
        first = ok(await client.call_tool("files_mkdir", {"path": "empty/inner"}))
        again = ok(await client.call_tool("files_mkdir", {"path": "empty/inner"}))
        listing = ok(await client.call_tool("files_list", {"path": "empty"}))
        over_file = failure(await client.call_tool("files_mkdir", {"path": "file.txt"}))
    assert first["created"] is True and again["created"] is False
    assert listing["entries"][0]["path"] == "empty/inner" and listing["entries"][0]["type"] == "folder"
    assert over_file["kind"] == "conflict" and backend.get("file.txt") == b"x"


async def test_move_refuses_to_overwrite_unless_asked(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("a.txt", b"A")
    backend.put("b.txt", b"B")
    seen: list = []
    async with connect(tmp_path, backend.settings, seen=seen) as client:
        renamed = ok(await client.call_tool("files_move", {"source": "a.txt", "destination": "sub/c.txt"}))
        assert seen == []
        refused = failure(await client.call_tool("files_move", {"source": "sub/c.txt", "destination": "b.txt"}))
        assert backend.get("b.txt") == b"B"
        replaced = ok(
            await client.call_tool("files_move", {"source": "sub/c.txt", "destination": "b.txt", "overwrite": True})
        )
        missing = failure(await client.call_tool("files_move", {"source": "gone.txt", "destination": "x.txt"}))
    assert renamed == {"source": "a.txt", "destination": "sub/c.txt", "replaced": False}
    assert refused["kind"] == "conflict" and "overwrite" in refused.get("hint", "")
    assert replaced["replaced"] is True and backend.get("b.txt") == b"A" and backend.get("a.txt") is None
    assert len(seen) == 1 and "replacing the existing b.txt (1 B)" in seen[0].message
    assert missing["kind"] == "not_found"


async def test_move_a_folder(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("old/one.txt", b"1")
    backend.put("old/deep/two.txt", b"2")
    async with connect(tmp_path, backend.settings) as client:
        ok(await client.call_tool("files_move", {"source": "old", "destination": "new"}))
        into_itself = failure(await client.call_tool("files_move", {"source": "new", "destination": "new/inner"}))
    assert backend.get("new/one.txt") == b"1" and backend.get("new/deep/two.txt") == b"2"
    assert backend.get("old/one.txt") is None
    assert into_itself["kind"] == "invalid_arguments"


async def test_delete_file_and_folder(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("junk.txt", b"x")
    backend.put("build/a.o", b"a")
    backend.put("build/sub/b.o", b"b")
    seen: list = []
    async with connect(tmp_path, backend.settings, seen=seen) as client:
        removed = ok(await client.call_tool("files_delete", {"path": "junk.txt"}))
        folder_refused = failure(await client.call_tool("files_delete", {"path": "build"}))
        assert backend.get("build/a.o") == b"a"
        folder = ok(await client.call_tool("files_delete", {"path": "build", "recursive": True}))
        missing = failure(await client.call_tool("files_delete", {"path": "junk.txt"}))
        listing = ok(await client.call_tool("files_list", {"recursive": True}))
    assert removed == {"path": "junk.txt", "type": "file", "removed": 1}
    assert folder_refused["kind"] == "invalid_arguments" and "recursive" in folder_refused["hint"]
    assert folder["type"] == "folder" and folder["removed"] >= 2
    assert missing["kind"] == "not_found" and listing["entries"] == []
    assert backend.get("build/sub/b.o") is None
    # A delete that can run asks; one bound to fail (a folder without recursive, a missing path) does not.
    assert len(seen) == 2 and "Delete file junk.txt (1 B)" in seen[0].message
    assert "Delete folder build" in seen[1].message


async def test_delete_declined_keeps_the_file(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("keep.txt", b"precious")
    async with connect(tmp_path, backend.settings, elicit="decline") as client:
        declined = failure(await client.call_tool("files_delete", {"path": "keep.txt"}))
    assert declined["kind"] == "declined_by_user" and backend.get("keep.txt") == b"precious"


async def test_s3_errors_never_show_the_secret(tmp_path: Path, moto_endpoint: MotoEndpoint) -> None:
    wrong = s3_backend(moto_endpoint).with_files(bucket="no-such-bucket-here")
    async with connect(tmp_path, wrong) as client:
        result = await client.call_tool("files_read", {"path": "a.txt"})
        error = failure(result)
    assert error["kind"] in ("not_configured", "not_found", "upstream_error")
    assert S3_SECRET not in text_of(result) and S3_SECRET not in str(error)


def test_s3_credentials_from_environment(tmp_path: Path) -> None:
    env = Environment(
        data_dir=tmp_path,
        state_dir=tmp_path,
        env={"MCP_TOOLS_S3_ACCESS_KEY_ID": "id-from-env", "MCP_TOOLS_S3_SECRET_ACCESS_KEY": "secret-from-env"},
    )
    service = create(FilesConfig(backend="s3", bucket="b-bucket"), env)
    settings = service.store.settings  # type: ignore[attr-defined]
    assert settings.access_key_id == "id-from-env" and settings.secret_access_key == "secret-from-env"
    assert "secret-from-env" not in repr(settings)
    with pytest.raises(NotConfigured, match="access_key_id"):
        create(
            FilesConfig(backend="s3", bucket="b-bucket"),
            Environment(data_dir=tmp_path, state_dir=tmp_path, env={"MCP_TOOLS_S3_ACCESS_KEY_ID": "only-id"}),
        )


async def test_escalation_holds_when_write_is_configured_low(tmp_path: Path, local: FilesBackend) -> None:
    local.put("kept.txt", b"old")
    settings = {**local.settings, "policy": {"rules": [{"match": "files.write", "risk": "low"}]}}
    seen: list = []
    async with connect(tmp_path, settings, elicit="decline", seen=seen) as client:
        created = await client.call_tool("files_write", {"path": "new.txt", "content": "x"})
        replaced = failure(await client.call_tool("files_write", {"path": "kept.txt", "content": "new"}))
    ok(created)
    assert "Action performed" not in text_of(created)  # low: no notice, no question
    assert replaced["kind"] == "declined_by_user" and local.get("kept.txt") == b"old"
    assert len(seen) == 1


async def test_delete_lowered_to_medium_reports_exactly(tmp_path: Path, local: FilesBackend) -> None:
    local.put("tmp/a.txt", b"a")
    local.put("tmp/b.txt", b"b")
    local.put("one.txt", b"12345")
    local.put("solo/only.txt", b"o")
    settings = {**local.settings, "policy": {"rules": [{"match": "files.delete", "risk": "medium"}]}}
    async with connect(tmp_path, settings, elicit=None) as client:
        folder = await client.call_tool("files_delete", {"path": "tmp", "recursive": True})
        solo = await client.call_tool("files_delete", {"path": "solo", "recursive": True})
        single = await client.call_tool("files_delete", {"path": "one.txt"})
    ok(folder)
    ok(single)
    assert "Delete folder tmp and the 2 entries in it" in text_of(folder)
    assert "Delete folder solo and the 1 entry in it" in text_of(solo)
    assert "Delete file one.txt (5 B)" in text_of(single)


async def test_works_on_the_2026_protocol(tmp_path: Path, local: FilesBackend) -> None:
    local.put("doc.txt", b"old")
    async with connect(tmp_path, local.settings, mode="2026-07-28", elicit="accept") as client:
        read = ok(await client.call_tool("files_read", {"path": "doc.txt"}))
        replaced = ok(await client.call_tool("files_write", {"path": "doc.txt", "content": "new"}))
    assert read["content"] == "old" and replaced["created"] is False and local.get("doc.txt") == b"new"


async def test_parents_rules_on_write(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("plain.txt", b"x")
    async with connect(tmp_path, backend.settings) as client:
        no_parent = failure(
            await client.call_tool("files_write", {"path": "new/dir/a.txt", "content": "x", "create_parents": False})
        )
        under_file = failure(await client.call_tool("files_write", {"path": "plain.txt/a.txt", "content": "x"}))
        made = ok(await client.call_tool("files_write", {"path": "new/dir/a.txt", "content": "x"}))
        empty = ok(await client.call_tool("files_write", {"path": "new/empty.txt", "content": ""}))
        read_empty = ok(await client.call_tool("files_read", {"path": "new/empty.txt"}))
    assert no_parent["kind"] == "not_found" and "create_parents" in no_parent["hint"]
    assert under_file["kind"] == "conflict" and backend.get("plain.txt") == b"x"
    assert made["created"] is True and backend.get("new/dir/a.txt") == b"x"
    assert empty["size"] == 0 and read_empty["content"] == "" and read_empty["sha256"] == sha(b"")


async def test_recursive_delete_reports_progress(tmp_path: Path, backend: FilesBackend) -> None:
    for index in range(5):
        backend.put(f"batch/f{index}.txt", b"x")
    updates: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total))

    async with connect(tmp_path, backend.settings) as client:
        result = await client.call_tool(
            "files_delete", {"path": "batch", "recursive": True}, progress_callback=on_progress
        )
    removed = ok(result)["removed"]
    assert updates[0] == (0, None) and updates[-1] == (removed, removed)
    assert backend.get("batch/f0.txt") is None
