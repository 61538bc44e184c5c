"""The known secrets of this process, and scrubbing them from text that leaves the server.

Secrets are registered where they become known: the HTTP tokens and every `SecretStr` of the
config when the app is built, environment variables whose names say they hold a secret
(`TAVILY_API_KEY`, `MCP_TOOLS_CALDAV_PASSWORD`, `AWS_SECRET_ACCESS_KEY`, ...) at start-up, and
anything a namespace obtains later (an OAuth access token) through `known_secrets.add`.

`scrub` replaces every occurrence of a known secret, and of any prefix of 8 or more of its
characters (what an upstream that cuts its messages leaves), with `[redacted]`. The policy gate
runs it on every result and error; the audit log, approvals and the log formatter use it too.
Secrets shorter than 6 characters are not registered: scrubbing them would mangle ordinary text.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, SecretStr

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 6
PREFIX_CHARS = 8
SECRET_ENV_NAME = re.compile(
    r"PASS(WORD|WD|PHRASE)?|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|CREDENTIAL|PRIVATE_?KEY", re.IGNORECASE
)
NOT_SECRET_ENV_NAME = re.compile(r"_(FILE|PATH|DIR|URL|ID|SOCK|CREDENTIALS)$", re.IGNORECASE)
_PATH_LIKE = re.compile(r"^(/|~|\.{1,2}/|[A-Za-z]:[\\/])")
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s'\"<>]*@)")


class KnownSecrets:
    """A thread-safe set of secret strings with a fast `scrub`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: frozenset[str] = frozenset()

    def add(self, value: str | SecretStr | None) -> None:
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        if not isinstance(value, str):
            return
        value = value.strip()
        if len(value) < MIN_SECRET_CHARS or value in self._values:
            return
        with self._lock:
            self._values = self._values | {value}

    def add_all(self, values: Iterable[str | SecretStr | None]) -> None:
        for value in values:
            self.add(value)

    def add_from_environ(self, environ: Mapping[str, str]) -> None:
        """Values of variables named like secrets (`*_TOKEN`, `*_API_KEY`, `*PASSWORD*`, ...)."""
        for name, value in environ.items():
            if SECRET_ENV_NAME.search(name) and not NOT_SECRET_ENV_NAME.search(name) and not _PATH_LIKE.match(value):
                self.add(value)

    def add_from_model(self, model: Any) -> None:
        """Every `SecretStr` inside a validated config model (nested models, lists and dicts too)."""
        if isinstance(model, SecretStr):
            self.add(model)
        elif isinstance(model, BaseModel):
            for name in type(model).model_fields:
                self.add_from_model(getattr(model, name, None))
        elif isinstance(model, Mapping):
            for item in model.values():
                self.add_from_model(item)
        elif isinstance(model, list | tuple):
            for item in model:
                self.add_from_model(item)

    def clear(self) -> None:
        with self._lock:
            self._values = frozenset()

    def __len__(self) -> int:
        return len(self._values)

    def present(self, text: str) -> bool:
        """Whether `text` holds a known secret or an 8+ character prefix of one (JSON-escaped too)."""
        for secret in self._values:
            for head in _heads(secret):
                if head in text:
                    return True
        return False

    def scrub(self, text: str) -> str:
        for secret in sorted(self._values, key=len, reverse=True):
            text = _scrub_one(text, secret)
        return text

    def scrub_value(self, value: Any) -> Any:
        """A copy of a JSON-like value with every string scrubbed (keys too)."""
        if not self._values:
            return value
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, dict):
            return {self.scrub(str(k)) if isinstance(k, str) else k: self.scrub_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.scrub_value(item) for item in value]
        return value


def _heads(secret: str) -> tuple[str, ...]:
    head = secret[:PREFIX_CHARS]
    escaped = json.dumps(head, ensure_ascii=False)[1:-1]
    return (head,) if escaped == head else (head, escaped)


def _scrub_one(text: str, secret: str) -> str:
    """Replace the secret and any prefix of PREFIX_CHARS or more of it."""
    if len(secret) < PREFIX_CHARS:
        return text.replace(secret, REDACTED)
    head = secret[:PREFIX_CHARS]
    start = text.find(head)
    if start < 0:
        return text
    out: list[str] = []
    position = 0
    while start >= 0:
        end = start + PREFIX_CHARS
        while end < len(text) and end - start < len(secret) and text[end] == secret[end - start]:
            end += 1
        out.append(text[position:start])
        out.append(REDACTED)
        position = end
        start = text.find(head, position)
    out.append(text[position:])
    return "".join(out)


def strip_userinfo(text: str) -> str:
    """Every `scheme://user:password@host` in `text` without the `user:password@`."""
    if "@" not in text or "://" not in text:
        return text
    return _URL_USERINFO.sub(lambda match: match["scheme"], text)


def scrub_text(text: str) -> str:
    """What every message leaving the server passes through: known secrets and URL credentials out."""
    return strip_userinfo(known_secrets.scrub(text))


known_secrets = KnownSecrets()
