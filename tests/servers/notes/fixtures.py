"""Fixtures for the notes namespace: a generated vault and a local OpenAI-compatible embedding service."""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.processes import STOP_POLL_SECONDS

EMBED_DIMENSIONS = 256
EMBED_KEY = "sk-notes-test-key-never-shown"

CAFE_NFC = unicodedata.normalize("NFC", "Café")
CAFE_NFD = unicodedata.normalize("NFD", "Résumé")

VAULT: dict[str, str] = {
    "Home.md": (
        "---\n"
        "tags: [home]\n"
        "aliases: [Start Page]\n"
        "---\n"
        "# Home\n\n"
        "## Intro\n\n"
        "Welcome. See [[Projects/Alpha]] and [[Beta|the beta project]].\n"
        "Goals live in [[Alpha#Goals]] and the key point is [[Alpha#^key1]].\n"
        "![[Alpha]] embeds it; ![[diagram.png]] is a picture.\n"
        "Ideas: [first idea](Ideas/Idea%20One.md#Why) and [[Missing Note]].\n"
        f"Coffee notes: [[{CAFE_NFC}]]; launch: [[🚀 Launch]].\n"
    ),
    "Projects/Alpha.md": (
        "---\n"
        "title: Project Alpha\n"
        "tags:\n  - project/alpha\n  - research\n"
        "aliases: [A-Project]\n"
        "date: 2024-03-01\n"
        "status: active # keep this comment\n"
        "---\n"
        "# Alpha\n\n"
        "Alpha studies glacier melt with satellite radar.\n\n"
        "## Goals\n\n"
        "Measure the retreat of the Rhône glacier every season.\n\n"
        "A key paragraph about funding. ^key1\n\n"
        "## Notes\n\n"
        "Back to [[Home]].\n"
    ),
    "Projects/Beta.md": (
        "---\ntags: project/beta\n---\n"
        "# Beta\n\nBeta tracks #status/active bird migration over the Alps.\n"
        "Related: [[Alpha]] and [the home page](../Home.md).\n"
    ),
    "Archive/Old/Alpha.md": (
        "---\ntags: [archive]\ndate: 2019-05-05\n---\n# Old Alpha\n\nAn abandoned draft about volcanoes.\n"
    ),
    "Ideas/Idea One.md": (
        "# Idea One\n\n## Why\n\nBecause #idea sourdough fermentation is fun.\n\n"
        "Up: [[Home]] and [home again](../Home.md#Intro).\n"
    ),
    "Journal/2024-03-01.md": "# 2024-03-01\n\nMet the #project/alpha team. Talked about [[A-Project]].\n",
    "日本語/メモ.md": "---\ntags: [日本]\n---\n# メモ\n\n東京で寿司を食べました。 [[Home]]\n",
    f"{CAFE_NFC}.md": "# Café\n\nEspresso and crème brûlée. 😀\n",
    f"{CAFE_NFD}.md": "# Résumé\n\nCurriculum vitae, decomposed name.\n",
    "🚀 Launch.md": "# Launch 🚀\n\nCountdown notes with emoji ✨.\n",
    "Code.md": (
        "# Code\n\n```python\n# not a heading\nx = '#notatag [[Not A Link]]'\n```\n\n"
        "Inline `#alsonot [[Nope]]` and a real #codetag.\n"
    ),
    "Windows.md": "---\r\ntags: [crlf]\r\n---\r\n# Windows\r\n\r\nLine one.\r\nSee [[Home]].\r\n",
}


def write_vault(root: Path, files: dict[str, str] | None = None) -> Path:
    for key, text in (files or VAULT).items():
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return root


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write_vault(tmp_path / "vault")


def notes_settings(vault: Path, **extra: Any) -> dict[str, Any]:
    return {"server": {"servers": ["notes"]}, "notes": {"vault": str(vault), "watch": False, **extra}}


def vaults_settings(default: Path, **vaults: Path) -> dict[str, Any]:
    """`[notes] vault` plus one `[notes.vaults.LABEL]` for each keyword."""
    settings = notes_settings(default)
    settings["notes"]["vaults"] = {label: {"path": str(path)} for label, path in vaults.items()}
    return settings


async def wait_for(check: Callable[[], Any], timeout: float = 15.0, interval: float = 0.05) -> Any:
    """Poll an async or sync check until it returns a truthy value; fail with the last value."""
    import inspect

    import anyio

    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if inspect.isawaitable(last):
            last = await last
        if last:
            return last
        await anyio.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s; last value: {last!r}")


async def wait_indexed(client: Any) -> dict[str, Any]:
    """Wait until the background indexer has finished its first pass."""
    from tests.harness import ok

    async def complete() -> dict[str, Any] | None:
        result = ok(await client.call_tool("notes_search", {"query": "anything"}))
        return result if result["index"]["complete"] else None

    return await wait_for(complete)


# -- a deterministic embedding service ----------------------------------------------------------

TOKEN_RE = re.compile(r"\w+")


def concept_vector(text: str, synonyms: dict[str, str] | None = None) -> list[float]:
    """Hashed bag of words (after mapping synonyms to one concept), unit length: deterministic and cheap."""
    vector = [0.0] * EMBED_DIMENSIONS
    for token in TOKEN_RE.findall(text.lower()):
        token = (synonyms or {}).get(token, token)
        digest = hashlib.blake2b(token.encode(), digest_size=4, key=b"notes-test").digest()
        bucket = int.from_bytes(digest[:2], "little") % EMBED_DIMENSIONS
        vector[bucket] += 1.0 if digest[2] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


@dataclass
class EmbeddingService:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    auth_headers: list[str | None] = field(default_factory=list)
    fail_with: int | None = None
    synonyms: dict[str, str] = field(default_factory=dict)


def start_embedding_service(synonyms: dict[str, str] | None = None) -> tuple[EmbeddingService, ThreadingHTTPServer]:
    state = EmbeddingService(url="", synonyms=synonyms or {})

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            if self.path != "/v1/embeddings":
                self.send_error(404)
                return
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            state.requests.append(body)
            state.auth_headers.append(self.headers.get("Authorization"))
            if state.fail_with is not None:
                self.send_response(state.fail_with)
                self.end_headers()
                return
            if self.headers.get("Authorization") != f"Bearer {EMBED_KEY}":
                self.send_response(401)
                self.end_headers()
                return
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [
                {"object": "embedding", "index": i, "embedding": concept_vector(text, state.synonyms)}
                for i, text in enumerate(inputs)
            ]
            payload = json.dumps({"object": "list", "data": data[::-1], "model": body.get("model")}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    threading.Thread(target=server.serve_forever, args=(STOP_POLL_SECONDS,), daemon=True).start()
    return state, server


@pytest.fixture
def embedding_service() -> Iterator[EmbeddingService]:
    state, server = start_embedding_service(
        synonyms={"frozen": "glacier", "ice": "glacier", "river": "glacier", "birds": "bird", "avian": "bird"}
    )
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
