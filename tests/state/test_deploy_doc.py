"""docs/deploy.md as written: its nginx site passes `nginx -t` and proxies over TLS to a replica
configured by its TOML, and an approval asked through it links the page's public address.

The test makes a throwaway certificate with openssl and changes only what names the reader's own
machines: the certificate paths, the replicas' addresses, the port nginx listens on and the
database URL. Everything else of the two blocks is used as the page shows it.
"""

from __future__ import annotations

import re
import ssl
import subprocess
import tomllib
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.harness import failure
from tests.nginx import NGINX, main_config, serve_nginx
from tests.processes import ROOT, bearer, demo_config, free_port, http_server
from tests.system_packages import apt_install
from tests.test_docs import fenced_blocks

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
DEPLOY = ROOT / "docs" / "deploy.md"
TOKEN = "deploy-doc-token-0123456789abcdefghijklmnop"
PUBLIC = "mcp.example.org"


def deploy_block(lang: str) -> str:
    [block] = [block for block in fenced_blocks(DEPLOY) if block.lang == lang and "mcp_tools" in block.text]
    return block.text


def replace_once(text: str, pattern: str, replacement: str) -> str:
    changed, count = re.subn(pattern, replacement, text, flags=re.M)
    assert count == 1, f"docs/deploy.md no longer has {pattern!r} once ({count})"
    return changed


def throwaway_certificate(folder: Path) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "fullchain.pem", folder / "privkey.pem"
    names = f"subjectAltName=DNS:{PUBLIC},IP:127.0.0.1"
    request = ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    subprocess.run(
        [*request, "-days", "1", "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={PUBLIC}", "-addext", names],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


def site(port: int, upstreams: list[str], cert: Path, key: Path) -> str:
    """The deploy page's nginx block, pointed at this machine's replicas, port and certificate."""
    text = deploy_block("nginx")
    servers = re.findall(r"^\s*server 10\.0\.0\.\d+:8765 (.*);$", text, flags=re.M)
    assert len(servers) == 2, "docs/deploy.md's upstream names two replicas"
    for address, options in zip(upstreams, servers, strict=True):
        text = re.sub(rf"^(\s*)server 10\.0\.0\.\d+:8765 {re.escape(options)};$", rf"\1server {address} {options};",
                      text, count=1, flags=re.M)  # fmt: skip
    text = replace_once(text, r"listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;")
    text = replace_once(text, r"ssl_certificate \S+;", f"ssl_certificate {cert};")
    return replace_once(text, r"ssl_certificate_key \S+;", f"ssl_certificate_key {key};")


@pytest.fixture
def nginx_binary() -> str:
    problem = apt_install("nginx", NGINX)
    if problem:
        pytest.skip(problem)
    return NGINX


def test_the_deploy_nginx_site_passes_nginx_t(tmp_path: Path, nginx_binary: str) -> None:
    cert, key = throwaway_certificate(tmp_path / "tls")
    conf = main_config(tmp_path / "nginx", site(free_port(), ["127.0.0.1:9", "127.0.0.1:10"], cert, key))
    checked = subprocess.run(
        [nginx_binary, "-t", "-c", str(conf), "-p", str(conf.parent)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stderr
    assert "test is successful" in checked.stderr


def replica_config(tmp_path: Path, name: str, url: str) -> Path:
    """The deploy page's TOML, with this test's database, plus the demo namespace and its own dirs."""
    text = replace_once(deploy_block("toml"), r'^url = "postgresql://[^"]+"$', f'url = "{url}"')
    assert tomllib.loads(text)["approvals"]["page"]["url"] == f"https://{PUBLIC}/approvals"
    (tmp_path / name).mkdir()
    return demo_config(tmp_path / name, "[approvals]\nwait_seconds = 0\n" + text)


@pytest.fixture
def behind_nginx(tmp_path: Path, postgres_url: str, nginx_binary: str) -> Iterator[tuple[str, Path]]:
    """A replica on the deploy page's config behind its nginx site (both upstream lines lead to
    it: which replica answers does not matter here); nginx's https URL and the CA file."""
    cert, key = throwaway_certificate(tmp_path / "tls")
    config = replica_config(tmp_path, "a", postgres_url)
    replica, port = free_port(), free_port()
    with ExitStack() as stack:
        stack.enter_context(http_server(config, port=replica, MCP_TOOLS_HTTP_TOKEN_LAPTOP=TOKEN))
        conf = main_config(tmp_path / "nginx", site(port, [f"127.0.0.1:{replica}"] * 2, cert, key))
        stack.enter_context(serve_nginx(conf, f"https://127.0.0.1:{port}", verify=str(cert)))
        yield f"https://127.0.0.1:{port}", cert


async def test_behind_nginx_the_approval_link_names_the_public_address(behind_nginx: tuple[str, Path]) -> None:
    base, cert = behind_nginx
    context = ssl.create_default_context(cafile=str(cert))
    headers = bearer(TOKEN, Host=PUBLIC)  # as a client that reached https://mcp.example.org sends it
    async with (
        httpx2.AsyncClient(headers=headers, verify=context, timeout=60) as http,
        Client(streamable_http_client(base + "/mcp", http_client=http), mode="2026-07-28") as mcp,  # type: ignore[arg-type]
    ):
        asked = failure(await mcp.call_tool("demo_erase", {"target": "behind nginx"}))
    assert asked["kind"] == "approval_required"
    link = f"https://{PUBLIC}/approvals/a/{asked['approval_id']}"
    assert link in asked["hint"] or link in asked["message"], asked
    assert "127.0.0.1" not in asked["hint"] + asked["message"]  # no replica's own address
