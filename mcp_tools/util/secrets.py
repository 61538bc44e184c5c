r"""The known secrets of this process, and scrubbing them from text that leaves the server.

Secrets are registered where they become known: the HTTP tokens and every `SecretStr` of the
config when the app is built, environment variables whose names say they hold a secret
(`TAVILY_API_KEY`, `MCP_TOOLS_CALDAV_PASSWORD`, `AWS_SECRET_ACCESS_KEY`, ...) at start-up, and
anything a namespace obtains later (an OAuth access token) through `known_secrets.add`.

`scrub` replaces with `[redacted]`, in one pass and whatever order the secrets were added in:

- every known secret, and every prefix of it long enough to identify it (what an upstream
  that cuts its messages leaves): a prefix counts only past the secret's wordy lead (`tvly-dev-`,
  `Bearer `, `approval`: words and separators any text may hold) plus a few characters, so
  ordinary words are never cut out of results;
- its encoded forms: base64 and base64url (in each of the three alignments it can have inside
  a longer base64 stream), hex, and any mix of URL (`%2F`) and JSON escapes (`\/`, `\u00XX`).

Where matches overlap, their union goes. The policy gate runs it on every result and error; the
audit log, approvals and the log formatter use it too. Secrets shorter than 6 characters are not
registered: scrubbing them would mangle ordinary text.
"""

from __future__ import annotations

