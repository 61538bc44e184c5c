"""Attacks on the Google namespaces' way into the files store: every read and write goes through the gate.

drive.read `save_to` and gmail.attachment `save` store with files.write, gmail.draft and
gmail.send read `attachments` with files.read, each as the caller: an overwrite asks, the
policy's `read_only` and `disabled` refuse, and the audit log has the files row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from mcp_tools.composition.app import App, build_app
from tests.harness import connect, failure, make_config, ok, text_of
from tests.servers.drive.fixtures import drive_settings
from tests.servers.fake_google import FakeDrive, FakeGmail, FakeGoogle
from tests.servers.gmail.fixtures import PNG, nested_with_attachments, sign_in

pytestmark = pytest.mark.anyio


def stored(tmp_path: Path, path: str) -> Path:
    return tmp_path / "data" / "files" / path


def put(tmp_path: Path, path: str, data: bytes) -> None:
    stored(tmp_path, path).parent.mkdir(parents=True, exist_ok=True)
    stored(tmp_path, path).write_bytes(data)


def app_for(tmp_path: Path, settings: dict[str, Any], **policy: Any) -> App:
    return build_app(make_config(tmp_path, {**settings, "policy": policy}))


async def chart_index(client: Any, message_id: str) -> int:
    listed = ok(await client.call_tool("gmail_read", {"id": message_id}))["messages"][0]["attachments"]
    return next(item["index"] for item in listed if item["filename"] == "chart.png")


# --- drive.read save_to ------------------------------------------------------------------------


async def test_attack_drive_save_to_does_not_replace_a_stored_file_without_the_persons_yes(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive
):
    put(tmp_path, "contracts/signed.pdf", b"the signed contract")
    planted = drive.add("invoice.pdf", b"%PDF attacker's file", "application/pdf")
    seen: list[types.ElicitRequestParams] = []
    app = app_for(tmp_path, drive_settings(tmp_path, google))
    async with connect(tmp_path, app=app, elicit="decline", seen=seen) as client:
        declined = failure(await client.call_tool("drive_read", {"id": planted.id, "save_to": "contracts/signed.pdf"}))
    assert declined["kind"] == "declined_by_user"
    assert stored(tmp_path, "contracts/signed.pdf").read_bytes() == b"the signed contract"
    [asked] = seen
    assert "files.write" in asked.message and "Replace contracts/signed.pdf" in asked.message
    write, read = app.store.tail(2)
    assert (write.tool, write.decision, write.args["path"]) == ("files.write", "declined", "contracts/signed.pdf")
    assert (read.tool, read.principal) == ("drive.read", write.principal)


async def test_drive_save_to_replaces_after_the_person_confirms_and_audits_the_write(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive
):
    put(tmp_path, "videos/clip.mp4", b"old")
    clip = drive.add("clip.mp4", b"\x00new clip", "video/mp4")
    app = app_for(tmp_path, drive_settings(tmp_path, google))
    async with connect(tmp_path, app=app, elicit="accept") as client:
        saved = ok(await client.call_tool("drive_read", {"id": clip.id, "save_to": "videos/clip.mp4"}))
        created = await client.call_tool("drive_read", {"id": clip.id, "save_to": "videos/copy.mp4"})
    fresh = ok(created)
    assert saved["encoding"] == fresh["encoding"] == "saved"
    assert text_of(created).startswith("Action performed: Create videos/copy.mp4")  # as files.write reports it
    assert stored(tmp_path, "videos/clip.mp4").read_bytes() == stored(tmp_path, "videos/copy.mp4").read_bytes()
    assert stored(tmp_path, "videos/copy.mp4").read_bytes() == b"\x00new clip"
    rows = [(row.tool, row.decision, row.args.get("path")) for row in app.store.tail(4)]
    assert rows == [
        ("files.write", "confirmed", "videos/clip.mp4"),
        ("drive.read", "ran", None),
        ("files.write", "ran", "videos/copy.mp4"),
        ("drive.read", "ran", None),
    ]


@pytest.mark.parametrize("policy", [{"read_only": True}, {"disabled": ["files.write"]}])
async def test_attack_drive_save_to_under_a_policy_that_hides_files_write_is_refused_and_not_offered(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive, policy: dict[str, Any]
):
    item = drive.add("notes.txt", "from drive")
    app = app_for(tmp_path, drive_settings(tmp_path, google), **policy)
    async with connect(tmp_path, app=app) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        refused = failure(await client.call_tool("drive_read", {"id": item.id, "save_to": "notes.txt"}))
        before_reading = list(google.calls)
        read = ok(await client.call_tool("drive_read", {"id": item.id}))
    assert refused["kind"] == "denied_by_policy"
    assert "save_to" in refused["message"] and "files.write" in refused["message"]
    assert not stored(tmp_path, "notes.txt").exists()
    assert "drive_read" in listed and "save_to" not in listed["drive_read"].input_schema["properties"]
    assert read["content"] == "from drive"
    assert before_reading == [] and "drive.files.get" in google.calls  # refused before anything was downloaded


async def test_a_save_larger_than_the_files_write_limit_is_refused_with_the_setting_to_raise(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive
):
    video = drive.add("video.mp4", b"\x00" * 5000, "video/mp4")
    settings = {**drive_settings(tmp_path, google), "files": {"max_write_bytes": 4096}}
    async with connect(tmp_path, settings) as client:
        refused = failure(await client.call_tool("drive_read", {"id": video.id, "save_to": "video.mp4"}))
    assert refused["kind"] == "too_large" and "files.write" in refused["message"]
    assert "max_write_bytes" in refused["hint"] and not stored(tmp_path, "video.mp4").exists()


# --- gmail.attachment save ---------------------------------------------------------------------


async def test_attack_gmail_attachment_save_does_not_replace_a_stored_file_without_the_persons_yes(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail
):
    message = gmail.add(nested_with_attachments())
    target = f"gmail-attachments/{message.id}/chart.png"
    put(tmp_path, target, b"the person's edited chart")
    seen: list[types.ElicitRequestParams] = []
    app = app_for(tmp_path, sign_in(tmp_path, google))
    async with connect(tmp_path, app=app, elicit="decline", seen=seen) as client:
        index = await chart_index(client, message.id)
        declined = failure(
            await client.call_tool("gmail_attachment", {"message_id": message.id, "index": index, "save": True})
        )
    assert declined["kind"] == "declined_by_user"
    assert stored(tmp_path, target).read_bytes() == b"the person's edited chart"
    [asked] = seen
    assert "files.write" in asked.message and f"Replace {target}" in asked.message
    assert [row.tool for row in app.store.tail(2)] == ["files.write", "gmail.attachment"]


async def test_gmail_attachment_save_of_a_new_file_is_audited_as_files_write(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail
):
    message = gmail.add(nested_with_attachments())
    app = app_for(tmp_path, sign_in(tmp_path, google))
    async with connect(tmp_path, app=app, elicit=None) as client:
        index = await chart_index(client, message.id)
        saved = ok(await client.call_tool("gmail_attachment", {"message_id": message.id, "index": index, "save": True}))
    assert stored(tmp_path, saved["saved_path"]).read_bytes() == PNG
    write, attachment = app.store.tail(2)
    assert (write.tool, write.decision, write.outcome, write.args["path"]) == (
        "files.write",
        "ran",
        "ok",
        saved["saved_path"],
    )
    assert attachment.tool == "gmail.attachment" and attachment.principal == write.principal


@pytest.mark.parametrize("policy", [{"read_only": True}, {"disabled": ["files.*"]}])
async def test_attack_gmail_attachment_save_under_a_policy_that_hides_files_write_is_refused(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, policy: dict[str, Any]
):
    message = gmail.add(nested_with_attachments())
    app = app_for(tmp_path, sign_in(tmp_path, google), **policy)
    async with connect(tmp_path, app=app) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        index = await chart_index(client, message.id)
        refused = failure(
            await client.call_tool("gmail_attachment", {"message_id": message.id, "index": index, "save": True})
        )
        plain = ok(await client.call_tool("gmail_attachment", {"message_id": message.id, "index": index}))
    assert refused["kind"] == "denied_by_policy" and "save" in refused["message"]
    assert not (tmp_path / "data" / "files" / "gmail-attachments").exists()
    assert "save" not in listed["gmail_attachment"].input_schema["properties"]
    assert plain["encoding"] == "image"  # a small image is still shown, without the files store


# --- gmail attachments from the files store ----------------------------------------------------


@pytest.mark.parametrize("tool", ["gmail_send", "gmail_draft"])
async def test_attack_a_disabled_files_read_cannot_be_bypassed_by_attaching_the_file_to_a_mail(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, tool: str
):
    put(tmp_path, "private/passwords.txt", b"hunter2")
    seen: list[types.ElicitRequestParams] = []
    app = app_for(tmp_path, sign_in(tmp_path, google), disabled=["files.read"])
    async with connect(tmp_path, app=app, elicit="accept", seen=seen) as client:
        refused = failure(
            await client.call_tool(tool, {"to": ["eve@example.org"], "attachments": ["private/passwords.txt"]})
        )
    assert refused["kind"] == "denied_by_policy"
    assert "attachments" in refused["message"] and "files.read" in refused["message"]
    assert gmail.messages == {} and seen == []


async def test_attachments_are_read_through_files_read_and_audited(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail
):
    payload = bytes(range(256)) * 9000  # about 2.2 MB: three windows of files.read
    put(tmp_path, "reports/q3.bin", payload)
    app = app_for(tmp_path, sign_in(tmp_path, google))
    async with connect(tmp_path, app=app, elicit="accept") as client:
        sent = ok(await client.call_tool("gmail_send", {"to": ["bob@example.org"], "attachments": ["reports/q3.bin"]}))
    [attached] = _attachments(gmail, sent["message_id"])
    assert attached == payload
    rows = [(row.tool, row.args.get("path"), row.args.get("offset")) for row in app.store.tail(4)]
    assert rows == [
        ("files.read", "reports/q3.bin", 0),
        ("files.read", "reports/q3.bin", 1024 * 1024),
        ("files.read", "reports/q3.bin", 2 * 1024 * 1024),
        ("gmail.send", None, None),
    ]


def _attachments(gmail: FakeGmail, message_id: str) -> list[bytes]:
    import email
    import email.policy

    message = email.message_from_bytes(gmail.messages[message_id].raw, policy=email.policy.default)
    contents = [part.get_content() for part in message.iter_attachments()]
    return [content.encode() if isinstance(content, str) else content for content in contents]


async def test_an_attachment_holding_a_known_secret_is_mailed_byte_for_byte_and_never_shown(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail
):
    from mcp_tools.util.secrets import known_secrets

    secret = "sk-live-" + "7Qm2Zr9Xw4Lp8Vt3Kd6Hj1Nb"
    known_secrets.add(secret)
    put(tmp_path, "backup/settings.env", f"API_KEY={secret}\n".encode())
    app = app_for(tmp_path, sign_in(tmp_path, google))
    async with connect(tmp_path, app=app) as client:
        made = await client.call_tool("gmail_draft", {"to": ["me@example.com"], "attachments": ["backup/settings.env"]})
    [attached] = _attachments(gmail, ok(made)["message_id"])
    assert attached == f"API_KEY={secret}\n".encode()  # the scrubber guards what leaves for the client, not the data
    assert secret not in str(made.content) and secret not in str([row.args for row in app.store.tail(5)])
