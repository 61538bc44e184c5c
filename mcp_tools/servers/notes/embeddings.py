"""Embedding providers and the in-memory vector matrix used for semantic search.

Vectors are unit-length float32, stored as BLOBs in the index. numpy is used when it is
importable (fastembed brings it); otherwise a pure-Python path keeps small vaults working.
"""

from __future__ import annotations

import math
import threading
import time
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from mcp_tools.core.tooling import Environment, NotConfigured
from mcp_tools.servers.notes.config import NotesConfig

DEFAULT_FASTEMBED_MODEL = "BAAI/bge-small-en-v1.5"
DEFAULT_OPENAI_MODEL = "text-embedding-3-small"
DEFAULT_OPENAI_URL = "https://api.openai.com/v1"


class EmbeddingError(Exception):
    """The provider failed; the message is safe to show (never holds a key)."""


class Embedder(Protocol):
    model_id: str

    def load(self) -> None:
        """Make the model ready (may download or read large files); raises EmbeddingError."""

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

    needs_loading = False  # the service holds the model

    def load(self) -> None:
        """Nothing to load."""

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

    def load(self) -> None:
        self._load()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from fastembed import TextEmbedding
                except ImportError:
                    from mcp_tools.util.commands import pip_install

                    raise EmbeddingError(f"fastembed is not installed (run: {pip_install('embeddings')})") from None
                options: dict[str, Any] = {"model_name": self.model, "cache_dir": str(self.cache_dir)}
                if self.model_path:
                    check_model_folder(Path(self.model_path).expanduser())
                    options["specific_model_path"] = str(Path(self.model_path).expanduser())
                    options["local_files_only"] = True
                try:
                    self._model = TextEmbedding(**options)
                except Exception as exc:
                    raise EmbeddingError(describe_load_failure(self.model, self.model_path, exc)) from None
            return self._model

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        model = self._load()
        return [to_blob(list(map(float, v))) for v in model.embed(list(texts), batch_size=self.batch)]

    def embed_query(self, text: str) -> bytes:
        model = self._load()
        query_embed = getattr(model, "query_embed", None)
        vectors = query_embed([text]) if query_embed else model.embed([text])
        return to_blob(list(map(float, next(iter(vectors)))))


MODEL_FILES = ("tokenizer.json", "config.json")


def check_model_folder(folder: Path) -> None:
    """Name what a local model folder lacks before fastembed fails on it with a bare ValueError."""
    if not folder.is_dir():
        raise EmbeddingError(f"embedding_model_path {str(folder)!r} is not a folder; point it at the model's folder")
    missing = [name for name in MODEL_FILES if not (folder / name).is_file()]
    if not any(folder.glob("*.onnx")) and not any(folder.glob("onnx/*.onnx")):
        missing.append("an .onnx model file")
    if missing:
        raise EmbeddingError(
            f"the model folder {str(folder)!r} lacks {', '.join(missing)}; copy the whole model folder "
            "(for example with `mcp-tools notes embeddings pull` on a machine with network access)"
        )


def describe_load_failure(model: str, model_path: str | None, exc: Exception) -> str:
    """The cause and the fix, in words; never a bare exception name."""
    detail = " ".join(str(exc).split())[:200]
    network = any(
        word in f"{type(exc).__name__} {detail}".lower()
        for word in (
            "connection",
            "network",
            "resolve",
            "timed out",
            "offline",
            "localentrynotfound",
            "hub",
            "from any source",
        )
    )
    if network and not model_path:
        return (
            f"could not download the embedding model {model} (no network access?); run "
            "`mcp-tools notes embeddings pull` where the network is reachable, or set [notes] "
            "embedding_model_path to a local copy of the model folder"
        )
    where = f"from {model_path!r}" if model_path else ""
    return f"could not load the embedding model {model} {where}: {type(exc).__name__}: {detail}".replace("  ", " ")