import base64
import bisect
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel, SecretStr

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 6
PREFIX_CHARS = 8  # the shortest prefix that counts, and the length of the search keys
PAST_LEAD_CHARS = 4  # characters past the wordy lead that make a prefix identifying
MAX_PREFIX_CHARS = 20  # a prefix this long always counts, however wordy
SECRET_ENV_NAME = re.compile(
    r"PASS(WORD|WD|PHRASE)?|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|CREDENTIAL|PRIVATE_?KEY", re.IGNORECASE
)
NOT_SECRET_ENV_NAME = re.compile(r"_(FILE|PATH|DIR|URL|ID|SOCK|CREDENTIALS)$", re.IGNORECASE)
_PATH_LIKE = re.compile(r"^(/|~|\.{1,2}/|[A-Za-z]:[\\/])")
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s'\"<>]*@)")
# Words followed by separators (`tvly-dev-`, `Bearer `, `sk-proj-`), then a run of letters: what
# a secret may share with ordinary text or with every other key of its vendor.
_WORDY_LEAD = re.compile(r"(?:[A-Za-z]+[-_.:/ ]+)*[A-Za-z]*")
# An HTTP authorization value: a scheme word, then the credential itself.
_SCHEME_VALUE = re.compile(
    r"(?:bearer|basic|digest|token|bot|key|apikey|api-key|negotiate|sso-key)\s+(?P<credential>\S+)", re.IGNORECASE
)
# JSON string escapes with one letter; URL escapes (`%2F`) and `\u00XX` are decoded too (secrets are
# text a header or a URL carries), for the characters some form holds.
_JSON_SIMPLE = {"\\": "\\", "/": "/", '"': '"', "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def identifying_chars(secret: str) -> int:
    """How many leading characters of `secret` identify it: past its wordy lead, at least 8."""
    lead = _WORDY_LEAD.match(secret)
    lead_chars = lead.end() if lead else 0
    return min(len(secret), max(PREFIX_CHARS, min(lead_chars + PAST_LEAD_CHARS, MAX_PREFIX_CHARS)))


def _base64_cores(data: bytes, prefix_bytes: int) -> list[tuple[str, int]]:
    """The base64 and base64url characters that only `data` decides, in each of the 3 alignments it
    can have inside a longer stream, with how many of them cover its first `prefix_bytes` bytes."""
    cores: list[tuple[str, int]] = []
    for shift in range(3):
        encoded = base64.b64encode(bytes(shift) + data).decode("ascii")
        start = -(-shift * 8 // 6)  # the first character with no bit of the padding before it
        stop = (shift + len(data)) * 8 // 6  # past the last character with no bit of what follows
        covered = -(-(shift + prefix_bytes) * 8 // 6)
        core = encoded[start:stop]
        if len(core) >= PREFIX_CHARS:
            need = min(len(core), max(PREFIX_CHARS, covered - start))
            cores.append((core, need))
            cores.append((core.replace("+", "-").replace("/", "_"), need))
    return cores


def encoded_forms(secret: str) -> list[tuple[str, int]]:
    """Each form a secret can leave in, with the length of its shortest prefix that counts."""
    ident = identifying_chars(secret)
    data = secret.encode("utf-8")
    prefix_bytes = len(secret[:ident].encode("utf-8"))
    forms = [(secret, ident), *_base64_cores(data, prefix_bytes)]
    hexed = data.hex()
    forms += [(hexed, 2 * prefix_bytes), (hexed.upper(), 2 * prefix_bytes)]
    return forms


class _Matcher:
    """Compiled alternations of every form's first 8 characters, as a trie so a position is dismissed
    after a character or two; each hit is extended to the longest form it starts, so the result does
    not depend on the order secrets were added in. Base64 and hex forms are looked for only inside
    runs of their alphabet, which ordinary prose rarely has."""

    def __init__(self, secrets: Iterable[str]) -> None:
        by_head: dict[str, list[tuple[str, int]]] = {}
        plain: set[str] = set()
        encoded: set[str] = set()
        shortest = PREFIX_CHARS * 4  # the fewest characters an encoded match can have
        for secret in secrets:
            for index, (form, need) in enumerate(encoded_forms(secret)):
                by_head.setdefault(form[:PREFIX_CHARS], []).append((form, need))
                (encoded if index else plain).add(form[:PREFIX_CHARS])
                shortest = min(shortest, need) if index else shortest
        self.by_head = by_head
        self.alphabet = frozenset("".join(form for forms in by_head.values() for form, _ in forms))
        self.plain = re.compile(_trie(plain)) if plain else None
        self.encoded = re.compile(_trie(encoded - plain)) if encoded - plain else None
        # runs too short to hold one (most words) are skipped without a second look
        self.runs = re.compile(f"[A-Za-z0-9+/_-]{{{max(shortest, PREFIX_CHARS)},}}")
        self.longest = max((len(form) for forms in by_head.values() for form, _ in forms), default=0)
        self.escapes = _escape_pattern(self.alphabet)

    def spans(self, text: str, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, int]]:
        """Every (start, end) of a known secret or an identifying prefix of one, overlaps included,
        that starts between `start` and `stop`."""
        stop = len(text) if stop is None else stop
        if self.plain is not None:
            yield from self._search(self.plain, text, start, stop)
        if self.encoded is not None:
            for run in self.runs.finditer(text, start, stop):
                yield from self._search(self.encoded, text, run.start(), run.end())

    def _search(self, pattern: re.Pattern[str], text: str, start: int, stop: int) -> Iterator[tuple[int, int]]:
        match = pattern.search(text, start, stop)
        while match is not None:
            start = match.start()
            best = 0
            for form, need in self.by_head[match.group()]:
                length = _common_prefix(text, start, form)
                if length >= need and length > best:
                    best = length
            if best:
                yield start, start + best
            match = pattern.search(text, start + 1, stop)


def _escape_pattern(alphabet: frozenset[str]) -> re.Pattern[str]:
    """URL and JSON escapes of the characters some form holds (any case of hex digits), and `\\\\`,
    consumed so that an escaped backslash never starts an escape."""
    codes = sorted(f"{ord(char):02x}" for char in alphabet if ord(char) < 256)
    options = [r"\\\\"]
    if codes:
        hexes = "|".join(codes)
        # each option starts with "%" or "\\" outside any case-insensitive group, so the search jumps
        # from one of those characters to the next instead of trying every position
        options.append(f"%(?i:{hexes})")
        options.append(f"\\\\(?i:u)00(?i:{hexes})")
    options += [
        re.escape("\\" + letter) for letter, char in _JSON_SIMPLE.items() if char in alphabet and letter != "\\"
    ]
    return re.compile("|".join(options))


def _trie(words: Iterable[str]) -> str:
    """A regex matching any of `words`, longest first, nested by shared prefixes."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + pattern(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return pattern(root)


def _common_prefix(text: str, start: int, form: str) -> int:
    """How many characters of `form` match `text` from `start`."""
    if text.startswith(form, start):
        return len(form)
    low, high = PREFIX_CHARS, min(len(form), len(text) - start)
    while low < high:  # the longest matching prefix, by bisection on startswith (runs in C)
        middle = (low + high + 1) // 2
        if text.startswith(form[:middle], start):
            low = middle
        else:
            high = middle - 1
    return low if text.startswith(form[:low], start) else 0


class _Decoded:
    """`text` with URL and JSON escapes decoded, and the way back to positions in `text`."""

    def __init__(self, text: str, escapes: re.Pattern[str]) -> None:
        pieces: list[str] = []
        self.at: list[int] = []  # decoded position of each escape
        self.origin: list[tuple[int, int]] = []  # its span in text
        self.shift: list[int] = []  # characters saved up to and including it
        position = saved = 0
        for match in escapes.finditer(text):
            escape = match.group()
            if escape == "\\\\":  # an escaped backslash: no form runs through it
                continue
            if escape[0] == "%":
                char = chr(int(escape[1:], 16))
            elif escape[1] in "uU":
                char = chr(int(escape[2:], 16))
            else:
                char = _JSON_SIMPLE[escape[1]]
            pieces.append(text[position : match.start()])
            self.at.append(match.start() - saved)
            self.origin.append(match.span())
            saved += len(escape) - 1
            self.shift.append(saved)
            pieces.append(char)
            position = match.end()
        pieces.append(text[position:])
        self.text = "".join(pieces)

    def windows(self, reach: int) -> list[tuple[int, int]]:
        """The stretches of the decoded text where a match `reach` long can run through an escape."""
        merged: list[tuple[int, int]] = []
        for index in self.at:
            low, high = max(0, index - reach), min(len(self.text), index + reach)
            if merged and low <= merged[-1][1]:
                merged[-1] = (merged[-1][0], high)
            else:
                merged.append((low, high))
        return merged

    def start_of(self, index: int) -> int:
        found = bisect.bisect_left(self.at, index)
        if found < len(self.at) and self.at[found] == index:
            return self.origin[found][0]
        return index + (self.shift[found - 1] if found else 0)

    def end_of(self, index: int) -> int:
        """Where the decoded character before `index` ends in text."""
        last = index - 1
        found = bisect.bisect_left(self.at, last)
        if found < len(self.at) and self.at[found] == last:
            return self.origin[found][1]
        return index + (self.shift[found - 1] if found else 0)


def _decoded(text: str, matcher: _Matcher) -> _Decoded | None:
    """The decoded view of `text`, when it holds an escape of a character some form has."""
    if "%" not in text and "\\" not in text:
        return None
    decoded = _Decoded(text, matcher.escapes)
    return decoded if decoded.at else None


def _decoded_spans(text: str, matcher: _Matcher) -> Iterator[tuple[int, int]]:
    """Matches that run through an escape, as spans of `text`."""
    decoded = _decoded(text, matcher)
    if decoded is None:
        return
    for low, high in decoded.windows(matcher.longest):
        for start, end in matcher.spans(decoded.text, low, high):
            yield decoded.start_of(start), decoded.end_of(end)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


class KnownSecrets:
    """A thread-safe set of secret strings with a fast `scrub`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: frozenset[str] = frozenset()
        self._matcher = _Matcher(())

    def add(self, value: str | SecretStr | None) -> None:
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        if not isinstance(value, str):
            return
        value = value.strip()
        scheme = _SCHEME_VALUE.fullmatch(value)
        if scheme:  # `Bearer abc...`: the credential is what follows the scheme word
            value = scheme["credential"]
        if len(value) < MIN_SECRET_CHARS or value in self._values:
            return
        with self._lock:
            self._values = self._values | {value}
            self._matcher = _Matcher(self._values)

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
            self._matcher = _Matcher(())

    def __len__(self) -> int:
        return len(self._values)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The merged (start, end) spans of `text` that hold a known secret in any of its forms."""
        matcher = self._matcher
        if not matcher.by_head:
            return []
        return _merged([*matcher.spans(text), *_decoded_spans(text, matcher)])

    def present(self, text: str) -> bool:
        """Whether `text` holds a known secret, an identifying prefix of one, or an encoded form."""
        matcher = self._matcher
        if not matcher.by_head:
            return False
        return next(matcher.spans(text), None) is not None or next(_decoded_spans(text, matcher), None) is not None

    def scrub(self, text: str) -> str:
        spans = self.spans(text)
        if not spans:
            return text
        out: list[str] = []
        position = 0
        for start, end in spans:
            out += [text[position:start], REDACTED]
            position = end
        out.append(text[position:])
        return "".join(out)

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


def strip_userinfo(text: str) -> str:
    """Every `scheme://user:password@host` in `text` without the `user:password@`."""
    if "@" not in text or "://" not in text:
        return text
    return _URL_USERINFO.sub(lambda match: match["scheme"], text)


def scrub_text(text: str) -> str:
    """What every message leaving the server passes through: known secrets and URL credentials out."""
    return strip_userinfo(known_secrets.scrub(text))


known_secrets = KnownSecrets()
