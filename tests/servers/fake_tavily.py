"""A local stand-in for the Tavily search API, served on 127.0.0.1.

It checks requests the way the API documents them (POST /search, JSON body, `Authorization:
Bearer tvly-...`, known fields with their allowed values) and answers in the documented shape,
including the error statuses the client library maps: 400, 401, 403, 429, 432, 433. It is
stricter than the real service in one way: unknown body fields are refused, so a client that
sends something undocumented (or the key in the body) fails loudly.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.processes import STOP_POLL_SECONDS

VALID_KEY = "tvly-dev-fake0123456789abcdef"

SEARCH_FIELDS = {
    "query": str,
    "search_depth": str,
    "chunks_per_source": int,
    "max_results": int,
    "topic": str,
    "time_range": str,
    "start_date": str,
    "end_date": str,
    "days": int,
    "include_answer": (bool, str),
    "include_raw_content": (bool, str),
    "include_images": bool,
    "include_image_descriptions": bool,
    "include_favicon": bool,
    "include_domains": list,
    "exclude_domains": list,
    "country": str,
    "auto_parameters": bool,
    "include_usage": bool,
}
ALLOWED_VALUES = {
    "search_depth": {"basic", "advanced", "fast", "ultra-fast"},
    "topic": {"general", "news", "finance"},
    "time_range": {"day", "week", "month", "year", "d", "w", "m", "y"},
    "include_answer": {True, False, "basic", "advanced"},
    "include_raw_content": {True, False, "markdown", "text"},
}
ERROR_MESSAGES = {
    401: "Unauthorized: missing or invalid API key.",
    403: "Forbidden: this request is not allowed for your API key.",
    429: "Your request has been blocked due to excessive requests. Please reduce rate of requests.",
    432: "This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com",
    433: "This request exceeds the pay-as-you-go limit. You can increase your limit on the Tavily dashboard",
    500: "Internal Server Error",
}

DEFAULT_RESULTS = [
    {
        "title": f"Result {number}: Python packaging guide",
        "url": f"https://example{number}.org/packaging",
        "content": f"Snippet {number} about packaging Python projects with pyproject.toml.",
        "score": round(0.95 - number * 0.05, 2),
        "raw_content": None,
    }
    for number in range(1, 16)
]


@dataclass
class Reply:
    """A scripted answer for the next request, instead of a normal search."""

    status: int = 200
    body: Any = None  # dict/list → JSON; bytes → sent as is; None → the status's documented error
    delay: float = 0.0
    drip: float = 0.0  # seconds between body bytes: a server that answers, but too slowly
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeTavily:
    """Start with `with FakeTavily() as fake:`; `fake.url` is the `api_base_url` to configure."""

    def __init__(self, *, keys: set[str] | None = None) -> None:
        self.keys = keys if keys is not None else {VALID_KEY}
        self.results: list[dict[str, Any]] = [dict(item) for item in DEFAULT_RESULTS]
        self.answer = "Use pyproject.toml with a build backend such as hatchling."
        self.requests: list[Recorded] = []
        self.replies: deque[Reply] = deque()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(STOP_POLL_SECONDS,), name="fake-tavily", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeTavily:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def push(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    # --- request handling ------------------------------------------------------------------

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as separate writes

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                fake._record(self, None)
                self._send(405, {"detail": "Method Not Allowed"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw
                fake._record(self, body)
                reply = fake._answer(self.path, dict(self.headers), body)
                if reply.delay:
                    fake._stopping.wait(reply.delay)
                self._send(reply.status, reply.body, reply.headers, reply.drip)

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None, drip: float = 0.0) -> None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    if not drip:
                        self.wfile.write(data)
                    for index in range(len(data) if drip else 0):
                        if fake._stopping.wait(drip):
                            return
                        self.wfile.write(data[index : index + 1])
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler

    def _record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        self.requests.append(Recorded(handler.command, handler.path, dict(handler.headers), body))

    def _answer(self, path: str, headers: dict[str, str], body: Any) -> Reply:
        if path != "/search":
            return Reply(404, {"detail": "Not Found"})
        auth = headers.get("Authorization", "")
        key = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else ""
        if not key.startswith("tvly-") or key not in self.keys:
            return self._error(401)
        if self.replies:
            reply = self.replies.popleft()
            if reply.body is None and reply.status != 200:
                reply.body = {"detail": {"error": ERROR_MESSAGES.get(reply.status, "error")}}
            if reply.body is None:
                reply.body = self._search(body if isinstance(body, dict) else {})
            return reply
        if not headers.get("Content-Type", "").startswith("application/json"):
            return self._bad("Content-Type must be application/json")
        problem = validate_search(body)
        if problem:
            return self._bad(problem)
        return Reply(200, self._search(body))

    def _error(self, status: int) -> Reply:
        return Reply(status, {"detail": {"error": ERROR_MESSAGES[status]}})

    def _bad(self, message: str) -> Reply:
        return Reply(400, {"detail": {"error": message}})

    def _search(self, body: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        count = body.get("max_results", 5)
        results = []
        for item in self.results[:count]:
            result = dict(item)
            if body.get("topic") == "news":
                result.setdefault("published_date", "Tue, 17 Nov 2026 09:30:00 GMT")
            if not body.get("include_raw_content"):
                result["raw_content"] = None
            results.append(result)
        answer = self.answer if body.get("include_answer") else None
        return {
            "query": body.get("query", ""),
            "follow_up_questions": None,
            "answer": answer,
            "images": [],
            "results": results,
            "response_time": round(time.perf_counter() - started + 0.5, 2),
            "request_id": "123e4567-e89b-12d3-a456-426614174111",
        }


def validate_search(body: Any) -> str | None:
    """The documented request rules; returns the API's error message or None."""
    if not isinstance(body, dict):
        return "Request body must be a JSON object"
    if not isinstance(body.get("query"), str) or not body["query"].strip():
        return "Query is missing."
    if len(body["query"]) > 400:
        return "Query is too long. Max query length is 400 characters."
    for name, value in body.items():
        if name not in SEARCH_FIELDS:
            return f"Unknown field: {name}"
        expected = SEARCH_FIELDS[name]
        if expected is int and isinstance(value, bool):
            return f"Invalid {name}: must be an integer"
        if not isinstance(value, expected):
            return f"Invalid {name}: wrong type"
        if name in ALLOWED_VALUES and value not in ALLOWED_VALUES[name]:
            return f"Invalid {name}: {value!r}"
    if not 0 <= body.get("max_results", 5) <= 20:
        return "max_results must be between 0 and 20"
    if len(body.get("include_domains", [])) > 300:
        return "include_domains accepts at most 300 domains"
    if len(body.get("exclude_domains", [])) > 150:
        return "exclude_domains accepts at most 150 domains"
    for name in ("include_domains", "exclude_domains"):
        if not all(isinstance(domain, str) for domain in body.get(name, [])):
            return f"{name} must be a list of strings"
    if "chunks_per_source" in body and body.get("search_depth") != "advanced":
        return "chunks_per_source is only available with search_depth advanced"
    return None