class GuardedEmbedder:
    """Keeps model loading and failing providers off the request path.

    The first use starts loading in a background thread; until the model is ready, searches
    answer lexically and say why. A failure is remembered and tried again only after a backoff
    that doubles (30 s up to an hour), so a machine that cannot download the model pays for it
    once, not on every search. A query embedding that takes too long is abandoned, not waited on.
    """

    def __init__(
        self,
        embedder: Embedder,
        *,
        query_timeout: float = 10.0,
        first_backoff: float = 30.0,
        max_backoff: float = 3600.0,
        clock: Any = time.monotonic,
    ) -> None:
        self.inner = embedder
        self.model_id = embedder.model_id
        self.needs_loading = getattr(embedder, "needs_loading", True)
        self.query_timeout = query_timeout
        self.first_backoff = first_backoff
        self.max_backoff = max_backoff
        self.clock = clock
        self.dimensions: int | None = None
        self.error: str | None = None
        self._ready = not self.needs_loading
        self._loading: threading.Thread | None = None
        self._retry_at = 0.0
        self._failures = 0
        self._lock = threading.Lock()

    @property
    def state(self) -> str:
        """`ready`, `loading`, `failed` (waiting out the backoff) or `idle` (not asked for yet)."""
        with self._lock:
            if self._ready:
                return "ready"
            if self._loading is not None:
                return "loading"
            return "failed" if self.error else "idle"

    def retry_in(self) -> float:
        return max(0.0, self._retry_at - self.clock()) if self.error else 0.0

    def load(self) -> None:
        """Load now, in this thread (the indexer and `notes embeddings pull` may wait)."""
        self._check_backoff()
        try:
            self.inner.load()
        except EmbeddingError as exc:
            self._failed(str(exc))
            raise
        with self._lock:
            self._ready, self.error, self._failures = True, None, 0

    def start_loading(self) -> None:
        """Load in the background unless loaded, loading, or waiting out a failure."""
        with self._lock:
            if self._ready or self._loading is not None or (self.error and self.clock() < self._retry_at):
                return
            self._loading = threading.Thread(target=self._load_in_background, name="embedding-model", daemon=True)
            self._loading.start()

    def _load_in_background(self) -> None:
        try:
            self.load()
        except EmbeddingError:
            pass
        finally:
            with self._lock:
                self._loading = None

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        if not self._ready:
            self.load()
        try:
            vectors = self.inner.embed(texts)
        except EmbeddingError as exc:
            self._failed(str(exc))
            raise
        if vectors:
            self.dimensions = len(vectors[0]) // 4
        return vectors

    def embed_query(self, text: str) -> bytes:
        """The query's vector, or EmbeddingError at once when the model is not ready or too slow."""
        self._check_backoff()
        if not self._ready:
            self.start_loading()
            raise EmbeddingError(f"the embedding model {self.model_id} is still loading")
        result: list[bytes] = []
        failure: list[EmbeddingError] = []

        def run() -> None:
            try:
                result.append(self.inner.embed_query(text))
            except EmbeddingError as exc:
                failure.append(exc)

        worker = threading.Thread(target=run, name="embedding-query", daemon=True)
        worker.start()
        worker.join(self.query_timeout)
        if failure:
            self._failed(str(failure[0]))
            raise failure[0]
        if not result:
            self._failed(f"the embedding provider did not answer within {self.query_timeout:g} s")
            raise EmbeddingError(self.error or "the embedding provider did not answer")
        self.dimensions = len(result[0]) // 4
        return result[0]

    def _check_backoff(self) -> None:
        with self._lock:
            if self.error and self.clock() < self._retry_at:
                wait = round(self._retry_at - self.clock())
                raise EmbeddingError(f"{self.error} (tried again in {wait} s)")

    def _failed(self, message: str) -> None:
        with self._lock:
            self._ready = False
            self.error = message
            self._failures += 1
            backoff = min(self.max_backoff, self.first_backoff * 2 ** (self._failures - 1))
            self._retry_at = self.clock() + backoff


class VectorMatrix:
    """All chunk vectors in memory, rebuilt from the index when it changed."""

    def __init__(self) -> None:
        self.generation = -1
        self.chunk_ids: list[int] = []
        self.doc_ids: list[int] = []
        self.matrix: Any = None
        self.rows: list[array[float]] = []
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


def build_embedder(config: NotesConfig, env: Environment, state_dir: Path) -> Embedder | None:
    if config.embeddings == "none":
        return None
    if config.embeddings == "openai":
        key = config.embedding_api_key.get_secret_value() if config.embedding_api_key else None
        key = key or env.env.get("MCP_TOOLS_EMBEDDING_API_KEY") or None
        url = config.embedding_url or DEFAULT_OPENAI_URL
        if url == DEFAULT_OPENAI_URL and not key:
            raise NotConfigured(
                "set [notes] embedding_api_key (or MCP_TOOLS_EMBEDDING_API_KEY), "
                "or embedding_url for a local server such as Ollama"
            )
        return GuardedEmbedder(
            OpenAIEmbedder(
                url,
                config.embedding_model or DEFAULT_OPENAI_MODEL,
                key,
                timeout=config.embedding_timeout,
                batch=config.embedding_batch,
            ),
            query_timeout=config.embedding_timeout,
        )
    return GuardedEmbedder(
        FastEmbedder(
            config.embedding_model or DEFAULT_FASTEMBED_MODEL,
            config.embedding_model_path,
            state_dir / "models",
            batch=config.embedding_batch,
        )
    )
