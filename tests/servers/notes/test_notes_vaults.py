"""Several vaults through a real MCP client: each keeps its own index, links and search."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tests.harness import connect, failure, ok, text_of
from tests.servers.notes.fixtures import notes_settings, vaults_settings, wait_for, write_vault

pytestmark = pytest.mark.anyio

HOME = {"Home.md": "# Home\n\nThe orchard grows pears. See [[Shared]].\n", "Shared.md": "# Shared\n\nHome side.\n"}
WORK = {"Plan.md": "# Plan\n\nThe quarterly budget review. See [[Shared]].\n", "Shared.md": "# Shared\n\nWork side.\n"}


@pytest.fixture
def vaults(tmp_path: Path) -> tuple[Path, Path]:
    return write_vault(tmp_path / "home", HOME), write_vault(tmp_path / "work", WORK)


async def indexed(client: Any, vault: str | None = None) -> None:
    async def complete() -> bool:
        arguments = {"query": "anything"} | ({"vault": vault} if vault else {})
        return bool(ok(await client.call_tool("notes_search", arguments))["index"]["complete"])

    await wait_for(complete)


async def test_each_vault_searches_reads_and_links_only_its_own_notes(
    tmp_path: Path, vaults: tuple[Path, Path]
) -> None:
    home, work = vaults
    async with connect(tmp_path, vaults_settings(home, work=work)) as client:
        await indexed(client)
        await indexed(client, "work")
        in_work = ok(await client.call_tool("notes_search", {"query": "budget", "vault": "work"}))
        work_for_pears = ok(await client.call_tool("notes_search", {"query": "pears", "vault": "work"}))
        in_home = ok(await client.call_tool("notes_search", {"query": "pears"}))
        home_for_budget = ok(await client.call_tool("notes_search", {"query": "budget"}))
        work_links = ok(await client.call_tool("notes_backlinks", {"path": "Shared", "vault": "work"}))
        home_links = ok(await client.call_tool("notes_backlinks", {"path": "Shared"}))
        read_result = await client.call_tool("notes_read", {"path": "Shared", "vault": "work"})
        read = ok(read_result)
        default_read = ok(await client.call_tool("notes_read", {"path": "Shared"}))
    assert [hit["path"] for hit in in_work["results"]] == ["Plan.md"] and in_work["vault"] == "work"
    assert work_for_pears["results"] == [] and home_for_budget["results"] == []
    assert [hit["path"] for hit in in_home["results"]] == ["Home.md"] and in_home["vault"] == "default"
    assert [link["source"] for link in work_links["backlinks"]] == ["Plan.md"] and work_links["vault"] == "work"
    assert [link["source"] for link in home_links["backlinks"]] == ["Home.md"]
    assert "Work side" in read["content"] and "Home side" in default_read["content"]
    assert read["vault"] == "work" and default_read["vault"] == "default"
    assert text_of(read_result).startswith("vault work: Shared.md")


async def test_the_person_asked_sees_the_vault(tmp_path: Path, vaults: tuple[Path, Path]) -> None:
    home, work = vaults
    seen: list[types.ElicitRequestParams] = []
    settings = vaults_settings(home, work=work)
    settings["policy"] = {"rules": [{"match": "notes.edit", "risk": "high"}]}
    async with connect(tmp_path, settings, elicit="accept", seen=seen) as client:
        ok(await client.call_tool("notes_edit", {"path": "Plan", "action": "append", "content": "x", "vault": "work"}))
    assert len(seen) == 1 and "append 1 character to note Plan in vault 'work'" in seen[0].message
    assert (work / "Plan.md").read_text().endswith("x\n") and "Plan.md" not in {p.name for p in home.iterdir()}


async def test_write_edit_and_rename_stay_in_the_named_vault(tmp_path: Path, vaults: tuple[Path, Path]) -> None:
    home, work = vaults
    async with connect(tmp_path, vaults_settings(home, work=work)) as client:
        await indexed(client, "work")
        written = ok(await client.call_tool("notes_write", {"path": "New", "content": "# New\n", "vault": "work"}))
        edited = ok(
            await client.call_tool(
                "notes_edit", {"path": "New", "action": "append", "content": "more words", "vault": "work"}
            )
        )
        renamed = ok(await client.call_tool("notes_rename", {"path": "Shared", "new_path": "Common", "vault": "work"}))
        found = ok(await client.call_tool("notes_search", {"query": "more words", "vault": "work"}))
    assert written["vault"] == edited["vault"] == renamed["vault"] == "work"
    assert (work / "New.md").read_text() == "# New\nmore words\n" and not (home / "New.md").exists()
    assert [hit["path"] for hit in found["results"]] == ["New.md"]
    assert (work / "Common.md").exists() and "[[Common]]" in (work / "Plan.md").read_text()
    assert (home / "Shared.md").exists() and (home / "Home.md").read_text() == HOME["Home.md"]
    assert [change["path"] for change in renamed["changed"]] == ["Plan.md"]


async def test_an_unknown_vault_names_the_vaults_there_are(tmp_path: Path, vaults: tuple[Path, Path]) -> None:
    home, work = vaults
    async with connect(tmp_path, vaults_settings(home, work=work)) as client:
        read = failure(await client.call_tool("notes_read", {"path": "Shared", "vault": "play"}))
        write = failure(await client.call_tool("notes_write", {"path": "X", "content": "x", "vault": "play"}))
    for error in (read, write):
        assert error["kind"] == "invalid_arguments"
        assert "'play'" in error["message"] and "default, work" in error["message"]
    assert not (home / "X.md").exists() and not (work / "X.md").exists()


async def test_several_vaults_offer_the_argument(tmp_path: Path, vaults: tuple[Path, Path]) -> None:
    home, work = vaults
    async with connect(tmp_path, vaults_settings(home, work=work)) as client:
        tools = (await client.list_tools()).tools
    notes = [tool for tool in tools if tool.name.startswith("notes_")]
    assert notes and all("vault" in tool.input_schema["properties"] for tool in notes)
    assert all("vault" in (tool.output_schema or {}).get("properties", {}) for tool in notes)


async def listed(root: Path, settings: dict[str, Any]) -> list[dict[str, Any]]:
    root.mkdir()
    async with connect(root, settings) as client:
        tools = (await client.list_tools()).tools
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]


async def test_one_vault_lists_the_tools_as_without_vaults(tmp_path: Path, vaults: tuple[Path, Path]) -> None:
    home, work = vaults
    plain = await listed(tmp_path / "one", notes_settings(home))
    several = await listed(tmp_path / "two", vaults_settings(home, work=work))
    assert '"vault"' not in json.dumps(plain)  # neither argument nor result field is offered
    for tool in several:  # the one difference: the argument and the result field
        for schema in (tool["inputSchema"], tool.get("outputSchema", {})):
            schema.get("properties", {}).pop("vault", None)
    assert json.dumps(plain) == json.dumps(several)
    async with connect(tmp_path, notes_settings(home)) as client:
        result = ok(await client.call_tool("notes_read", {"path": "Home"}))
        named = ok(await client.call_tool("notes_read", {"path": "Home", "vault": "default"}))
    assert "vault" not in result and "vault" not in named and result["content"] == named["content"]


async def test_a_label_of_the_default_vault_is_refused(tmp_path: Path, vaults: tuple[Path, Path]) -> None:
    from mcp_tools.core.config import ConfigError
    from tests.harness import build_app, make_config

    home, work = vaults
    settings = vaults_settings(home)
    settings["notes"]["vaults"] = {"default": {"path": str(work)}}
    with pytest.raises(ConfigError, match=r"vaults\.default"):
        build_app(make_config(tmp_path, settings))
    settings["notes"]["vaults"] = {"Work Stuff": {"path": str(work)}}
    with pytest.raises(ConfigError, match="Work Stuff"):
        build_app(make_config(tmp_path, settings))
