"""A fake Google on 127.0.0.1: OAuth endpoints, the batch endpoint and the APIs' methods.

Every API request is checked against its discovery document and its bearer token (known,
unexpired, holding a scope the method accepts) before any handler runs; a request Google
would refuse is refused here too and recorded in `violations`, which the tests assert empty.
Errors can be injected per method: `fail("gmail.users.messages.get", 429, times=1)`.

Several accounts: `work = google.add_account("alice@corp.example")` is a second account with its
own APIs (`FakeGmail(work)`, `FakeDrive(work)`...), served by the same server. Google tells
accounts apart by the access token alone, and so does the fake: each token (and the refresh token
it came from) belongs to one account, a request reaches that account's mailbox, files, tasks and
calendar only, and `requests` records (account, method id) for each call.
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
import hashlib
import json
import re
import secrets
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.processes import STOP_POLL_SECONDS
from tests.servers.fake_google.discovery import Discovery, Rejected
from tests.servers.fake_google.resumable import ResumableUploads

SCOPE_PREFIX = "https://www.googleapis.com/auth/"
ERROR_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ALREADY_EXISTS",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}
REASON_MESSAGES = {
    "insufficientPermissions": "Request had insufficient authentication scopes.",
    "accessNotConfigured": (
        "Gmail API has not been used in project 123456 before or it is disabled. Enable it by visiting "
        "https://console.developers.google.com/apis/api/gmail.googleapis.com/overview?project=123456 then retry."
    ),
    "rateLimitExceeded": "Rate Limit Exceeded",
    "userRateLimitExceeded": "User-rate limit exceeded.",
    "dailyLimitExceeded": "Daily Limit Exceeded",
    "forbidden": "Forbidden",
    "domainPolicy": "The domain administrators have disabled Gmail apps.",
}


def google_error(status: int, message: str, reason: str | None = None) -> dict[str, Any]:
    reason = reason or {400: "invalidArgument", 401: "authError", 404: "notFound", 429: "rateLimitExceeded"}.get(
        status, "backendError"
    )
    error: dict[str, Any] = {
        "code": status,
        "message": message,
        "errors": [{"message": message, "domain": "global", "reason": reason}],
        "status": ERROR_STATUS.get(status, "UNKNOWN"),
    }
    if reason == "insufficientPermissions":
        error["details"] = [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "ACCESS_TOKEN_SCOPE_INSUFFICIENT"}
        ]
    if reason == "accessNotConfigured":
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "SERVICE_DISABLED"}]
    return {"error": error}


def parse_fields(text: str) -> dict[str, Any]:
    """Google's partial-response mask (`a,b(c,d/e)`) as a tree; a leaf (None) keeps everything."""
    position = 0
    text = text.replace(" ", "")

    def level() -> dict[str, Any]:
        nonlocal position
        tree: dict[str, Any] = {}
        while position < len(text) and text[position] != ")":
            name = ""
            while position < len(text) and text[position] not in ",()":
                name += text[position]
                position += 1
            sub: dict[str, Any] | None = None
            if position < len(text) and text[position] == "(":
                position += 1
                sub = level()
                position += 1  # the closing parenthesis
            parts = name.split("/")
            node = tree
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = sub
            if position < len(text) and text[position] == ",":
                position += 1
        return tree

    return level()


def apply_fields(value: Any, tree: dict[str, Any] | None) -> Any:
    if tree is None:
        return value
    if isinstance(value, list):
        return [apply_fields(item, tree) for item in value]
    if isinstance(value, dict):
        return {key: apply_fields(item, tree[key]) for key, item in value.items() if key in tree}
    return value


def remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4, which servers in front of an API apply before routing."""
    out: list[str] = []
    for segment in path.split("/"):
        if segment == "..":
            if len(out) > 1:
                out.pop()
        elif segment != ".":
            out.append(segment)
    if path.endswith(("/.", "/..")):
        out.append("")
    return "/".join(out) or "/"


class ApiError(Exception):
    def __init__(self, status: int, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.reason = status, message, reason


@dataclass
class Injected:
    status: int
    reason: str | None
    times: int
    retry_after: int | None = None
    message: str | None = None


@dataclass
class Token:
    scopes: set[str]
    expires_at: float
    account: str


@dataclass
class Response:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, status: int, payload: Any, headers: dict[str, str] | None = None) -> Response:
        return cls(
            status, json.dumps(payload).encode(), {"Content-Type": "application/json; charset=UTF-8", **(headers or {})}
        )


class FakeGoogle:
    """State shared by the endpoints; the API handlers (`apis`) are added by each fake API."""

    def __init__(self, account: str = "me@example.com") -> None:
        self.account = account
        self.root = self  # the account whose server answers (itself, unless made by `add_account`)
        self.accounts: dict[str, FakeGoogle] = {account.lower(): self}  # email -> its account's APIs
        self.requests: list[tuple[str, str]] = []  # (account, method id) of every API call
        self.refresh_accounts: dict[str, str] = {}  # refresh token -> account
        self.signed_in_as = account  # who the consent screen signs in (the browser's Google session)
        self.lock = threading.RLock()
        self.apis: dict[str, tuple[Discovery, Any]] = {}  # path prefix -> (discovery, handler object)
        # Drive's files by id: the Drive fake's own, and the Docs and Sheets fakes' documents as
        # Drive sees them (a Doc is a Drive file: its owners and permissions live there)
        self.drive_files: dict[str, Any] = {}
        self.tokens: dict[str, Token] = {}
        self.refresh_tokens: dict[str, set[str]] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.clients: dict[str, str] = {}  # client_id -> client_secret
        self.service_accounts: dict[str, str] = {}  # client_email -> subject allowed ("*": any)
        self.injected: dict[str, list[Injected]] = defaultdict(list)
        self.violations: list[str] = []
        self.calls: list[str] = []  # method ids, in order received
        self.token_requests: list[dict[str, str]] = []
        self.revoked: list[str] = []  # tokens sent to the revocation endpoint
        self.access_token_seconds = 3600
        # Called with the method id and headers before each API call is answered (a resumable
        # upload's chunks as "<method id>:put"), outside the fake's lock: a test may block in it.
        self.hold: Callable[[str, dict[str, str]], None] | None = None
        self.resumable = ResumableUploads(self)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- life ---------------------------------------------------------------------------------
    def start(self) -> FakeGoogle:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                response = fake.dispatch(self.command, self.path, dict(self.headers.items()), body)
                self.send_response(response.status)
                for key, value in response.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(response.body)))
                self.end_headers()
                self.wfile.write(response.body)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(STOP_POLL_SECONDS,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        if self.root is not self:
            return self.root.url
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    # --- set-up helpers for tests ---------------------------------------------------------------
    def add_client(self) -> tuple[str, str]:
        client_id = f"{secrets.token_hex(6)}.apps.googleusercontent.com"
        self.clients[client_id] = "GOCSPX-" + secrets.token_urlsafe(18)
        return client_id, self.clients[client_id]

    def client_secrets(self, client_id: str) -> dict[str, Any]:
        return {
            "installed": {
                "client_id": client_id,
                "client_secret": self.clients[client_id],
                "auth_uri": self.url + "o/oauth2/auth",
                "token_uri": self.url + "token",
                "redirect_uris": ["http://localhost"],
            }
        }

    def add_account(self, email: str) -> FakeGoogle:
        """Another Google account on this server, with its own APIs: `FakeGmail(google.add_account(...))`.

        It shares the server, its OAuth clients and the records (`calls`, `requests`, `violations`,
        `token_requests`, injected errors); its tokens open its own data only."""
        root = self.root
        account = FakeGoogle(email)
        account.root = root
        account.accounts = root.accounts
        for name in (
            "lock",
            "tokens",
            "refresh_tokens",
            "refresh_accounts",
            "codes",
            "clients",
            "service_accounts",
            "injected",
            "violations",
            "calls",
            "requests",
            "token_requests",
            "revoked",
        ):
            setattr(account, name, getattr(root, name))
        account.access_token_seconds = root.access_token_seconds
        with root.lock:
            root.accounts[email.lower()] = account
        return account

    def issue(self, scopes: list[str], seconds: int | None = None, account: str | None = None) -> tuple[str, str]:
        """An access token and a refresh token for these scopes, of this account (or `account`)."""
        owner = account or self.account
        access = "ya29." + secrets.token_urlsafe(24)
        refresh = "1//" + secrets.token_urlsafe(32)
        with self.lock:
            self.tokens[access] = Token(set(scopes), time.time() + (seconds or self.access_token_seconds), owner)
            self.refresh_tokens[refresh] = set(scopes)
            self.refresh_accounts[refresh] = owner
        return access, refresh

    def revoke_refresh_tokens(self, account: str | None = None) -> None:
        """Every refresh token, or only those of `account` (and the access tokens it holds)."""
        with self.lock:
            if account is None:
                self.refresh_tokens.clear()
                return
            for refresh, owner in list(self.refresh_accounts.items()):
                if owner.lower() == account.lower():
                    self.refresh_tokens.pop(refresh, None)
            for access, token in list(self.tokens.items()):
                if token.account.lower() == account.lower():
                    del self.tokens[access]

    def for_account(self, email: str) -> FakeGoogle:
        """The account's own APIs (this one's for an address without them: a service account's subject)."""
        return self.root.accounts.get(email.lower(), self.root)

    def calls_for(self, email: str) -> list[str]:
        """The method ids called with a token of `email`, in order."""
        with self.lock:
            return [method for account, method in self.requests if account.lower() == email.lower()]

    def fail(
        self,
        method_id: str,
        status: int,
        reason: str | None = None,
        times: int = 1,
        retry_after: int | None = None,
        message: str | None = None,
    ) -> None:
        """The next `times` calls of the method (or "batch", "token") answer with this error."""
        with self.lock:
            self.injected[method_id].append(Injected(status, reason, times, retry_after, message))

    def _take_injected(self, key: str) -> Injected | None:
        with self.lock:
            queue = self.injected.get(key)
            if not queue:
                return None
            item = queue[0]
            item.times -= 1
            if item.times <= 0:
                queue.pop(0)
            return item

    # --- dispatch ---------------------------------------------------------------------------------
    def dispatch(self, verb: str, target: str, headers: dict[str, str], body: bytes) -> Response:
        parts = urlsplit(target)
        path = remove_dot_segments(parts.path)  # as Google's front end does: `lists/L/tasks/..` is list L
        try:
            if path == "/token" and verb == "POST":
                return self.token_endpoint(body)
            if path == "/revoke" and verb == "POST":
                return self.revoke(parse_qs(parts.query), body)
            if path == "/o/oauth2/auth" and verb == "GET":
                return self.authorize(parse_qs(parts.query))
            if (path == "/batch" or path.startswith("/batch/")) and verb == "POST":
                return self.batch(headers, body)
            return self.api_call(verb, path, parse_qs(parts.query, keep_blank_values=True), headers, body)
        except ApiError as error:
            return Response.json(error.status, google_error(error.status, error.message, error.reason))

    def api_call(
        self, verb: str, path: str, query: dict[str, list[str]], headers: dict[str, str], body: bytes
    ) -> Response:
        lowered = {key.lower(): value for key, value in headers.items()}
        if "upload_id" in query:
            return self.resumable.chunk(verb, query["upload_id"][0], lowered, body)
        override = lowered.pop("x-http-method-override", None)
        if override is not None:
            # googleapiclient sends a GET whose address passes 2,048 characters as a POST with
            # the query in a form body; Google accepts that, so the fake does too
            if verb != "POST" or "x-www-form-urlencoded" not in lowered.get("content-type", ""):
                self.violations.append(f"{verb} {path}: X-HTTP-Method-Override needs a POST with a form body")
                raise ApiError(400, "Bad Request")
            verb = override.upper()
            for key, values in parse_qs(body.decode(), keep_blank_values=True).items():
                query.setdefault(key, []).extend(values)
            body = b""
            lowered.pop("content-type", None)
        owner = self._token_account(lowered.get("authorization", ""))
        apis = self.for_account(owner).apis if owner else self.apis
        for prefix, (discovery, handler) in apis.items():
            if not path.startswith(prefix) and not path.startswith("/upload" + prefix):
                continue
            found = discovery.match(verb, path)
            if found is None:
                self.violations.append(f"{verb} {path}: no such method")
                raise ApiError(404, f"Method not found: {verb} {path}", "notFound")
            method, path_params = found
            self.calls.append(method.id)
            token = self.check_token(lowered.get("authorization", ""), method.scopes)
            self.requests.append((token.account, method.id))
            try:
                discovery.check_query(method, query, path_params)
                payload: Any = None
                if method.upload:
                    payload, body, lowered["x-upload-content-type"] = self._upload(query, lowered, body)
                elif body:
                    if "json" not in lowered.get("content-type", ""):
                        raise Rejected(f"{method.id}: request body must be JSON")
                    payload = json.loads(body)
                discovery.check_body(method, payload)
            except Rejected as error:
                self.violations.append(f"{method.id}: {error}")
                raise ApiError(400, str(error), "invalidArgument") from None
            injected = self._take_injected(method.id)
            if injected is not None:
                extra = {"Retry-After": str(injected.retry_after)} if injected.retry_after is not None else {}
                message = injected.message or REASON_MESSAGES.get(injected.reason or "", f"injected {injected.status}")
                return Response.json(injected.status, google_error(injected.status, message, injected.reason), extra)
            params = {
                key: values if method.parameters.get(key, {}).get("repeated") else values[0]
                for key, values in query.items()
            }
            if self.hold is not None:
                self.hold(method.id, lowered)
            if method.upload and self.resumable.asked(query):
                return self.resumable.start(
                    handler, method.id, path, path_params, params, payload, lowered, method.scopes
                )
            with self.lock:
                result = handler.handle(
                    method.id, path_params, params, payload, token, body if method.upload else None, lowered
                )
            if isinstance(result, Response):
                return result
            if "fields" in query:
                result = apply_fields(result, parse_fields(query["fields"][0]))
            return Response.json(200, result if result is not None else {})
        raise ApiError(404, f"Not Found: {path}", "notFound")

    @staticmethod
    def _upload(query: dict[str, list[str]], headers: dict[str, str], body: bytes) -> tuple[Any, bytes, str]:
        """uploadType=media (the bytes alone) or multipart (JSON metadata, then the bytes); and the
        media's own content type, which handlers read as the `x-upload-content-type` header."""
        kind = (query.get("uploadType") or [""])[0]
        if kind == "media":
            return None, body, headers.get("content-type", "")
        if kind == "resumable":  # the metadata now, the media in the session's chunks
            return json.loads(body or b"{}"), b"", headers.get("x-upload-content-type", "")
        if kind != "multipart":
            raise Rejected(f"uploadType {kind!r} is not served by this fake (media, multipart or resumable)")
        content_type = headers.get("content-type", "")
        if not content_type.startswith("multipart/related"):
            raise Rejected("a multipart upload must be multipart/related")
        boundary = re.search(r'boundary="?([^";]+)"?', content_type)
        if boundary is None:
            raise Rejected("a multipart upload needs a boundary")
        delimiter = b"--" + boundary.group(1).encode()
        parts = [part for part in body.split(delimiter)[1:] if not part.startswith(b"--")]
        if len(parts) != 2:
            raise Rejected("a multipart upload holds the JSON metadata, then the media")
        split = []
        for part in parts:
            part = part.removeprefix(b"\r\n").removeprefix(b"\n")
            head, separator, content = part.partition(b"\r\n\r\n")
            if not separator:
                head, _, content = part.partition(b"\n\n")
            split.append((head.decode("latin-1").lower(), content.removesuffix(b"\r\n").removesuffix(b"\n")))
        if "json" not in split[0][0]:
            raise Rejected("the first part of a multipart upload is the JSON metadata")
        media_type = re.search(r"^content-type:\s*([^;\r\n]+)", split[1][0], re.MULTILINE)
        return json.loads(split[0][1] or b"{}"), split[1][1], media_type.group(1).strip() if media_type else ""

    def _token_account(self, authorization: str) -> str | None:
        with self.lock:
            token = self.tokens.get(authorization[7:]) if authorization.startswith("Bearer ") else None
        return token.account if token is not None else None

    def check_token(self, authorization: str, accepted: list[str]) -> Token:
        if not authorization.startswith("Bearer "):
            raise ApiError(401, "Request is missing required authentication credential.", "required")
        with self.lock:
            token = self.tokens.get(authorization[7:])
        if token is None or token.expires_at <= time.time():
            raise ApiError(401, "Request had invalid authentication credentials.", "authError")
        if not token.scopes & set(accepted):
            raise ApiError(403, REASON_MESSAGES["insufficientPermissions"], "insufficientPermissions")
        return token

    # --- batch ------------------------------------------------------------------------------------
    def batch(self, headers: dict[str, str], body: bytes) -> Response:
        injected = self._take_injected("batch")
        if injected is not None:
            return Response.json(injected.status, google_error(injected.status, "injected", injected.reason))
        content_type = {k.lower(): v for k, v in headers.items()}.get("content-type", "")
        if not content_type.startswith("multipart/mixed"):
            self.violations.append("batch: not multipart/mixed")
            raise ApiError(400, "batch requests must be multipart/mixed")
        message = email.parser.BytesParser(policy=email.policy.compat32).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + body
        )
        parts = cast(list[Any], message.get_payload())  # a multipart message: its parts
        if len(parts) > 100:
            self.violations.append(f"batch of {len(parts)} requests (limit 100)")
            raise ApiError(400, "Too many requests in batch.")
        boundary = "batch_" + secrets.token_hex(8)
        out: list[bytes] = []
        for part in parts:
            content_id = part["Content-ID"]
            inner: str = part.get_payload(decode=False)
            head, _, inner_body = inner.replace("\r\n", "\n").partition("\n\n")
            lines = head.split("\n")
            verb, target, _ = lines[0].split(" ", 2)
            inner_headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
            response = self.dispatch(verb, target, inner_headers, inner_body.encode())
            reason = {200: "OK"}.get(response.status, "Error")
            out.append(
                (
                    f"--{boundary}\r\nContent-Type: application/http\r\n"
                    f"Content-ID: <response-{content_id[1:-1]}>\r\n\r\n"
                    f"HTTP/1.1 {response.status} {reason}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n"
                ).encode()
                + response.body
                + b"\r\n"
            )
        out.append(f"--{boundary}--\r\n".encode())
        return Response(200, b"".join(out), {"Content-Type": f"multipart/mixed; boundary={boundary}"})

    # --- OAuth ------------------------------------------------------------------------------------
    def authorize(self, query: dict[str, list[str]]) -> Response:
        """The consent screen, already agreed: redirect to the loopback with a code."""
        one = {key: values[0] for key, values in query.items()}
        problems = []
        if one.get("client_id") not in self.clients:
            problems.append("unknown client_id")
        if one.get("response_type") != "code":
            problems.append("response_type must be code")
        if one.get("code_challenge_method") != "S256" or not one.get("code_challenge"):
            problems.append("PKCE (S256) required")
        if one.get("access_type") != "offline":
            problems.append("access_type=offline required for a refresh token")
        redirect = one.get("redirect_uri", "")
        if not redirect.startswith(("http://127.0.0.1:", "http://localhost:")):
            problems.append("redirect_uri must be a loopback address with a port")
        if problems:
            self.violations.append("authorize: " + "; ".join(problems))
            return Response(400, "; ".join(problems).encode(), {"Content-Type": "text/plain"})
        code = "4/" + secrets.token_urlsafe(20)
        scopes = one.get("scope", "").split()
        self.codes[code] = {**one, "scopes": scopes, "account": self.signed_in_as}
        location = redirect + "?" + urlencode({"state": one.get("state", ""), "code": code, "scope": " ".join(scopes)})
        return Response(302, b"", {"Location": location})

    def revoke(self, query: dict[str, list[str]], body: bytes) -> Response:
        """Google's revocation endpoint: a refresh token (or an access token) stops working."""
        form = {key: values[0] for key, values in {**query, **parse_qs(body.decode())}.items()}
        token = form.get("token", "")
        with self.lock:
            self.revoked.append(token)
            if token in self.refresh_tokens:
                del self.refresh_tokens[token]
                return Response.json(200, {})
            if self.tokens.pop(token, None) is not None:
                return Response.json(200, {})
        return Response.json(400, {"error": "invalid_token", "error_description": "Token expired or revoked"})

    def token_endpoint(self, body: bytes) -> Response:
        form = {key: values[0] for key, values in parse_qs(body.decode()).items()}
        self.token_requests.append(form)
        injected = self._take_injected("token")
        if injected is not None:
            return Response.json(injected.status, {"error": injected.reason or "server_error"})
        grant = form.get("grant_type")
        if grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return self._service_account_grant(form)
        if self.clients.get(form.get("client_id", "")) != form.get("client_secret"):
            return Response.json(401, {"error": "invalid_client", "error_description": "Unauthorized"})
        if grant == "refresh_token":
            with self.lock:
                scopes = self.refresh_tokens.get(form.get("refresh_token", ""))
                owner = self.refresh_accounts.get(form.get("refresh_token", ""), self.account)
            if scopes is None:
                return Response.json(
                    400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
                )
            access = "ya29." + secrets.token_urlsafe(24)
            with self.lock:
                self.tokens[access] = Token(scopes, time.time() + self.access_token_seconds, owner)
            return Response.json(
                200,
                {
                    "access_token": access,
                    "expires_in": self.access_token_seconds,
                    "scope": " ".join(sorted(scopes)),
                    "token_type": "Bearer",
                },
            )
        if grant == "authorization_code":
            issued = self.codes.pop(form.get("code", ""), None)
            if issued is None:
                return Response.json(400, {"error": "invalid_grant", "error_description": "Malformed auth code."})
            verifier = form.get("code_verifier", "")
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if challenge != issued["code_challenge"]:
                self.violations.append("token: PKCE code_verifier does not match the challenge")
                return Response.json(400, {"error": "invalid_grant", "error_description": "Invalid code verifier."})
            if form.get("redirect_uri") != issued["redirect_uri"]:
                self.violations.append("token: redirect_uri differs from the authorization request")
                return Response.json(400, {"error": "redirect_uri_mismatch"})
            access, refresh = self.issue(issued["scopes"], account=issued["account"])
            return Response.json(
                200,
                {
                    "access_token": access,
                    "refresh_token": refresh,
                    "expires_in": self.access_token_seconds,
                    "scope": " ".join(issued["scopes"]),
                    "token_type": "Bearer",
                },
            )
        return Response.json(400, {"error": "unsupported_grant_type"})

    def _service_account_grant(self, form: dict[str, str]) -> Response:
        assertion = form.get("assertion", "")
        try:
            payload = json.loads(base64.urlsafe_b64decode(assertion.split(".")[1] + "=="))
        except (IndexError, ValueError):
            return Response.json(400, {"error": "invalid_grant", "error_description": "Invalid JWT."})
        allowed = self.service_accounts.get(payload.get("iss", ""))
        if allowed is None or (allowed != "*" and payload.get("sub") != allowed):
            return Response.json(
                401,
                {
                    "error": "unauthorized_client",
                    "error_description": "Client is unauthorized to retrieve access tokens.",
                },
            )
        scopes = set(payload.get("scope", "").split())
        access = "ya29.sa-" + secrets.token_urlsafe(24)
        with self.lock:
            self.tokens[access] = Token(scopes, time.time() + self.access_token_seconds, payload.get("sub", ""))
        return Response.json(
            200, {"access_token": access, "expires_in": self.access_token_seconds, "token_type": "Bearer"}
        )
