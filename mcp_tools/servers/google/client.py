"""Calling Google APIs: services from the shipped discovery documents, retries, batches.

httplib2 is not thread-safe, so each worker thread gets its own `Http` (wrapped with the
shared credentials) and its own service objects. Retries use exponential backoff with
jitter on 429, 5xx and 403 rate-limit reasons, within a bounded total wait; an item of a
batch that still fails is reported by key, never dropped.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from mcp_tools.core.tooling import ErrorKind, ToolFailure
from mcp_tools.servers.google.account import GoogleAccount, refresh_failure
from mcp_tools.servers.google.config import GoogleConfig
from mcp_tools.servers.google.errors import is_retryable, map_http_error, missing_scope_failure, parse_error
from mcp_tools.servers.google.scopes import missing_scopes

if TYPE_CHECKING:
    from mcp_tools.servers.google.tokens import TokenSlot

T = TypeVar("T")
Key = TypeVar("Key", bound=Hashable)  # what a caller names each request of a batch by
BATCH_LIMIT = 50  # Gmail advises no more than 50 requests per batch
BASE_DELAY = 0.5
MAX_DELAY = 8.0


def backoff_delay(attempt: int, retry_after: float | None = None) -> float:
    """Exponential with equal jitter; never less than a Retry-After the server asked for."""
    ceiling = min(MAX_DELAY, BASE_DELAY * 2.0**attempt)
    delay = ceiling / 2 + random.uniform(0, ceiling / 2)
    return max(delay, retry_after or 0.0)


def _retry_after(response: Any) -> float | None:
    try:
        value = response.get("retry-after") if response is not None else None
        return float(value) if value else None
    except (TypeError, ValueError):
        return None


def checked_path(request: Any) -> Any:
    """Refuse a request whose path holds a "." or ".." segment.

    googleapiclient percent-encodes "/" in an id but leaves dots alone, so an id of ".." makes
    `tasks/v1/lists/L/tasks/..`, which servers resolve to another resource (the whole list):
    a delete aimed at one task would reach its list.
    """
    from urllib.parse import urlsplit

    uri = getattr(request, "uri", None)
    if isinstance(uri, str) and {".", ".."} & set(urlsplit(uri).path.split("/")):
        raise ToolFailure(
            "invalid_arguments",
            'an id or range cannot be "." or ".."',
            "pass the id exactly as a list or search tool returned it",
        )
    return request


class GoogleClient:
    """One per process, shared by the Google namespaces; services are built per thread."""

    def __init__(self, account: GoogleAccount, config: GoogleConfig) -> None:
        self.account = account
        self.config = config
        self._local = threading.local()
        self.access: dict[str, str] = {}  # namespace -> its `access` level, set by its service
        self.sleep: Callable[[float], None] = time.sleep

    def __repr__(self) -> str:
        return f"GoogleClient({self.account!r})"

    # --- services ---------------------------------------------------------------------------
    def service(self, api: str, version: str) -> Any:
        credentials = self.account.credentials()
        cache: dict[tuple[str, str], Any] = getattr(self._local, "services", None) or {}
        self._local.services = cache
        found = cache.get((api, version))
        if found is not None and found[0] is credentials:
            return found[1]
        import google_auth_httplib2
        import httplib2
        from googleapiclient.discovery import build

        raw = httplib2.Http(timeout=self.config.timeout_seconds)
        raw.redirect_codes = raw.redirect_codes - {308}  # a resumable upload's "Resume Incomplete", as build_http does
        http = google_auth_httplib2.AuthorizedHttp(credentials, http=raw)
        options = {"api_endpoint": self.endpoint(api, version)} if self.config.api_endpoint else None
        service = build(api, version, http=http, static_discovery=True, cache_discovery=False, client_options=options)
        cache[(api, version)] = (credentials, service)
        return service

    def endpoint(self, api: str, version: str, key: str = "servicePath") -> str:
        """Our API root plus the API's own path (drive/v3/, calendar/v3/; empty for gmail)."""
        from mcp_tools.servers.google.scopes import discovery_document

        assert self.config.api_endpoint is not None
        return self.config.api_endpoint + (discovery_document(api, version).get(key) or "")

    def fix_upload(self, request: Any) -> Any:
        """googleapiclient keeps https on upload URLs when only the host was overridden; keep ours."""
        endpoint = self.config.api_endpoint
        if endpoint and endpoint.startswith("http://") and request.uri.startswith("https://"):
            from urllib.parse import urlsplit, urlunsplit

            ours, theirs = urlsplit(endpoint), urlsplit(request.uri)
            if theirs.netloc == ours.netloc:
                request.uri = urlunsplit(theirs._replace(scheme=ours.scheme))
        return request

    def _access(self, tool: str) -> str:
        return self.access.get(tool.split(".")[0], "app")

    def check_scopes(self, tool: str) -> None:
        """Fail before calling when the sign-in lacks a scope the tool needs."""
        missing = missing_scopes(tool, self.account.granted_scopes(), self._access(tool))
        if missing and not self.account.is_service_account:
            raise missing_scope_failure(tool, missing, self.account.label)

    # --- one call -----------------------------------------------------------------------------
    def execute(self, api: str, version: str, build_request: Callable[[Any], Any], *, tool: str) -> Any:
        """Run `build_request(service).execute()` with retries; Google errors become ToolFailure."""
        import google.auth.exceptions
        import httplib2
        from googleapiclient.errors import HttpError

        started = time.monotonic()
        attempt = 0
        reauthorised = False
        while True:
            try:
                result = checked_path(build_request(self.service(api, version))).execute(num_retries=0)
                self.account.persist_if_changed()
                return result
            except HttpError as error:
                status = int(error.resp.status)
                _, reasons = parse_error(error.content)
                if status == 401 and not reauthorised:
                    reauthorised = True
                    self.account.invalidate()
                    continue
                retry_after = _retry_after(error.resp)
                if is_retryable(status, reasons) and self._wait(started, attempt, retry_after):
                    attempt += 1
                    continue
                raise self._failure(status, error.content, tool, retry_after) from None
            except google.auth.exceptions.RefreshError as error:
                raise refresh_failure(error, self.account.is_service_account, self.account.label) from None
            except (OSError, httplib2.HttpLib2Error) as error:
                if self._wait(started, attempt, None):
                    attempt += 1
                    self._local.services = {}
                    continue
                kind: ErrorKind = "timeout" if isinstance(error, TimeoutError) else "upstream_error"
                raise ToolFailure(kind, f"cannot reach Google ({type(error).__name__})", "retry in a minute") from None

    def _wait(self, started: float, attempt: int, retry_after: float | None) -> bool:
        delay = backoff_delay(attempt, retry_after)
        if time.monotonic() - started + delay > self.config.retry_seconds:
            return False
        self.sleep(delay)
        return True

    def _failure(self, status: int, content: Any, tool: str, retry_after: float | None) -> ToolFailure:
        missing = missing_scopes(tool, self.account.granted_scopes(), self._access(tool)) or None
        if status == 403 and missing is None:
            from mcp_tools.servers.google.scopes import asked_scopes

            missing = list(asked_scopes(tool, self._access(tool)))
        return map_http_error(
            status,
            content,
            tool=tool,
            missing=missing,
            retry_after=retry_after,
            redact=self.account.redact,
            account=self.account.label,
        )

    # --- batches ------------------------------------------------------------------------------
    def batch(
        self,
        api: str,
        version: str,
        requests: Sequence[tuple[Key, Callable[[Any], Any]]],
        *,
        tool: str,
    ) -> tuple[dict[Key, Any], dict[Key, ToolFailure]]:
        """Run many requests in batches; returns (results, failures) by key, failures never hidden.

        Items that fail with a retryable status are sent again in a later batch, within the
        same bounded wait as single calls.
        """
        from googleapiclient.errors import HttpError
        from googleapiclient.http import BatchHttpRequest

        results: dict[Key, Any] = {}
        failures: dict[Key, ToolFailure] = {}
        pending = list(requests)
        started = time.monotonic()
        attempt = 0
        if pending:
            service = self.service(api, version)
            for key, build_request in list(pending):
                try:
                    checked_path(build_request(service))
                except ToolFailure as failure:
                    failures[key] = failure
                    pending.remove((key, build_request))
        while pending:
            retry: list[tuple[Key, Callable[[Any], Any]]] = []
            longest_wait: float | None = None
            for start in range(0, len(pending), BATCH_LIMIT):
                chunk = pending[start : start + BATCH_LIMIT]
                service = self.service(api, version)
                answers: dict[str, tuple[Any, Any]] = {}

                def collect(
                    request_id: str, response: Any, exception: Any, answers: dict[str, tuple[Any, Any]] = answers
                ) -> None:
                    answers[request_id] = (response, exception)

                if self.config.api_endpoint:
                    batch = BatchHttpRequest(callback=collect, batch_uri=self.endpoint(api, version, "batchPath"))
                else:
                    batch = service.new_batch_http_request(callback=collect)
                for index, (_, build_request) in enumerate(chunk):
                    batch.add(build_request(service), request_id=str(index))

                def whole_batch(_service: Any, batch: Any = batch) -> _BatchCall:
                    return _BatchCall(batch)

                try:
                    self.execute(api, version, whole_batch, tool=tool)
                except ToolFailure as failure:
                    for key, _ in chunk:
                        failures[key] = failure
                    continue
                for index, (key, build_request) in enumerate(chunk):
                    response, exception = answers.get(str(index), (None, None))
                    if exception is None:
                        results[key] = response
                        continue
                    if not isinstance(exception, HttpError):
                        failures[key] = ToolFailure("upstream_error", f"batch item failed ({type(exception).__name__})")
                        continue
                    status = int(exception.resp.status)
                    _, reasons = parse_error(exception.content)
                    after = _retry_after(exception.resp)
                    failures[key] = self._failure(status, exception.content, tool, after)
                    if is_retryable(status, reasons):
                        retry.append((key, build_request))
                        longest_wait = max(longest_wait or 0.0, after or 0.0) or None
            self.account.persist_if_changed()
            if not retry or not self._wait(started, attempt, longest_wait):
                break
            attempt += 1
            for key, _ in retry:
                failures.pop(key, None)
            pending = retry
        return results, failures

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        import anyio

        return await anyio.to_thread.run_sync(lambda: function(*args))


class _BatchCall:
    """Lets a whole batch go through `execute`'s retries like a single request."""

    def __init__(self, batch: Any) -> None:
        self.batch = batch

    def execute(self, num_retries: int = 0) -> None:
        self.batch.execute()


_SHARED: dict[tuple[Any, str], GoogleClient] = {}
_SHARED_LOCK = threading.Lock()


def shared_client(
    config: GoogleConfig,
    slot: TokenSlot | None,
    scopes: Sequence[str],
    label: str | None = None,
) -> GoogleClient:
    """One client per Google account in the process, shared by every Google namespace.

    gmail, drive and the rest then refresh one token under one lock and store it once; each
    account (each stored token) has its own client, so one account's refusal touches no other.
    """
    key = (slot.identity if slot is not None else None, str(config.service_account_file or ""))
    with _SHARED_LOCK:
        client = _SHARED.get(key)
        if client is None or client.config != config:
            client = GoogleClient(GoogleAccount(config, slot, scopes, label), config)
            _SHARED[key] = client
        else:
            client.account.scopes = sorted(set(client.account.scopes) | set(scopes))
        return client
