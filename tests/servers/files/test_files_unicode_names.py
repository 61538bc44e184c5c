"""Real file names: strict by default (and a listing says how to reach the rest), printable Unicode when asked."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.files.config import FilesConfig
from mcp_tools.servers.files.local import LocalBackend
from mcp_tools.servers.files.service import FilesService
from mcp_tools.util.sandbox import safe_name
from tests.harness import connect, failure, ok, text_of
from tests.servers.files import fixtures as files_fixtures
from tests.servers.files.fixtures import FilesBackend

pytestmark = pytest.mark.anyio
backend = files_fixtures.backend
local = files_fixtures.local
moto_endpoint = files_fixtures.moto_endpoint

REAL_NAMES = [
    "Tax return 2025.pdf",
    "Résumé.docx",
    "会议纪要.md",
    "Доклад (черновик) №2.txt",
    "❤️‍🔥 ideas.md",
    "What? #1 & 50% off+more=ok;.md",
]


def unicode_settings(backend: FilesBackend) -> dict:
    return backend.with_files(names="unicode")


async def test_a_strict_listing_says_how_to_reach_the_names_it_refuses(tmp_path: Path, backend: FilesBackend) -> None:
    for name in REAL_NAMES:
        backend.put(name, name.encode())
    backend.put("plain.txt", b"plain")
    backend.put("ascii/only.txt", b"x")
    async with connect(tmp_path, backend.settings) as client:
        root = await client.call_tool("files_list", {})
        plain_only = ok(await client.call_tool("files_list", {"path": "ascii"}))
        read = failure(await client.call_tool("files_read", {"path": "Tax return 2025.pdf"}))
        still_refused = failure(await client.call_tool("files_read", {"path": "a\u202egpj.exe"}))
    listed = ok(root)
    assert sorted(entry["path"] for entry in listed["entries"]) == sorted([*REAL_NAMES, "ascii", "plain.txt"])
    assert listed["note"].startswith(f"{len(REAL_NAMES)} of these names") and 'names = "unicode"' in listed["note"]
    assert 'names = "unicode"' in text_of(root)
    assert "note" not in plain_only  # absent, not null, when every name can be used
    assert read["kind"] == "invalid_arguments" and 'names = "unicode"' in read["hint"]
    assert 'names = "unicode"' not in str(still_refused)  # the mode would not help: no such hint


async def test_unicode_names_are_read_written_moved_and_deleted(tmp_path: Path, backend: FilesBackend) -> None:
    for name in REAL_NAMES:
        backend.put(name, name.encode())
    async with connect(tmp_path, unicode_settings(backend)) as client:
        listed = ok(await client.call_tool("files_list", {}))
        reads = [ok(await client.call_tool("files_read", {"path": name}))["content"] for name in REAL_NAMES]
        written = ok(
            await client.call_tool("files_write", {"path": "Réunions/Ordre du jour – 24 nov.md", "content": "€"})
        )
        read_back = ok(await client.call_tool("files_read", {"path": "Réunions/Ordre du jour – 24 nov.md"}))
        sha256 = ok(await client.call_tool("files_read", {"path": "Résumé.docx"}))["sha256"]
        edit = {"old_string": "Résumé", "new_string": "Lebenslauf"}
        edited = ok(
            await client.call_tool("files_edit", {"path": "Résumé.docx", "edits": [edit], "expected_sha256": sha256})
        )
        moved = ok(
            await client.call_tool(
                "files_move", {"source": "Tax return 2025.pdf", "destination": "Archiv/Steuer 2025 (final).pdf"}
            )
        )
        deleted = ok(await client.call_tool("files_delete", {"path": "会议纪要.md"}))
        after = ok(await client.call_tool("files_list", {"recursive": True}))
    assert "note" not in listed
    assert reads == REAL_NAMES
    assert written["created"] and read_back["content"] == "€"
    assert edited["replacements"] == 1 and backend.get("Résumé.docx") == b"Lebenslauf.docx"
    assert moved["destination"] == "Archiv/Steuer 2025 (final).pdf"
    assert backend.get("Archiv/Steuer 2025 (final).pdf") == b"Tax return 2025.pdf"
    assert deleted["removed"] == 1 and backend.get("会议纪要.md") is None
    paths = {entry["path"] for entry in after["entries"]}
    assert {"Archiv/Steuer 2025 (final).pdf", "Réunions/Ordre du jour – 24 nov.md", "❤️‍🔥 ideas.md"} <= paths
    assert "Tax return 2025.pdf" not in paths and "会议纪要.md" not in paths


async def test_nfc_and_nfd_names_are_two_files_each_reached_as_written(tmp_path: Path, backend: FilesBackend) -> None:
    composed = unicodedata.normalize("NFC", "Café.md")
    decomposed = unicodedata.normalize("NFD", "Café.md")
    backend.put(composed, b"composed")
    backend.put(decomposed, b"decomposed")
    async with connect(tmp_path, unicode_settings(backend)) as client:
        listed = ok(await client.call_tool("files_list", {}))
        nfc = ok(await client.call_tool("files_read", {"path": composed}))
        nfd = ok(await client.call_tool("files_read", {"path": decomposed}))
        ok(await client.call_tool("files_delete", {"path": decomposed}))
        left = ok(await client.call_tool("files_list", {}))
    assert sorted(entry["path"] for entry in listed["entries"]) == sorted([composed, decomposed])
    assert (nfc["content"], nfd["content"]) == ("composed", "decomposed")
    assert [entry["path"] for entry in left["entries"]] == [composed]
    assert backend.get(composed) == b"composed"


async def test_case_and_compatibility_forms_are_never_folded(tmp_path: Path, backend: FilesBackend) -> None:
    """'Résumé' and 'RÉSUMÉ', a Kelvin sign and a K, 'ﬁle' and 'file', 'report.' and 'report': each its own file."""
    names = ["Résumé.txt", "RÉSUMÉ.txt", "K.txt", "\u212a.txt", "\ufb01le.txt", "file.txt", "report.", "report"]
    async with connect(tmp_path, unicode_settings(backend)) as client:
        for name in names:
            ok(await client.call_tool("files_write", {"path": name, "content": name}))
        reads = [ok(await client.call_tool("files_read", {"path": name}))["content"] for name in names]
        listed = ok(await client.call_tool("files_list", {}))
    assert reads == names
    assert sorted(entry["path"] for entry in listed["entries"]) == sorted(names)


def test_outside_names_are_kept_as_far_as_each_rule_allows(tmp_path: Path) -> None:
    """An attachment's own name is kept as far as the store's rule allows; paths are checked by it."""

    def service(names: str) -> FilesService:
        config = FilesConfig(root=tmp_path / names, names=names)
        return FilesService(LocalBackend(tmp_path / names, names=config.names), config)

    assert FilesConfig().names == "strict"
    assert safe_name("Tax return 2025.pdf", fallback="attachment") == "Tax_return_2025.pdf"
    assert safe_name("Tax return 2025.pdf", "unicode") == "Tax return 2025.pdf"
    assert safe_name("..\\..\\Résumé “final”.docx", "unicode") == "Résumé “final”.docx"
    assert safe_name("\u202eevil\u200b.txt", "unicode") == "evil.txt"
    assert safe_name("\uff0e\uff0e", "unicode", fallback="attachment") == "attachment"
    with pytest.raises(ToolFailure):
        service("strict").check_path("Résumé.docx", "path")
    service("unicode").check_path("Résumé.docx", "path")


async def test_a_unicode_listing_names_what_no_mode_can_reach(tmp_path: Path, local: FilesBackend) -> None:
    assert local.root is not None
    (local.root / "invoice\u202efdp.exe").write_bytes(b"spoof")  # shows as 'invoiceexe.pdf'
    (local.root / "Résumé.docx").write_bytes(b"ok")
    async with connect(tmp_path, unicode_settings(local)) as client:
        listed = ok(await client.call_tool("files_list", {}))
        refused = failure(await client.call_tool("files_read", {"path": "invoice\u202efdp.exe"}))
    assert len(listed["entries"]) == 2
    assert listed["note"].startswith("1 of these names hold control, bidi or invisible characters")
    assert "rename them outside" in listed["note"] and 'names = "unicode"' not in listed["note"]
    assert refused["kind"] == "invalid_arguments" and "U+202E" in refused["message"]
