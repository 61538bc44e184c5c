"""Resource addresses: `<namespace>://<root>/<path>`, percent-encoded; `""` is the default root.

`files:///Reports/2026.pdf` is a file of the files store, `notes:///Projects/Plan.md` a note of the
default vault, `notes://work/Plan.md` a note of the vault labelled `work`. A parsed path is only
what was written: containment is the read tool's, through the policy gate.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

MAX_URI_CHARS = 4096


@dataclass(frozen=True)
class Address:
    namespace: str
    root: str
    path: str

    @property
    def uri(self) -> str:
        return f"{self.namespace}://{quote(self.root, safe='')}/{quote(self.path, safe='/')}"


class BadAddress(ValueError):
    """A URI that names no resource of ours; the message says why."""


def address_of(uri: str) -> Address:
    if len(uri) > MAX_URI_CHARS:
        raise BadAddress(f"the URI is longer than {MAX_URI_CHARS} characters")
    try:
        parts = urlsplit(uri)
    except ValueError:
        raise BadAddress("the URI cannot be parsed") from None
    if parts.query or parts.fragment or "?" in uri or "#" in uri:
        raise BadAddress("a resource URI has no query or fragment")
    if not parts.scheme or not uri.startswith(f"{parts.scheme}://"):
        raise BadAddress("a resource URI looks like files:///<path> or notes:///<path>")
    if parts.port is not None or "@" in parts.netloc or ":" in parts.netloc:
        raise BadAddress("the part after :// is a vault label, nothing else")
    path = parts.path[1:] if parts.path.startswith("/") else parts.path
    try:
        return Address(parts.scheme.lower(), unquote(parts.netloc, errors="strict"), unquote(path, errors="strict"))
    except UnicodeDecodeError:
        raise BadAddress("the URI's percent-escapes are not UTF-8") from None


def encode_cursor(namespace: str, root: str, after: str) -> str:
    raw = json.dumps([namespace, root, after], ensure_ascii=False).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii")


def decode_cursor(cursor: str) -> tuple[str, str, str]:
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")).decode("utf-8"))
    except (ValueError, UnicodeError, binascii.Error):
        raise BadAddress("invalid cursor: pass back nextCursor of the last page as it was") from None
    if not (isinstance(value, list) and len(value) == 3 and all(isinstance(part, str) for part in value)):
        raise BadAddress("invalid cursor: pass back nextCursor of the last page as it was")
    return value[0], value[1], value[2]
