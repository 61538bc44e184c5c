"""Writing into what others own or can see asks first, and says with whom it is shared.

`drive.create`, `docs.append`, `sheets.write` and `drive.update` were medium risk whatever the
target: a file appended into a document shared with a whole domain, or created in a folder that
someone else owns, reached as many people as `drive.share` (high) without the person being asked.
The fake Drive answers `owners`, `ownedByMe`, `shared` and `permissions` as Drive does, for the
fields asked."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest

from tests.harness import connect, failure, ok
from tests.servers.docs.fixtures import docs_settings
from tests.servers.drive.fixtures import drive_settings
from tests.servers.fake_google import FakeDocs, FakeDrive, FakeGoogle, FakeSheets
from tests.servers.sheets.fixtures import sheets_settings

pytestmark = pytest.mark.anyio
DOMAIN_READERS = {"kind": "drive#permission", "id": "d1", "type": "domain", "role": "reader", "domain": "corp.example"}
BOB_WRITER = {"kind": "drive#permission", "id": "u1", "type": "user", "role": "writer", "emailAddress": "bob@x.example"}


async def test_creating_in_a_folder_shared_with_a_domain_asks_and_names_the_domain(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive
) -> None:
    shared = drive.folder("Team", permissions=[DOMAIN_READERS])
    private = drive.folder("Mine")
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, drive_settings(tmp_path, google), seen=seen) as client:
        ok(await client.call_tool("drive_create", {"name": "a.txt", "folder": private.id, "content": "x"}))
        assert seen == []  # the person's own unshared folder: medium, as before
        ok(await client.call_tool("drive_create", {"name": "b.txt", "folder": shared.id, "content": "x"}))
    assert len(seen) == 1 and "everyone at corp.example (reader)" in seen[0].message
    async with connect(tmp_path, drive_settings(tmp_path, google), elicit="decline") as client:
        declined = failure(await client.call_tool("drive_create", {"name": "c.txt", "folder": shared.id}))
    assert declined["kind"] == "declined_by_user"
    assert sorted(item.name for item in drive.files.values() if shared.id in item.parents) == ["b.txt"]


async def test_updating_a_file_another_owns_asks_and_names_the_owner(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive
) -> None:
    theirs = drive.add(
        "plan.txt", "v1", owners=["carol@x.example"], permissions=[{**BOB_WRITER, "emailAddress": google.account}]
    )
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, drive_settings(tmp_path, google), seen=seen) as client:
        ok(await client.call_tool("drive_update", {"id": theirs.id, "name": "plan2.txt"}))
    assert len(seen) == 1 and "its owner carol@x.example" in seen[0].message


async def test_appending_to_a_shared_document_asks_and_names_who_reads_it(
    tmp_path: Path, google: FakeGoogle, docs: FakeDocs
) -> None:
    mine, shared = docs.add("Private"), docs.add("Shared plan")
    google.drive_files[shared.id].permissions.append(BOB_WRITER)
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, docs_settings(tmp_path, google), seen=seen) as client:
        ok(await client.call_tool("docs_append", {"id": mine.id, "text": "quiet"}))
        assert seen == []
        ok(await client.call_tool("docs_append", {"id": shared.id, "text": "loud"}))
    assert len(seen) == 1 and "bob@x.example (writer)" in seen[0].message


async def test_writing_cells_of_a_spreadsheet_anyone_can_open_asks(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
) -> None:
    book = sheets.add("Budget")
    google.drive_files[book.id].permissions.append(
        {"kind": "drive#permission", "id": "a", "type": "anyone", "role": "reader"}
    )
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, sheets_settings(tmp_path, google), seen=seen) as client:
        ok(await client.call_tool("sheets_write", {"id": book.id, "range": "A1", "values": [["x"]]}))
    assert len(seen) == 1 and "anyone with the link (reader)" in seen[0].message


async def test_appending_rows_to_a_spreadsheet_another_owns_asks_and_a_private_one_does_not(
    tmp_path: Path, google: FakeGoogle, sheets: FakeSheets
) -> None:
    mine, theirs = sheets.add("Mine"), sheets.add("Theirs")
    entry = google.drive_files[theirs.id]
    entry.owners = ["carol@x.example"]
    entry.permissions.append({**BOB_WRITER, "emailAddress": google.account})
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, sheets_settings(tmp_path, google), seen=seen) as client:
        ok(await client.call_tool("sheets_append", {"id": mine.id, "values": [["x"]]}))
        assert seen == []
        ok(await client.call_tool("sheets_append", {"id": theirs.id, "values": [["x"]]}))
    assert len(seen) == 1 and "its owner carol@x.example" in seen[0].message


async def test_a_write_whose_sharing_drive_will_not_tell_asks(
    tmp_path: Path, google: FakeGoogle, docs: FakeDocs
) -> None:
    """Docs access "all" asks for the documents scope alone, which does not reach Drive's metadata:
    who can read the document is unknown, so the write asks (fail closed)."""
    from mcp_tools.servers.google import scopes

    stored = docs.add("Somewhere")
    seen: list[types.ElicitRequestParams] = []
    settings = docs_settings(tmp_path, google, granted=[scopes.DOCUMENTS], access="all")
    async with connect(tmp_path, settings, seen=seen) as client:
        ok(await client.call_tool("docs_append", {"id": stored.id, "text": "hello"}))
    assert len(seen) == 1 and "could not check" in seen[0].message
