"""Resource URIs that try to leave the files root or the notes vault: every one is refused in
words, reads nothing outside, and the listing shows nothing a read would not reach."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from tests.harness import connect
from tests.resources.test_resources import listed

pytestmark = pytest.mark.anyio
SECRET = "top secret, outside the root"


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Any]:
    data = tmp_path / "data"
    root, sibling, outside, vault = data / "files", data / "files-evil", data / "outside", tmp_path / "vault"
    for folder in (root / "sub", sibling, outside, vault / ".obsidian", vault / "Projects"):
        folder.mkdir(parents=True)
    for secret in (sibling / "secret.txt", outside / "secret.txt", outside / "secret.md"):
        secret.write_text(SECRET, encoding="utf-8")
    (root / "inside.txt").write_text("inside\n", encoding="utf-8")
    (root / "link-out").symlink_to(outside)
    (root / "file-out").symlink_to(outside / "secret.txt")
    (root / "evil").symlink_to("../files-evil")
    (root / "sub" / "up").symlink_to("../..")
    (vault / "Home.md").write_text("# Home\n", encoding="utf-8")
    (vault / ".obsidian" / "workspace.md").write_text(SECRET, encoding="utf-8")
    (vault / "out.md").symlink_to(outside / "secret.md")
    (vault / "Projects" / "away").symlink_to(outside)
    settings = {
        "server": {"servers": ["files", "notes"]},
        "files": {"root": str(root)},
        "notes": {"vault": str(vault), "watch": False},
    }
    return {"settings": settings, "outside": outside}


ATTACKS = [
    "files:///../outside/secret.txt",
    "files:///..%2Foutside%2Fsecret.txt",
    "files:///%2E%2E/outside/secret.txt",
    "files:///sub/%2e%2e/%2e%2e/outside/secret.txt",
    "files:///file-out",
    "files:///link-out/secret.txt",
    "files:///evil/secret.txt",
    "files:///sub/up/outside/secret.txt",
    "files:////etc/passwd",
    "files:///%2Fetc%2Fpasswd",
    "files:///inside.txt%00.png",
    "files:///sub%5C..%5C..%5Coutside%5Csecret.txt",
    "files://outside/secret.txt",
    "files://..%2F..%2Foutside/secret.txt",
    "files:///inside.txt?raw=1",
    "files:///inside.txt#top",
    "files://user@host:99/inside.txt",
    "files:///%FF%FE",
    "file:///etc/passwd",
    "FILE:///../outside/secret.txt",
    "notes:///../outside/secret.md",
    "notes:///.obsidian/workspace.md",
    "notes:///out.md",
    "notes:///Projects/away/secret.md",
    "notes://..%2F..%2Fdata%2Foutside/secret.md",
    "notes:///%2E%2E%2Foutside%2Fsecret",
    "ui://mcp-tools/../../etc/passwd",
    "files:///" + "a/" * 3000,
]


async def test_every_escape_is_refused_and_reads_nothing_outside(tmp_path: Path, layout: dict[str, Any]) -> None:
    async with connect(tmp_path, layout["settings"]) as client:
        uris = {resource.uri for resource in await listed(client)}
        for uri in ATTACKS:
            with pytest.raises(MCPError) as refused:
                await client.read_resource(uri)
            error = refused.value.error
            assert error.code in (-32002, -32602), (uri, error)
            assert SECRET not in error.message and SECRET not in str(error.data), uri
            with pytest.raises(MCPError, match=r"no resource|invalid resource URI"):
                await client.subscribe_resource(uri)  # nothing outside is watched either
        inside = await client.read_resource("files:///inside.txt")
    assert uris == {"files:///inside.txt", "notes:///Home.md"}  # no link, no hidden folder
    assert inside.contents[0].text == "inside\n"  # type: ignore[union-attr]
