"""A stateful fake of the Drive API v3: files, folders, search by `q`, downloads, exports, sharing.

Requests are validated against the shipped drive.v3 discovery document by `FakeGoogle`; this
module answers them as Drive does: `q` is parsed and evaluated (a malformed one is 400 "Invalid
Value"), trashed files are listed unless `trashed = false` says otherwise, every change bumps
the file's `version`, native Google files cannot be downloaded (403 fileNotDownloadable) and are
exported through `exporters[google mime type]` (403 exportSizeLimitExceeded above 10 MB), and a
token holding only drive.file sees only the files the app created or was given.

A spreadsheet's sheets are also served through a minimal stand-in of the Sheets API v4
(`spreadsheets.get` for the sheet names, `spreadsheets.values.get` for one sheet), unless a
fuller fake of that API is registered (before the drive fake, or after it: then the stand-in
hands every request on to it).
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import itertools
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from tests.servers.fake_google.discovery import Discovery
from tests.servers.fake_google.server import ApiError, FakeGoogle, Response, Token

FOLDER = "application/vnd.google-apps.folder"
DOC = "application/vnd.google-apps.document"
SHEET = "application/vnd.google-apps.spreadsheet"
SLIDES = "application/vnd.google-apps.presentation"
SHORTCUT = "application/vnd.google-apps.shortcut"
EXPORT_LIMIT = 10 * 1024 * 1024
# what Drive converts into each Google type on upload (a subset: the text forms)
IMPORTS = {
    "application/vnd.google-apps.document": {"text/markdown", "text/plain", "text/html", "application/rtf"},
    "application/vnd.google-apps.spreadsheet": {"text/csv", "text/tab-separated-values"},
    "application/vnd.google-apps.presentation": {"text/plain"},
}
WIDE_SCOPES = {"https://www.googleapis.com/auth/drive", "https://www.googleapis.com/auth/drive.readonly"}
FIELDS = ("name", "fullText", "mimeType", "modifiedTime", "createdTime", "trashed", "starred", "sharedWithMe")
LISTS = ("parents", "owners", "writers", "readers")


@dataclass
class FakeFile:
    id: str
    name: str
    mime_type: str
    parents: list[str]
    content: bytes = b""
    sheets: dict[str, list[list[str]]] = field(default_factory=dict)  # a spreadsheet's sheets, in order
    owners: list[str] = field(default_factory=list)
    trashed: bool = False
    starred: bool = False
    shared_with_me: bool = False
    app: bool = True  # created by or opened with this app: what drive.file reaches
    version: int = 1
    modified: str = ""
    created: str = ""
    permissions: list[dict[str, Any]] = field(default_factory=list)
    shortcut_target: str = ""  # a shortcut's target id
    shared_drive: bool = False  # in a shared drive: no owners; its members reach it

    @property
    def native(self) -> bool:
        return self.mime_type.startswith("application/vnd.google-apps.")


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _csv(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return out.getvalue().encode()


def _export_doc(item: FakeFile, target: str) -> bytes:
    if target in ("text/markdown", "text/plain"):
        return item.content
    raise ApiError(400, "The requested conversion is not supported.", "badRequest")


def _export_sheet(item: FakeFile, target: str) -> bytes:
    if target == "text/csv":
        return _csv(next(iter(item.sheets.values()), []))
    raise ApiError(400, "The requested conversion is not supported.", "badRequest")


def _export_slides(item: FakeFile, target: str) -> bytes:
    if target == "text/plain":
        return item.content
    raise ApiError(400, "The requested conversion is not supported.", "badRequest")


# --- q: Drive's query language ------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(?P<string>'(?:[^'\\]|\\.)*')|(?P<op>!=|<=|>=|=|<|>|\(|\))|(?P<word>[A-Za-z_][\w.]*))")


def _invalid() -> ApiError:
    return ApiError(400, "Invalid Value", "invalid")


def tokenize(q: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    while position < len(q):
        if q[position:].strip() == "":
            break
        found = _TOKEN.match(q, position)
        if found is None or found.end() == position:
            raise _invalid()
        kind = found.lastgroup or ""
        value = found.group(kind)
        if kind == "string":
            inner = value[1:-1]
            if not re.fullmatch(r"(?:[^\\]|\\['\\])*", inner):
                raise _invalid()  # only \' and \\ are escapes in q
            value = re.sub(r"\\(.)", r"\1", inner)
        tokens.append((kind, value))
        position = found.end()
    return tokens


class Query:
    """`q` parsed once into a predicate over files; `Query(q).matches(file, account)`."""

    def __init__(self, q: str) -> None:
        self.tokens = tokenize(q)
        self.position = 0
        self.tree = self._or() if self.tokens else ("true",)
        if self.position != len(self.tokens):
            raise _invalid()

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _take(self) -> tuple[str, str]:
        token = self._peek()
        if token is None:
            raise _invalid()
        self.position += 1
        return token

    def _keyword(self, word: str) -> bool:
        token = self._peek()
        if token is not None and token[0] == "word" and token[1].lower() == word:
            self.position += 1
            return True
        return False

    def _or(self) -> tuple:
        node = self._and()
        while self._keyword("or"):
            node = ("or", node, self._and())
        return node

    def _and(self) -> tuple:
        node = self._unary()
        while self._keyword("and"):
            node = ("and", node, self._unary())
        return node

    def _unary(self) -> tuple:
        if self._keyword("not"):
            return ("not", self._unary())
        token = self._take()
        if token == ("op", "("):
            node = self._or()
            if self._take() != ("op", ")"):
                raise _invalid()
            return node
        if token[0] == "string":
            if not self._keyword("in"):
                raise _invalid()
            target = self._take()
            if target[0] != "word" or target[1] not in LISTS:
                raise _invalid()
            return ("in", token[1], target[1])
        if token[0] != "word" or token[1] not in FIELDS:
            raise _invalid()
        name = token[1]
        following = self._peek()
        if name in ("trashed", "starred", "sharedWithMe") and (following is None or following[0] != "op"):
            return ("cmp", name, "=", True)
        if self._keyword("contains"):
            if name not in ("name", "fullText", "mimeType"):
                raise _invalid()
            value = self._take()
            if value[0] != "string":
                raise _invalid()
            return ("contains", name, value[1])
        operator = self._take()
        if operator[0] != "op" or operator[1] in "()":
            raise _invalid()
        value = self._take()
        if name in ("trashed", "starred", "sharedWithMe"):
            if value[0] != "word" or value[1] not in ("true", "false") or operator[1] not in ("=", "!="):
                raise _invalid()
            return ("cmp", name, operator[1], value[1] == "true")
        if value[0] != "string":
            raise _invalid()
        if name in ("modifiedTime", "createdTime"):
            try:
                moment = dt.datetime.fromisoformat(value[1].replace("Z", "+00:00"))
            except ValueError:
                raise _invalid() from None
            return ("cmp", name, operator[1], moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC))
        if operator[1] not in ("=", "!="):
            raise _invalid()
        return ("cmp", name, operator[1], value[1])

    def matches(self, item: FakeFile, fake: FakeDrive) -> bool:
        return self._eval(self.tree, item, fake)

    def _eval(self, node: tuple, item: FakeFile, fake: FakeDrive) -> bool:
        kind = node[0]
        if kind == "true":
            return True
        if kind == "and":
            return self._eval(node[1], item, fake) and self._eval(node[2], item, fake)
        if kind == "or":
            return self._eval(node[1], item, fake) or self._eval(node[2], item, fake)
        if kind == "not":
            return not self._eval(node[1], item, fake)
        if kind == "in":
            value, where = node[1], node[2]
            if where == "parents":
                return value in item.parents or (value == "root" and fake.root in item.parents)
            if where == "owners":
                return value.lower() in [owner.lower() for owner in item.owners]
            role = "writer" if where == "writers" else "reader"
            return any(
                p.get("emailAddress", "").lower() == value.lower() and p["role"] == role for p in item.permissions
            )
        if kind == "contains":
            name, value = node[1], node[2].lower()
            if name == "name":  # Drive matches name terms by prefix: 'Hello' finds HelloWorld, 'World' does not
                return item.name.lower().startswith(value) or any(
                    word.startswith(value) for word in re.split(r"[\s_\-.,()]+", item.name.lower())
                )
            if name == "mimeType":
                return value in item.mime_type.lower()
            text = item.content.decode("utf-8", "replace") + " ".join(
                " ".join(cell for row in rows for cell in row) for rows in item.sheets.values()
            )
            return value in item.name.lower() or value in text.lower()
        _, name, operator, expected = node
        actual: Any = {
            "name": item.name,
            "mimeType": item.mime_type,
            "trashed": item.trashed,
            "starred": item.starred,
            "sharedWithMe": item.shared_with_me,
        }.get(name)
        if name in ("modifiedTime", "createdTime"):
            actual = dt.datetime.fromisoformat(
                (item.modified if name == "modifiedTime" else item.created)[:-1] + "+00:00"
            )
        return {
            "=": actual == expected,
            "!=": actual != expected,
            "<": actual < expected,
            "<=": actual <= expected,
            ">": actual > expected,
            ">=": actual >= expected,
        }[operator]


# --- the fake API ---------------------------------------------------------------------------------


def drive_entry(google: FakeGoogle, file_id: str, name: str, mime_type: str, app: bool) -> FakeFile:
    """A Docs or Sheets document as Drive sees it, owned by the account; Drive's API is served for
    it (a Drive fake made if none is yet). Tests share it or change owners on the entry."""
    if "/drive/v3/" not in google.apis:
        FakeDrive(google)
    now = _now()
    entry = FakeFile(file_id, name, mime_type, [], owners=[google.account], app=app, modified=now, created=now)
    with google.lock:
        google.drive_files[file_id] = entry
    return entry


class FakeDrive:
    def __init__(self, google: FakeGoogle) -> None:
        self.google = google
        self.files: dict[str, FakeFile] = google.drive_files
        self.root = "0A" + secrets.token_hex(8)
        self.uploads: list[dict[str, Any]] = []  # metadata and media type of each upload, for tests
        self.queries: list[str] = []  # every q received
        self.ranges: list[tuple[int, int]] = []  # the byte ranges of every ranged download
        self.exporters: dict[str, Callable[[FakeFile, str], bytes]] = {
            DOC: _export_doc,
            SHEET: _export_sheet,
            SLIDES: _export_slides,
        }
        self._ids = itertools.count(1)
        google.apis["/drive/v3/"] = (Discovery("drive", "v3"), self)
        if not any(prefix.startswith("/v4/spreadsheets") for prefix in google.apis):
            google.apis["/v4/spreadsheets/"] = (Discovery("sheets", "v4"), _SheetsStandIn(self))

    # --- set-up helpers ------------------------------------------------------------------------
    def _new_id(self) -> str:
        return f"1{next(self._ids):04d}" + secrets.token_urlsafe(20).replace("-", "x").replace("_", "y")

    def add(
        self,
        name: str,
        content: bytes | str = b"",
        mime_type: str = "text/plain",
        parent: str | None = None,
        **extra: Any,
    ) -> FakeFile:
        """A file in the Drive (in the root folder unless `parent`); `extra` sets FakeFile fields."""
        now = _now()
        item = FakeFile(
            id=self._new_id(),
            name=name,
            mime_type=mime_type,
            parents=[parent or self.root],
            content=content.encode() if isinstance(content, str) else content,
            owners=[self.google.account],
            modified=now,
            created=now,
        )
        for key, value in extra.items():
            setattr(item, key, value)
        with self.google.lock:
            self.files[item.id] = item
        return item

    def folder(self, name: str, parent: str | None = None, **extra: Any) -> FakeFile:
        return self.add(name, b"", FOLDER, parent, **extra)

    def shortcut(self, name: str, target: FakeFile, parent: str | None = None) -> FakeFile:
        return self.add(name, b"", SHORTCUT, parent, shortcut_target=target.id)

    # --- dispatch ------------------------------------------------------------------------------
    def handle(
        self,
        method_id: str,
        path: dict[str, str],
        params: dict[str, Any],
        body: Any,
        token: Token,
        media: bytes | None,
        headers: dict[str, str],
    ) -> Any:
        name = method_id.removeprefix("drive.").replace(".", "_")
        handler = getattr(self, "do_" + name, None)
        if handler is None:
            raise ApiError(501, f"{method_id} is not implemented by the fake")
        return handler(path, params, body, token, media, headers)

    def visible(self, item: FakeFile, token: Token) -> bool:
        return item.app or bool(token.scopes & WIDE_SCOPES)

    def _file(self, file_id: str, token: Token) -> FakeFile:
        item = self.files.get(file_id)
        if item is None or not self.visible(item, token):
            raise ApiError(404, f"File not found: {file_id}.", "notFound")
        return item

    def resource(self, item: FakeFile) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "drive#file",
            "id": item.id,
            "name": item.name,
            "mimeType": item.mime_type,
            "parents": list(item.parents),
            "trashed": item.trashed,
            "starred": item.starred,
            "version": str(item.version),
            "modifiedTime": item.modified,
            "createdTime": item.created,
            "webViewLink": f"https://drive.google.com/file/d/{item.id}/view",
        }
        me = self.google.account.lower()
        if not item.shared_drive:  # Drive leaves owners, ownedByMe and shared out for shared-drive items
            out["owners"] = [
                {
                    "kind": "drive#user",
                    "emailAddress": owner,
                    "displayName": owner.partition("@")[0],
                    "me": owner.lower() == me,
                }
                for owner in item.owners
            ]
            out["ownedByMe"] = me in (owner.lower() for owner in item.owners)
            out["shared"] = bool(item.permissions)
        if self._can_share(item):  # permissions are listed only to those who may change them
            owned = [
                {"kind": "drive#permission", "id": f"o{index}", "type": "user", "role": "owner", "emailAddress": owner}
                for index, owner in enumerate(item.owners if not item.shared_drive else [])
            ]
            out["permissions"] = owned + [dict(permission) for permission in item.permissions]
        if item.shortcut_target:
            target = self.files.get(item.shortcut_target)
            out["shortcutDetails"] = {
                "targetId": item.shortcut_target,
                "targetMimeType": target.mime_type if target else "application/octet-stream",
            }
        if not item.native:
            out["size"] = str(len(item.content))
            out["md5Checksum"] = hashlib.md5(item.content).hexdigest()
        return out

    def _can_share(self, item: FakeFile) -> bool:
        """The signed-in account owns the item or may write it (writers can share, Drive's default)."""
        me = self.google.account.lower()
        if me in (owner.lower() for owner in item.owners) and not item.shared_drive:
            return True
        return any(
            p.get("emailAddress", "").lower() == me and p.get("role") in ("writer", "organizer", "fileOrganizer")
            for p in item.permissions
        )

    def _touch(self, item: FakeFile, content: bool = False) -> None:
        item.version += 1
        if content:
            item.modified = _now()

    # --- files ---------------------------------------------------------------------------------
    def do_files_list(self, path: dict, params: dict, body: Any, token: Token, media: Any, headers: dict) -> Any:
        q = params.get("q", "")
        self.queries.append(q)
        query = Query(q)
        if params.get("orderBy") and ("word", "fullText") in query.tokens:
            self.google.violations.append(f"files.list: orderBy with a fullText query: {q}")
            raise ApiError(
                400,
                "Sorting is not supported for queries with fullText terms. Results are always in descending "
                "relevance order.",
                "invalid",
            )
        found = [item for item in self.files.values() if self.visible(item, token) and query.matches(item, self)]
        order = params.get("orderBy", "")
        if order.startswith("modifiedTime desc"):
            found.sort(key=lambda item: item.modified, reverse=True)
        elif order.startswith("folder"):
            found.sort(key=lambda item: (item.mime_type != FOLDER, item.name.lower()))
        size = int(params.get("pageSize", 100))
        start = 0
        if params.get("pageToken"):
            try:
                start = int(params["pageToken"].removeprefix("~!"))
            except ValueError:
                raise ApiError(400, "Invalid Value", "invalid") from None
        page = found[start : start + size]
        out: dict[str, Any] = {"kind": "drive#fileList", "files": [self.resource(item) for item in page]}
        if start + size < len(found):
            out["nextPageToken"] = f"~!{start + size}"
        return out

    def do_files_get(self, path: dict, params: dict, body: Any, token: Token, media: Any, headers: dict) -> Any:
        item = self._file(path["fileId"], token)
        if params.get("alt") == "media":
            if item.native:
                raise ApiError(
                    403,
                    "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
                    "fileNotDownloadable",
                )
            ranged = re.fullmatch(r"bytes=(\d+)-(\d*)", headers.get("range", ""))
            if ranged is None:
                return Response(200, item.content, {"Content-Type": item.mime_type})
            size = len(item.content)
            start, end = int(ranged.group(1)), min(int(ranged.group(2) or size - 1), size - 1)
            if start >= size:
                return Response(416, b"", {"Content-Range": f"bytes */{size}"})
            self.ranges.append((start, end))
            headers_out = {"Content-Type": item.mime_type, "Content-Range": f"bytes {start}-{end}/{size}"}
            return Response(206, item.content[start : end + 1], headers_out)
        return self.resource(item)

    def do_files_export(self, path: dict, params: dict, body: Any, token: Token, media: Any, headers: dict) -> Any:
        item = self._file(path["fileId"], token)
        exporter = self.exporters.get(item.mime_type)
        if exporter is None:
            raise ApiError(403, "Export only supports Docs Editors files.", "fileNotExportable")
        data = exporter(item, params["mimeType"])
        if len(data) > EXPORT_LIMIT:
            raise ApiError(403, "This file is too large to be exported.", "exportSizeLimitExceeded")
        return Response(200, data, {"Content-Type": params["mimeType"]})

    def _media_type(self, target: str, headers: dict) -> str:
        """The uploaded bytes' type; converting them into a Google type works only from what Drive imports."""
        source = headers.get("x-upload-content-type", "")
        if target in IMPORTS and source not in IMPORTS[target]:
            raise ApiError(400, f"Conversion of {source or 'this media'} to {target} is not supported.", "badRequest")
        return source

    def do_files_create(self, path: dict, params: dict, body: Any, token: Token, media: Any, headers: dict) -> Any:
        body = body or {}
        source = self._media_type(body.get("mimeType", ""), headers) if media is not None else ""
        mime = body.get("mimeType") or source or "application/octet-stream"
        self.uploads.append({"metadata": dict(body), "media": media is not None, "media_type": source})
        parents = body.get("parents") or [self.root]
        for parent in parents:
            folder = self.files.get(parent)
            if parent != self.root and (
                folder is None or folder.mime_type != FOLDER or not self.visible(folder, token)
            ):
                raise ApiError(404, f"File not found: {parent}.", "notFound")
        item = self.add(body.get("name") or "Untitled", media or b"", mime)
        item.parents = list(parents)
        if item.mime_type == SHEET and media is not None:
            item.sheets = {"Sheet1": list(csv.reader(io.StringIO(media.decode("utf-8", "replace"))))}
        return self.resource(item)

    def do_files_update(self, path: dict, params: dict, body: Any, token: Token, media: Any, headers: dict) -> Any:
        item = self._file(path["fileId"], token)
        body = body or {}
        if media is not None:
            source = self._media_type(item.mime_type, headers)
            self.uploads.append({"metadata": dict(body), "media": True, "media_type": source, "file": item.id})
            item.content = media
            if item.mime_type == SHEET:
                item.sheets = {next(iter(item.sheets), "Sheet1"): list(csv.reader(io.StringIO(media.decode())))}
        for key in ("name", "trashed", "starred"):
            if key in body:
                setattr(item, key, body[key])
        self._touch(item, content=media is not None or "name" in body)
        return self.resource(item)

    def do_files_delete(self, path: dict, params: dict, body: Any, token: Token, media: Any, headers: dict) -> Any:
        item = self._file(path["fileId"], token)
        del self.files[item.id]
        return Response(204, b"")

    def do_permissions_create(
        self, path: dict, params: dict, body: Any, token: Token, media: Any, headers: dict
    ) -> Any:
        item = self._file(path["fileId"], token)
        kind, role = body.get("type"), body.get("role")
        if kind not in ("user", "group", "domain", "anyone") or role not in ("reader", "commenter", "writer", "owner"):
            raise ApiError(400, "Invalid Value", "invalid")
        if kind in ("user", "group") and "@" not in body.get("emailAddress", ""):
            raise ApiError(400, "The permission type field is required.", "invalidSharingRequest")
        permission = {"kind": "drive#permission", "id": secrets.token_hex(8), **body}
        item.permissions.append(permission)
        self._touch(item)
        return permission


class _SheetsStandIn:
    """The two Sheets API methods drive reading needs, over the fake Drive's spreadsheets."""

    def __init__(self, drive: FakeDrive) -> None:
        self.drive = drive

    def handle(
        self,
        method_id: str,
        path: dict[str, str],
        params: dict[str, Any],
        body: Any,
        token: Token,
        media: bytes | None,
        headers: dict[str, str],
    ) -> Any:
        for discovery, handler in list(self.drive.google.apis.values()):
            if handler is not self and discovery.document.get("name") == "sheets":  # a fuller fake came later
                return handler.handle(method_id, path, params, body, token, media, headers)
        item = self.drive.files.get(path["spreadsheetId"])
        if item is None or item.mime_type != SHEET or not self.drive.visible(item, token):
            raise ApiError(404, "Requested entity was not found.", "notFound")
        if method_id == "sheets.spreadsheets.get":
            return {
                "spreadsheetId": item.id,
                "properties": {"title": item.name},
                "sheets": [
                    {"properties": {"sheetId": index, "title": title, "index": index}}
                    for index, title in enumerate(item.sheets)
                ],
            }
        if method_id == "sheets.spreadsheets.values.get":
            wanted = unquote(path["range"])
            title = wanted[1:-1].replace("''", "'") if wanted.startswith("'") else wanted
            if title not in item.sheets:
                raise ApiError(400, f"Unable to parse range: {wanted}", "badRequest")
            return {"range": wanted, "majorDimension": "ROWS", "values": item.sheets[title]}
        raise ApiError(501, f"{method_id} is not implemented by the stand-in")
