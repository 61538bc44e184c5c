"""contacts.search over the real MCP client, against the fake People API (validated requests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.servers.google import scopes
from tests.harness import connect, failure, ok
from tests.servers.fake_google import FakeGoogle, FakePeople
from tests.servers.fake_google.people import person
from tests.servers.gmail.fixtures import sign_in

pytestmark = pytest.mark.anyio
READ = [scopes.CONTACTS_READONLY, scopes.CONTACTS_OTHER_READONLY, scopes.DIRECTORY_READONLY]


def settings(tmp_path: Path, google: FakeGoogle, granted: list[str] | None = None, **section: Any) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    base = sign_in(tmp_path, google, granted=READ if granted is None else granted, servers=["contacts"])
    return {**base, "contacts": section}


@pytest.fixture
def people(google: FakeGoogle) -> FakePeople:
    fake = FakePeople(google)
    fake.contacts.append(person("Ann Lee", ["ann@example.org"], ["+49 30 1234"], "Acme"))
    fake.contacts.append(person("Bob Stone", ["bob@example.org", "bob@home.example"]))
    fake.other.append(person("Annika Other", ["annika@example.net"]))
    fake.directory.append(person("Anne Colleague", ["anne@corp.example"], organization="Corp"))
    fake.directory.append(person("Ann Lee", ["ann@example.org"]))  # also a contact: listed once
    return fake


async def test_search_finds_contacts_other_contacts_and_the_directory(tmp_path, google, people: FakePeople) -> None:
    async with connect(tmp_path, settings(tmp_path, google), elicit=None) as client:
        found = ok(await client.call_tool("contacts_search", {"query": "ann"}))
    assert found["contacts"] == [
        {"name": "Ann Lee", "emails": ["ann@example.org"], "phones": ["+49 30 1234"], "organization": "Acme"},
        {"name": "Annika Other", "emails": ["annika@example.net"], "phones": [], "organization": None},
        {"name": "Anne Colleague", "emails": ["anne@corp.example"], "phones": [], "organization": "Corp"},
    ]
    text = json.dumps(found)
    assert "private notes" not in text and "Secret title" not in text and "1980" not in text
    # each cache warmed once with an empty query before the first search
    assert people.queries[:2] == [("people.people.searchContacts", ""), ("people.otherContacts.search", "")]


async def test_the_warm_up_happens_once_and_phones_are_found(tmp_path, google, people: FakePeople) -> None:
    async with connect(tmp_path, settings(tmp_path, google), elicit=None) as client:
        by_phone = ok(await client.call_tool("contacts_search", {"query": "+49 30"}))
        ok(await client.call_tool("contacts_search", {"query": "bob"}))
    assert [item["name"] for item in by_phone["contacts"]] == ["Ann Lee"]
    assert [query for _, query in people.queries].count("") == 2


async def test_without_workspace_the_directory_is_skipped_and_can_be_switched_off(tmp_path, google, people) -> None:
    people.workspace = False
    async with connect(tmp_path, settings(tmp_path, google), elicit=None) as client:
        found = ok(await client.call_tool("contacts_search", {"query": "ann", "limit": 1}))
    assert [item["name"] for item in found["contacts"]] == ["Ann Lee"]
    async with connect(tmp_path / "off", settings(tmp_path / "off", google, directory=False), elicit=None) as client:
        ok(await client.call_tool("contacts_search", {"query": "anne"}))
    assert ("people.people.searchDirectoryPeople", "anne") not in people.queries


async def test_missing_scopes_say_what_to_grant(tmp_path, google, people) -> None:
    granted = [scopes.CONTACTS_READONLY]
    async with connect(tmp_path, settings(tmp_path, google, granted), elicit=None) as client:
        error = failure(await client.call_tool("contacts_search", {"query": "ann"}))
    assert error["kind"] == "not_configured"
    assert set(error["missing_scopes"]) == {"contacts.other.readonly", "directory.readonly"}


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("v1/people:searchContacts?query=a", "readMask"),
        ("v1/otherContacts:search?query=a&readMask=names,organizations", "organizations"),
        ("v1/people:searchContacts?query=a&readMask=names&pageSize=31", "pageSize"),
        ("v1/people:searchDirectoryPeople?query=a&readMask=names", "sources"),
    ],
)
def test_the_fake_refuses_what_google_refuses(google: FakeGoogle, people: FakePeople, path: str, words: str) -> None:
    from tests.servers.fake_google.test_fake_google import call

    token, _ = google.issue(READ)
    status, answer = call(google, token, "GET", path)
    assert status == 400 and words in json.dumps(answer)


def test_the_fake_finds_nothing_before_the_cache_is_warmed(google: FakeGoogle, people: FakePeople) -> None:
    from tests.servers.fake_google.test_fake_google import call

    token, _ = google.issue(READ)
    cold = call(google, token, "GET", "v1/people:searchContacts?query=ann&readMask=names")
    call(google, token, "GET", "v1/people:searchContacts?query=&readMask=names")
    warm = call(google, token, "GET", "v1/people:searchContacts?query=ann&readMask=names")
    assert cold == (200, {}) and len(warm[1]["results"]) == 1


async def test_thirty_outsized_contacts_fit_the_result_budget(tmp_path, google, people: FakePeople) -> None:
    from tests.budgets import assert_fits

    people.contacts.clear(), people.other.clear(), people.directory.clear()
    for n in range(40):
        emails = [f"ann{n}.{k}{'x' * 100}@example.org" for k in range(20)] + [f"{'y' * 300}@example.org"]
        people.contacts.append(person("Ann " + "N" * 5000, emails, ["+1 555 0100"] * 20, "O" * 5000))
    async with connect(tmp_path, settings(tmp_path, google), elicit=None) as client:
        result = await client.call_tool("contacts_search", {"query": "ann", "limit": 30})
    assert_fits(result)
    found = ok(result)["contacts"]
    assert len(found) == 30 and all(len(item["emails"]) == 5 and len(item["name"]) == 120 for item in found)


@pytest.mark.parametrize(("sections", "asked"), [("", []), ("[contacts]\n", sorted(READ))])
def test_sign_in_asks_the_contacts_scopes_only_when_the_namespace_is_on(
    tmp_path: Path, sections: str, asked: list[str]
) -> None:
    from mcp_tools.cli.google import enabled_tools
    from mcp_tools.core.config import load_config

    config_file = tmp_path / "config.toml"
    config_file.write_text(f"[gmail]\n\n{sections}")
    names = enabled_tools(load_config(config_file, {}))
    wanted = scopes.requested_scopes(names)
    assert [scope for scope in wanted if "contacts" in scope or "directory" in scope] == asked
