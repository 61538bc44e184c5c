"""gmail.send and gmail.draft given a contact's name: resolved through the People API (the fake)."""

from __future__ import annotations

import email
import email.policy
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from mcp_tools.servers.google import scopes
from tests.harness import connect, failure, ok
from tests.servers.fake_google import FakeGmail, FakeGoogle, FakePeople
from tests.servers.fake_google.people import person
from tests.servers.gmail.fixtures import ALL_SCOPES, sign_in

pytestmark = pytest.mark.anyio
CONTACTS = [scopes.CONTACTS_READONLY, scopes.CONTACTS_OTHER_READONLY, scopes.DIRECTORY_READONLY]


def settings(tmp_path: Path, google: FakeGoogle, contacts: bool = True, **gmail: Any) -> dict[str, Any]:
    granted = ALL_SCOPES + CONTACTS if contacts else ALL_SCOPES
    servers = ["gmail", "files", "contacts"] if contacts else ["gmail", "files"]
    return sign_in(tmp_path, google, granted=granted, gmail=gmail, servers=servers)


@pytest.fixture
def people(google: FakeGoogle) -> FakePeople:
    fake = FakePeople(google)
    fake.contacts.append(person("Ada Lovelace", ["ada@example.org"]))
    fake.contacts.append(person("Ada Lovelace-King", ["countess@example.org"]))
    fake.contacts.append(person("Bob Stone", ["bob@example.org", "bob@home.example"]))
    fake.contacts.append(person("Eve Outsider", ["eve@evil.test"]))
    fake.other.append(person("Grace Hopper", ["grace@example.net"]))
    fake.directory.append(person("Ann Lee", ["ann@corp.example"]))
    fake.directory.append(person("Anna Berg", ["anna@corp.example"]))
    return fake


def headers(gmail: FakeGmail, message_id: str) -> email.message.EmailMessage:
    return email.message_from_bytes(gmail.messages[message_id].raw, policy=email.policy.default)


async def test_a_name_goes_to_its_one_address_and_the_confirmation_says_so(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, people: FakePeople
) -> None:
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, settings(tmp_path, google), seen=seen) as client:
        sent = ok(await client.call_tool("gmail_send", {"to": ["Ada Lovelace"], "cc": ["grace"], "body": "hi"}))
    [asked] = seen
    assert "To: Ada Lovelace <ada@example.org>" in asked.message
    assert "Cc: Grace Hopper <grace@example.net>" in asked.message  # other contacts count too
    assert "'Ada Lovelace' is Ada Lovelace <ada@example.org> (from contacts)" in asked.message
    assert sorted(sent["recipients"]) == ["ada@example.org", "grace@example.net"]
    message = headers(gmail, sent["message_id"])
    assert message["To"] == "Ada Lovelace <ada@example.org>" and message["Cc"] == "Grace Hopper <grace@example.net>"
    assert ("people.people.searchContacts", "Ada Lovelace") in people.queries


async def test_an_ambiguous_name_lists_the_candidates_and_nobody_is_asked(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, people: FakePeople
) -> None:
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, settings(tmp_path, google), seen=seen) as client:
        several = failure(await client.call_tool("gmail_send", {"to": ["Ada"], "body": "hi"}))
        two_addresses = failure(await client.call_tool("gmail_send", {"to": ["Bob Stone"], "body": "hi"}))
        directory = failure(await client.call_tool("gmail_draft", {"to": ["ann"], "body": "hi"}))
    assert several["kind"] == two_addresses["kind"] == directory["kind"] == "invalid_arguments"
    assert "Ada Lovelace <ada@example.org>" in several["message"]
    assert "Ada Lovelace-King <countess@example.org>" in several["message"]
    assert "bob@example.org" in two_addresses["message"] and "bob@home.example" in two_addresses["message"]
    assert "ann@corp.example" in directory["message"] and "anna@corp.example" in directory["message"]
    assert seen == [] and gmail.messages == {} and gmail.drafts == {}


async def test_a_name_nobody_has_is_an_error(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, people: FakePeople
) -> None:
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, settings(tmp_path, google), seen=seen) as client:
        error = failure(await client.call_tool("gmail_send", {"to": ["Zed Nobody"], "body": "hi"}))
        draft_error = failure(await client.call_tool("gmail_draft", {"bcc": ["Zed Nobody"], "body": "hi"}))
    assert error["kind"] == draft_error["kind"] == "not_found"
    assert "no contact" in error["message"] and "Zed Nobody" in error["message"]
    assert seen == [] and gmail.messages == {}


async def test_the_allowlist_applies_to_the_resolved_address(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, people: FakePeople
) -> None:
    seen: list[types.ElicitRequestParams] = []
    config = settings(tmp_path, google, allowed_recipients=["*@example.org"])
    async with connect(tmp_path, config, seen=seen) as client:
        error = failure(await client.call_tool("gmail_send", {"to": ["Eve Outsider"], "body": "hi"}))
        allowed = ok(await client.call_tool("gmail_send", {"to": ["Ada Lovelace"], "body": "hi"}))
    assert error["kind"] == "denied_by_policy" and "eve@evil.test" in error["message"]
    assert len(seen) == 1 and allowed["recipients"] == ["ada@example.org"]
    assert google.calls.count("gmail.users.messages.send") == 1


async def test_a_draft_to_a_name_holds_the_resolved_address(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, people: FakePeople
) -> None:
    async with connect(tmp_path, settings(tmp_path, google)) as client:
        made = ok(await client.call_tool("gmail_draft", {"to": ["ada lovelace", "bob@example.org"], "body": "hi"}))
    assert made["to"] == ["Ada Lovelace <ada@example.org>", "bob@example.org"]
    assert headers(gmail, made["message_id"])["To"] == "Ada Lovelace <ada@example.org>, bob@example.org"


async def test_without_the_contacts_scopes_a_name_is_refused(
    tmp_path: Path, google: FakeGoogle, gmail: FakeGmail, people: FakePeople
) -> None:
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, settings(tmp_path, google, contacts=False), seen=seen) as client:
        error = failure(await client.call_tool("gmail_send", {"to": ["Ada Lovelace"], "body": "hi"}))
        draft_error = failure(await client.call_tool("gmail_draft", {"to": ["Ada Lovelace"], "body": "hi"}))
        odd = failure(await client.call_tool("gmail_send", {"to": ["Ada, Bob"], "body": "hi"}))
    assert error["kind"] == draft_error["kind"] == odd["kind"] == "invalid_arguments"
    assert "[contacts]" in error["hint"] and "address" in error["hint"]
    assert people.queries == [] and seen == [] and gmail.messages == {} and gmail.drafts == {}
