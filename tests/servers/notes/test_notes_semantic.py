"""Semantic search that never stalls: model loading off the request path, failures remembered, causes named.

The fastembed tests load a real ONNX model through fastembed's own loading code, offline: a tiny
model the tests build themselves (a word-level tokenizer trained on the fly and an ONNX graph that
looks words up in a fixed table), in a local model folder.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from mcp_tools.core.tooling import Environment
from mcp_tools.servers.notes.config import NotesConfig
from mcp_tools.servers.notes.embeddings import EmbeddingError, FastEmbedder, GuardedEmbedder, to_blob
from mcp_tools.servers.notes.models import SearchArgs
from mcp_tools.servers.notes.service import NotesService
from tests.harness import connect, ok
from tests.servers.notes.fixtures import notes_settings, wait_for

pytestmark = pytest.mark.anyio

TINY_MODEL = "mcp-tools-tests/tiny-embedder"
TINY_DIMENSIONS = 8
# words that mean the same thing share a row of the embedding table, so paraphrases meet
TOPICS = {
    0: ["glacier", "ice", "melt", "retreat"],
    1: ["bird", "birds", "migration", "flight", "swallows"],
    2: ["budget", "money", "funding", "cost"],
    3: ["recipe", "cooking", "bread", "dough"],
}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class ScriptedEmbedder:
    """An embedder whose load blocks on an event or fails, and which counts what was asked of it."""

    model_id = "scripted:test"
    needs_loading = True

    def __init__(self, *, gate: threading.Event | None = None, error: str | None = None) -> None:
        self.gate = gate
        self.error = error
        self.loads = 0

    def load(self) -> None:
        self.loads += 1
        if self.gate is not None:
            self.gate.wait(30)
        if self.error:
            raise EmbeddingError(self.error)

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        return [to_blob([1.0, float(len(t) % 3), 0.5]) for t in texts]

    def embed_query(self, text: str) -> bytes:
        return self.embed([text])[0]


def make_service(tmp_path: Path, vault: Path, embedder) -> NotesService:
    service = NotesService(NotesConfig(vault=str(vault), watch=False), Environment(tmp_path, tmp_path / "state"))
    service.embedder = embedder
    return service


@pytest.fixture
def small_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "Glacier.md").write_text("# Glacier\n\nThe glacier retreat was measured with radar.\n")
    (root / "Birds.md").write_text("# Birds\n\nSwallows leave in autumn; their migration crosses the Alps.\n")
    (root / "Bread.md").write_text("# Bread\n\nA recipe: flour, water, salt, and a slow dough.\n")
    return root


def test_search_answers_lexically_while_the_model_loads(tmp_path: Path, small_vault: Path) -> None:
    gate = threading.Event()
    inner = ScriptedEmbedder(gate=gate)
    service = make_service(tmp_path, small_vault, GuardedEmbedder(inner))
    service.reconcile()
    try:
        result = service.search(SearchArgs(query="glacier"))  # would hang here if it waited for the load
        assert result.mode == "lexical" and "still loading" in (result.note or "")
        assert [r.path for r in result.results] == ["Glacier.md"]
        assert service.embedder.state == "loading"
    finally:
        gate.set()
    wait_until(lambda: service.embedder.state == "ready")
    assert service.search(SearchArgs(query="glacier")).mode == "hybrid"
    assert inner.loads == 1
    service.close()


def test_a_failed_load_is_remembered_and_retried_after_a_backoff(tmp_path: Path, small_vault: Path) -> None:
    clock = FakeClock()
    inner = ScriptedEmbedder(error="could not download the embedding model m (no network access?)")
    guard = GuardedEmbedder(inner, clock=clock, first_backoff=30.0)
    service = make_service(tmp_path, small_vault, guard)
    service.reconcile()
    service.search(SearchArgs(query="glacier"))
    wait_until(lambda: guard.state == "failed")
    notes = [service.search(SearchArgs(query="glacier")).note or "" for _ in range(5)]
    assert inner.loads == 1  # five searches, no new attempt
    assert all("no network access" in note and "tried again in 30 s" in note for note in notes)
    clock.now += 31
    service.search(SearchArgs(query="glacier"))
    wait_until(lambda: inner.loads == 2 and guard.state == "failed")
    clock.now += 31  # the second failure doubles the wait
    assert "tried again in 29 s" in (service.search(SearchArgs(query="glacier")).note or "")
    assert inner.loads == 2
    service.close()


def test_a_provider_that_hangs_is_abandoned_not_waited_on(tmp_path: Path, small_vault: Path) -> None:
    hang = threading.Event()

    class Hanging(ScriptedEmbedder):
        needs_loading = False

        def embed_query(self, text: str) -> bytes:
            hang.wait(30)
            return super().embed_query(text)

    guard = GuardedEmbedder(Hanging(), query_timeout=0.2)
    service = make_service(tmp_path, small_vault, guard)
    service.reconcile()
    try:
        result = service.search(SearchArgs(query="birds"))
        assert result.mode == "lexical" and "did not answer within 0.2 s" in (result.note or "")
    finally:
        hang.set()
    service.close()


def test_a_model_folder_without_its_tokenizer_is_named(tmp_path: Path) -> None:
    folder = build_tiny_model(tmp_path / "model")
    (folder / "tokenizer.json").unlink()
    embedder = FastEmbedder(TINY_MODEL, str(folder), tmp_path / "cache")
    with pytest.raises(EmbeddingError) as failure:
        embedder.load()
    assert "lacks tokenizer.json" in str(failure.value) and str(folder) in str(failure.value)


def test_an_offline_machine_is_told_how_to_get_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("fastembed")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # nothing may reach the network; fastembed then only looks locally
    embedder = FastEmbedder("BAAI/bge-small-en-v1.5", None, tmp_path / "empty-cache")
    with pytest.raises(EmbeddingError) as failure:
        embedder.load()
    message = str(failure.value)
    assert "could not download the embedding model BAAI/bge-small-en-v1.5" in message
    assert "mcp-tools notes embeddings pull" in message and "embedding_model_path" in message


def test_the_real_fastembed_loader_reads_a_local_model_folder(tmp_path: Path) -> None:
    folder = build_tiny_model(tmp_path / "model")
    embedder = FastEmbedder(TINY_MODEL, str(folder), tmp_path / "cache")
    glacier, ice, bread = embedder.embed(["glacier melt", "ice retreat", "bread dough"])
    assert len(glacier) == TINY_DIMENSIONS * 4
    assert cosine(glacier, ice) > 0.99 and cosine(glacier, bread) < 0.5


async def test_hybrid_search_with_a_local_fastembed_model_over_mcp(tmp_path: Path, small_vault: Path) -> None:
    folder = build_tiny_model(tmp_path / "model")
    settings = notes_settings(
        small_vault, embeddings="fastembed", embedding_model=TINY_MODEL, embedding_model_path=str(folder)
    )
    async with connect(tmp_path, settings) as client:

        async def embedded() -> dict | None:
            result = ok(await client.call_tool("notes_search", {"query": "ice"}))
            index = result["index"]
            done = index["complete"] and index["embedded_chunks"] == index["total_chunks"] > 0
            return result if done and result["mode"] == "hybrid" else None

        await wait_for(embedded, timeout=60)
        # no note says "flight"; the model knows it as a word of the bird migration topic
        result = ok(await client.call_tool("notes_search", {"query": "flight"}))
    assert result["mode"] == "hybrid" and result["results"][0]["path"] == "Birds.md"


def test_embedding_status_for_doctor(tmp_path: Path, small_vault: Path) -> None:
    service = make_service(tmp_path, small_vault, GuardedEmbedder(ScriptedEmbedder(error="the model folder lacks x")))
    service.reconcile()
    service.embed_pending()
    status = service.embedding_status()
    assert status[0] == "embeddings: scripted:test"
    assert status[1].startswith("vectors:    0/3 chunks")
    assert status[2] == "last error: the model folder lacks x"
    service.close()


# -- the tiny model ------------------------------------------------------------------------------


def wait_until(check, timeout: float = 20.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def cosine(a: bytes, b: bytes) -> float:
    from array import array

    va, vb = array("f", a), array("f", b)
    return sum(x * y for x, y in zip(va, vb, strict=True))


def build_tiny_model(folder: Path) -> Path:
    """A word-level tokenizer and an ONNX embedding-table lookup, laid out as fastembed expects."""
    pytest.importorskip("fastembed")
    onnx = pytest.importorskip("onnx")
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType
    from onnx import TensorProto, helper
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    folder.mkdir(parents=True, exist_ok=True)
    words = [word for topic in TOPICS.values() for word in topic]
    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(
        [" ".join(words) + " the a of and with was in their"] * 3,
        trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]"]),
    )
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 128, "pad_token": "[PAD]"}))
    (folder / "config.json").write_text(json.dumps({"pad_token_id": 0}))
    (folder / "special_tokens_map.json").write_text(json.dumps({"pad_token": "[PAD]", "unk_token": "[UNK]"}))

    vocab = tokenizer.get_vocab()
    table = [[0.0] * TINY_DIMENSIONS for _ in range(len(vocab))]
    for token, index in vocab.items():
        topic = next((t for t, members in TOPICS.items() if token in members), None)
        if topic is not None:
            table[index][topic] = 1.0
        else:  # every other word points the same weak way, so it barely moves a mean
            table[index][TINY_DIMENSIONS - 1] = 0.05
    weights = helper.make_tensor(
        "table", TensorProto.FLOAT, [len(vocab), TINY_DIMENSIONS], [v for row in table for v in row]
    )
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)],
        "tiny-embedder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", TINY_DIMENSIONS])],
        initializer=[weights],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(folder / "model.onnx"))
    with contextlib.suppress(ValueError):  # registered by an earlier test in this process
        TextEmbedding.add_custom_model(
            model=TINY_MODEL,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf=TINY_MODEL),
            dim=TINY_DIMENSIONS,
            model_file="model.onnx",
        )
    return folder
