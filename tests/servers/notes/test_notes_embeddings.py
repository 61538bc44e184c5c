"""Hybrid search against a local OpenAI-compatible embedding service the tests run themselves."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.composition.app import build_app
from mcp_tools.core.tooling import Environment, NotConfigured
from mcp_tools.servers.notes import embeddings as embeddings_module
from mcp_tools.servers.notes.config import NotesConfig
from mcp_tools.servers.notes.embeddings import OpenAIEmbedder, VectorMatrix, to_blob
from mcp_tools.servers.notes.service import NotesService
from tests.harness import connect, make_config, ok
from tests.servers.notes.fixtures import (
    EMBED_KEY,
    EmbeddingService,
    concept_vector,
    embedding_service,  # noqa: F401  (fixture)
    notes_settings,
    vault,  # noqa: F401  (fixture)
    wait_for,
    wait_indexed,
)

pytestmark = pytest.mark.anyio


def hybrid_settings(vault: Path, service: EmbeddingService, **extra: Any) -> dict[str, Any]:  # noqa: F811
    return notes_settings(vault, embeddings="openai", embedding_url=service.url, embedding_model="test-embed", **extra)


def with_key(tmp_path: Path, settings: dict[str, Any]) -> Any:
    return build_app(make_config(tmp_path, settings, {"MCP_TOOLS_EMBEDDING_API_KEY": EMBED_KEY}))


async def wait_embedded(client: Any) -> dict[str, Any]:
    async def done() -> dict[str, Any] | None:
        result = ok(await client.call_tool("notes_search", {"query": "x"}))
        index = result["index"]
        return result if index["complete"] and index["embedded_chunks"] == index["total_chunks"] > 0 else None

    return await wait_for(done)


async def test_hybrid_search_finds_paraphrases_lexical_search_misses(
    tmp_path: Path,
    vault: Path,  # noqa: F811
    embedding_service: EmbeddingService,  # noqa: F811
) -> None:
    settings = hybrid_settings(vault, embedding_service)
    async with connect(tmp_path, settings, app=with_key(tmp_path, settings)) as client:
        await wait_embedded(client)
        hybrid = ok(await client.call_tool("notes_search", {"query": "frozen ice river"}))
        filtered = ok(await client.call_tool("notes_search", {"query": "frozen ice river", "folder": "Ideas"}))
        exact = ok(await client.call_tool("notes_search", {"query": "sourdough"}))
    async with connect(tmp_path / "lexical", notes_settings(vault)) as client:
        lexical = ok(await client.call_tool("notes_search", {"query": "frozen ice river"}))
    assert hybrid["mode"] == "hybrid" and hybrid["note"] is None
    assert hybrid["results"][0]["path"] == "Projects/Alpha.md"
    assert hybrid["results"][0]["snippet"]
    assert all(r["path"].startswith("Ideas/") for r in filtered["results"])
    assert exact["results"][0]["path"] == "Ideas/Idea One.md"
    assert lexical["mode"] == "lexical" and lexical["results"] == []
    assert {r.get("model") for r in embedding_service.requests} == {"test-embed"}
    assert set(embedding_service.auth_headers) == {f"Bearer {EMBED_KEY}"}


async def test_only_changed_chunks_are_embedded_again(
    tmp_path: Path,
    vault: Path,  # noqa: F811
    embedding_service: EmbeddingService,  # noqa: F811
) -> None:
    settings = hybrid_settings(vault, embedding_service)
    async with connect(tmp_path, settings, app=with_key(tmp_path, settings)) as client:
        await wait_embedded(client)
        note = ok(await client.call_tool("notes_read", {"path": "Projects/Alpha.md"}))
        before = len(embedding_service.requests)
        edited = note["content"].replace("Back to [[Home]].", "Back to [[Home]], with penguins.")
        ok(
            await client.call_tool(
                "notes_write",
                {"path": "Projects/Alpha.md", "content": edited, "expected_sha256": note["sha256"]},
            )
        )
        requests = embedding_service.requests[before:]
        found = ok(await client.call_tool("notes_search", {"query": "penguins"}))
    embedded_texts = [text for r in requests for text in r["input"]]
    assert len(embedded_texts) == 1 and "penguins" in embedded_texts[0]
    assert found["results"][0]["path"] == "Projects/Alpha.md" and found["results"][0]["heading"] == "Alpha > Notes"


async def test_failing_service_falls_back_to_lexical_and_says_why(
    tmp_path: Path,
    vault: Path,  # noqa: F811
    embedding_service: EmbeddingService,  # noqa: F811
) -> None:
    settings = hybrid_settings(vault, embedding_service)
    async with connect(tmp_path, settings, app=with_key(tmp_path, settings)) as client:
        await wait_embedded(client)
        embedding_service.fail_with = 503
        down = ok(await client.call_tool("notes_search", {"query": "glacier"}))
        written = ok(await client.call_tool("notes_write", {"path": "New.md", "content": "# New\n\nwombat\n"}))
        found = ok(await client.call_tool("notes_search", {"query": "wombat"}))
    assert down["mode"] == "lexical" and "HTTP 503" in down["note"]
    assert down["results"][0]["path"] == "Projects/Alpha.md"
    assert written["created"] and found["results"][0]["path"] == "New.md"


async def test_a_refused_key_is_reported_without_the_key(
    tmp_path: Path,
    vault: Path,  # noqa: F811
    embedding_service: EmbeddingService,  # noqa: F811
) -> None:
    settings = hybrid_settings(vault, embedding_service, embedding_api_key="sk-wrong-key-1234")
    async with connect(tmp_path, settings) as client:
        result = ok(await client.call_tool("notes_search", {"query": "glacier"}))
    assert result["mode"] == "lexical" and "refused the API key" in result["note"]
    assert "sk-wrong" not in json.dumps(result)


async def test_fastembed_missing_means_lexical_with_a_reason(
    tmp_path: Path,
    vault: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "fastembed", None)  # as on an install without the embeddings extra
    async with connect(tmp_path, notes_settings(vault, embeddings="fastembed")) as client:
        await wait_indexed(client)
        result = ok(await client.call_tool("notes_search", {"query": "glacier"}))
    assert result["mode"] == "lexical" and "fastembed is not installed" in result["note"]
    assert result["results"][0]["path"] == "Projects/Alpha.md"


def test_openai_without_key_or_local_url_is_not_configured(tmp_path: Path, vault: Path) -> None:  # noqa: F811
    env = Environment(data_dir=tmp_path, state_dir=tmp_path / "state")
    with pytest.raises(NotConfigured, match="embedding_api_key"):
        NotesService(NotesConfig(vault=str(vault), embeddings="openai"), env)
    keyed = Environment(data_dir=tmp_path, state_dir=tmp_path / "state", env={"MCP_TOOLS_EMBEDDING_API_KEY": "k"})
    assert NotesService(NotesConfig(vault=str(vault), embeddings="openai"), keyed).embedder is not None


def test_unreachable_service_error_names_no_secret() -> None:
    embedder = OpenAIEmbedder("http://127.0.0.1:9/v1", "m", "sk-secret-value", timeout=2)
    with pytest.raises(embeddings_module.EmbeddingError) as caught:
        embedder.embed(["hello"])
    assert "unreachable" in str(caught.value) and "sk-secret" not in str(caught.value)


@pytest.mark.parametrize("use_numpy", [True, False])
def test_vector_matrix_ranks_by_cosine_with_and_without_numpy(monkeypatch: pytest.MonkeyPatch, use_numpy: bool) -> None:
    if use_numpy:
        pytest.importorskip("numpy")
    else:
        monkeypatch.setattr(embeddings_module, "_numpy", lambda: None)
    texts = ["glacier melt radar", "bird migration alps", "sourdough bread", "glacier ice cave"]
    rows = [(i + 1, 100 + i, to_blob(concept_vector(t))) for i, t in enumerate(texts)]
    matrix = VectorMatrix()
    matrix.refresh(1, rows)
    query = to_blob(concept_vector("glacier"))
    ranked = matrix.nearest(query, 2)
    assert {r[0] for r in ranked} == {1, 4}
    assert ranked[0][2] >= ranked[1][2] > 0
    only_bread = matrix.nearest(query, 5, allowed_docs={102})
    assert [r[1] for r in only_bread] == [102]
    assert matrix.nearest(to_blob([1.0, 0.0]), 3) == []  # wrong dimensions: no results, no crash


def test_vector_matrix_follows_changes_in_order() -> None:
    a, b = to_blob([1.0, 0.0]), to_blob([0.0, 1.0])
    matrix = VectorMatrix()
    matrix.refresh(1, [(1, 10, a)])
    matrix.apply(2, [(2, 20, b), (2, 20, None), (3, 30, b), (1, 10, None), (1, 11, b)])
    assert sorted(matrix.entries) == [1, 3] and matrix.entries[1][0] == 11
    assert {r[0] for r in matrix.nearest(b, 5)} == {1, 3} and matrix.generation == 2


async def test_search_after_writes_uses_the_journal_not_a_reload(
    tmp_path: Path,
    vault: Path,  # noqa: F811
    embedding_service: EmbeddingService,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = hybrid_settings(vault, embedding_service)
    app = with_key(tmp_path, settings)
    async with connect(tmp_path, settings, app=app) as client:
        await wait_embedded(client)
        service = app.services["notes"]
        reloads: list[int] = []
        original = service.vectors.refresh
        monkeypatch.setattr(service.vectors, "refresh", lambda g, rows: (reloads.append(g), original(g, rows)))
        ok(await client.call_tool("notes_write", {"path": "Penguins.md", "content": "# Penguins\n\nfrozen birds\n"}))
        ok(await client.call_tool("notes_delete", {"path": "Projects/Beta.md"}))
        result = ok(await client.call_tool("notes_search", {"query": "ice avian"}))
    assert reloads == []
    assert result["mode"] == "hybrid" and result["results"][0]["path"] == "Penguins.md"
    assert "Projects/Beta.md" not in [r["path"] for r in result["results"]]
