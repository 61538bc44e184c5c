"""files_import over the real MCP client: base64 uploads, and downloads from allowed hosts through
the same SSRF-safe fetch as http_request, against a local HTTP server."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.composition.app import build_app
from tests.harness import connect, failure, make_config, ok, text_of
from tests.servers.http_requests.fixtures import Recorder, fixed_resolver, local_server

pytestmark = pytest.mark.anyio
PUBLIC_SIDE = "127.0.0.2"


@pytest.fixture
def server() -> Iterator[tuple[int, Recorder]]:
    with local_server(PUBLIC_SIDE) as (httpd, recorder):
        yield httpd.server_address[1], recorder


def make_app(tmp_path: Path, **files: Any):
    values = {
        "import_hosts": ["docs.test"],
        "import_networks": [f"{PUBLIC_SIDE}/32"],
        "import_plain_http": True,
        **files,
    }
    app = build_app(make_config(tmp_path, {"server": {"servers": ["files"]}, "files": values}))
    app.services["files"].resolver = fixed_resolver({"docs.test": [PUBLIC_SIDE], "evil.test": ["127.0.0.1"]})
    return app


def stored(tmp_path: Path, key: str) -> Path:
    return tmp_path / "data" / "files" / key


async def test_base64_bytes_become_a_file(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    payload = bytes(range(256))
    async with connect(tmp_path, app=app) as client:
        result = await client.call_tool(
            "files_import", {"path": "in/blob.bin", "content_base64": base64.b64encode(payload).decode()}
        )
    data = ok(result)
    assert stored(tmp_path, "in/blob.bin").read_bytes() == payload
    assert data["created"] is True and data["size"] == 256 and data["content_type"] == "application/octet-stream"
    assert text_of(result).startswith("Action performed: Import")


async def test_a_url_from_an_allowed_host_is_downloaded(tmp_path: Path, server: tuple[int, Recorder]) -> None:
    port, recorder = server
    app = make_app(tmp_path)
    async with connect(tmp_path, app=app) as client:
        call = {"path": "doc.txt", "url": f"http://docs.test:{port}/file.txt"}
        data = ok(await client.call_tool("files_import", call))
    assert stored(tmp_path, "doc.txt").read_bytes() == b"imported text\n"
    assert data["content_type"] == "text/plain"
    assert recorder.requests[0]["headers"]["host"] == f"docs.test:{port}"


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("http://other.test/x", "not in the allowed hosts"),
        ("http://evil.test:{port}/file.txt", "loopback"),
        ("http://127.0.0.1:{port}/file.txt", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ],
)
async def test_hosts_outside_the_list_and_private_addresses_are_refused(tmp_path: Path, url: str, needle: str) -> None:
    with local_server("127.0.0.1") as (httpd, recorder):
        app = make_app(tmp_path, import_hosts=["docs.test"] if "other" in url else ["*"], import_networks=[])
        async with connect(tmp_path, app=app) as client:
            call = {"path": "x.txt", "url": url.format(port=httpd.server_address[1])}
            error = failure(await client.call_tool("files_import", call))
    assert error["kind"] == "denied_by_policy" and needle in error["message"]
    assert recorder.requests == [] and not stored(tmp_path, "x.txt").exists()


async def test_url_imports_are_off_without_import_hosts(tmp_path: Path) -> None:
    app = make_app(tmp_path, import_hosts=[])
    async with connect(tmp_path, app=app) as client:
        error = failure(await client.call_tool("files_import", {"path": "x.txt", "url": "https://example.org/x"}))
    assert error["kind"] == "denied_by_policy" and "content_base64" in (error.get("hint") or "")


async def test_replacing_a_file_without_its_hash_asks_first(tmp_path: Path, server: tuple[int, Recorder]) -> None:
    port, _ = server
    app = make_app(tmp_path)
    stored(tmp_path, "doc.txt").write_text("keep me")
    async with connect(tmp_path, app=app, elicit=None) as client:
        call = {"path": "doc.txt", "url": f"http://docs.test:{port}/file.txt"}
        error = failure(await client.call_tool("files_import", call))
    assert error["kind"] == "approval_required" and "replacing it (7 B)" in error["message"]
    assert stored(tmp_path, "doc.txt").read_text() == "keep me"


async def test_failed_and_oversize_downloads_write_nothing(tmp_path: Path, server: tuple[int, Recorder]) -> None:
    port, _ = server
    app = make_app(tmp_path, max_write_bytes=1024)
    async with connect(tmp_path, app=app) as client:
        big = {"path": "big.txt", "url": f"http://docs.test:{port}/big"}
        big = failure(await client.call_tool("files_import", big))
        redirect = failure(
            await client.call_tool(
                "files_import", {"path": "r.txt", "url": f"http://docs.test:{port}/redirect?to=http://127.0.0.1/"}
            )
        )
        both = {"path": "b.txt", "url": "http://docs.test/", "content_base64": "eA=="}
        both = failure(await client.call_tool("files_import", both))
    assert big["kind"] == "too_large" and redirect["kind"] == "denied_by_policy"
    assert both["kind"] == "invalid_arguments"
    assert not stored(tmp_path, "big.txt").exists() and not stored(tmp_path, "r.txt").exists()
