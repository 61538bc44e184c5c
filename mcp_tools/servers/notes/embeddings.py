"""Embedding providers and the in-memory vector matrix used for semantic search.

Vectors are unit-length float32, stored as BLOBs in the index. numpy is used when it is
importable (fastembed brings it); otherwise a pure-Python path keeps small vaults working.
"""

from __future__ import annotations

import math
import threading
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

DEFAULT_FASTEMBED_MODEL = "BAAI/bge-small-en-v1.5"
DEFAULT_OPENAI_MODEL = "text-embedding-3-small"
DEFAULT_OPENAI_URL = "https://api.openai.com/v1"


class EmbeddingError(Exception):
    """The provider failed; the message is safe to show (never holds a key)."""


class Embedder(Protocol):
    model_id: str

    def embed(self, texts: Sequence[str]) -> list[bytes]: ...

    def embed_query(self, text: str) -> bytes: ...


def to_blob(values: Sequence[float]) -> bytes:
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return array("f", (v / norm for v in values)).tobytes()


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:
        return None
    return numpy


class OpenAIEmbedder:
    """An OpenAI-compatible `/embeddings` endpoint: OpenAI, Ollama, LM Studio, llama.cpp, vLLM."""

    def __init__(self, url: str, model: str, api_key: str | None, *, timeout: float = 30.0, batch: int = 32) -> None:
        self.url = url.rstrip("/") + "/embeddings"
        self.model = model
        self.model_id = f"openai:{model}@{url.rstrip('/')}"
        self._api_key = api_key
        self.timeout = timeout
        self.batch = batch
        self._client: Any = None
        self._lock = threading.Lock()

    def _http(self) -> Any:
        with self._lock:
            if self._client is None:
                import httpx

                headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
                self._client = httpx.Client(timeout=self.timeout, headers=headers)
            return self._client

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        out: list[bytes] = []
        for start in range(0, len(texts), self.batch):
            out.extend(self._request(list(texts[start : start + self.batch])))
        return out

    def embed_query(self, text: str) -> bytes:
        return self._request([text])[0]

    def _request(self, texts: list[str]) -> list[bytes]:
        import httpx

        try:
            response = self._http().post(self.url, json={"model": self.model, "input": texts})
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"embedding service unreachable ({type(exc).__name__})") from None
        if response.status_code in (401, 403):
            raise EmbeddingError(f"embedding service refused the API key (HTTP {response.status_code})")
        if response.status_code != 200:
            raise EmbeddingError(f"embedding service answered HTTP {response.status_code}")
        try:
            data = sorted(response.json()["data"], key=lambda item: item.get("index", 0))
            vectors = [to_blob([float(v) for v in item["embedding"]]) for item in data]
        except (ValueError, KeyError, TypeError):
            raise EmbeddingError("embedding service returned an unexpected response") from None
        if len(vectors) != len(texts):
            raise EmbeddingError(f"embedding service returned {len(vectors)} vectors for {len(texts)} texts")
        return vectors


class FastEmbedder:
    """A local ONNX model through fastembed; `model_path` loads it from a folder (offline machines)."""

    def __init__(self, model: str, model_path: str | None, cache_dir: Path, *, batch: int = 32) -> None:
        self.model = model
        self.model_path = model_path
        self.cache_dir = cache_dir
        self.batch = batch
        self.model_id = f"fastembed:{model}"
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from fastembed import TextEmbedding
                except ImportError:
                    raise EmbeddingError("fastembed is not installed (pip install 'mcp-tools[embeddings]')") from None
                options: dict[str, Any] = {"model_name": self.model, "cache_dir": str(self.cache_dir)}
                if self.model_path:
                    options["specific_model_path"] = self.model_path
                    options["local_files_only"] = True
                try:
                    self._model = TextEmbedding(**options)
                except Exception as exc:
                    raise EmbeddingError(f"could not load embedding model {self.model}: {type(exc).__name__}") from None
            return self._model

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        model = self._load()
        return [to_blob(list(map(float, v))) for v in model.embed(list(texts), batch_size=self.batch)]

    def embed_query(self, text: str) -> bytes:
        model = self._load()
        query_embed = getattr(model, "query_embed", None)
        vectors = query_embed([text]) if query_embed else model.embed([text])
        return to_blob(list(map(float, next(iter(vectors)))))


class VectorMatrix:
    """All chunk vectors in memory, rebuilt from the index when it changed."""

    def __init__(self) -> None:
        self.generation = -1
        self.chunk_ids: list[int] = []
        self.doc_ids: list[int] = []
        self.matrix: Any = None
        self.rows: list[array] = []
        self.dimensions = 0
        self.entries: dict[int, tuple[int, bytes]] = {}
        self.doc_array: Any = None
        self._lock = threading.Lock()

    def refresh(self, generation: int, rows: Iterable[tuple[int, int, bytes]]) -> None:
        """Replace every vector (first use, or after the index could not say what changed)."""
        with self._lock:
            self.entries = {chunk_id: (doc_id, blob) for chunk_id, doc_id, blob in rows}
            self._rebuild(generation)

    def apply(self, generation: int, ops: Iterable[tuple[int, int, bytes | None]]) -> None:
        """Follow the index's changes, in order, without reading every vector again."""
        with self._lock:
            for chunk_id, doc_id, blob in ops:
                if blob is None:
                    self.entries.pop(chunk_id, None)
                else:
                    self.entries[chunk_id] = (doc_id, blob)
            self._rebuild(generation)

    def _rebuild(self, generation: int) -> None:
        if self.entries:
            self.dimensions = len(next(iter(self.entries.values()))[1]) // 4
        usable = [(c, d, b) for c, (d, b) in self.entries.items() if len(b) // 4 == self.dimensions]
        self.chunk_ids = [r[0] for r in usable]
        self.doc_ids = [r[1] for r in usable]
        np = _numpy()
        if np is not None:
            blob = b"".join(r[2] for r in usable)
            self.matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(usable), self.dimensions)
            self.doc_array = np.asarray(self.doc_ids, dtype=np.int64)
            self.rows = []
        else:
            self.matrix = None
            self.rows = [array("f", r[2]) for r in usable]
        self.generation = generation

    def nearest(self, query: bytes, limit: int, allowed_docs: set[int] | None = None) -> list[tuple[int, int, float]]:
        """(chunk id, doc id, cosine) best first."""
        if not self.chunk_ids or len(query) // 4 != self.dimensions:
            return []
        np = _numpy()
        if self.matrix is not None and np is not None:
            q = np.frombuffer(query, dtype=np.float32)
            scores = self.matrix @ q
            if allowed_docs is not None:
                mask = np.isin(self.doc_array, np.fromiter(allowed_docs, dtype=np.int64, count=len(allowed_docs)))
                scores = np.where(mask, scores, -np.inf)
            count = min(limit, len(scores))
            top = np.argpartition(-scores, count - 1)[:count]
            top = top[np.argsort(-scores[top])]
            return [(self.chunk_ids[i], self.doc_ids[i], float(scores[i])) for i in top if np.isfinite(scores[i])]
        q_values = array("f", query)
        scored = []
        for index, row in enumerate(self.rows):
            if allowed_docs is not None and self.doc_ids[index] not in allowed_docs:
                continue
            scored.append((sum(a * b for a, b in zip(row, q_values, strict=False)), index))
        scored.sort(reverse=True)
        return [(self.chunk_ids[i], self.doc_ids[i], float(s)) for s, i in scored[:limit]]
