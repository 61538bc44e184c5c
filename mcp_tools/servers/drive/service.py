"""The Drive service: the shared Google client plus what the drive tools do with it.

Every method here is blocking (googleapiclient is synchronous) and runs in a worker thread.
"""

from __future__ import annotations

import io
import re
import threading
from collections import OrderedDict
from typing import Any

from mcp_tools.core.tooling import Environment, ToolFailure
from mcp_tools.servers.drive.config import DriveConfig
from mcp_tools.servers.google.config import GoogleConfig
from mcp_tools.servers.google.service import GoogleService

# The drive tools this service calls Google for (each names its scopes; `tools.py` declares them)
SEARCH_TOOL = "drive.search"
READ_TOOL = "drive.read"
CREATE_TOOL = "drive.create"
UPDATE_TOOL = "drive.update"
DELETE_TOOL = "drive.delete"
SHARE_TOOL = "drive.share"

FOLDER = "application/vnd.google-apps.folder"
DOC = "application/vnd.google-apps.document"
SHEET = "application/vnd.google-apps.spreadsheet"
SLIDES = "application/vnd.google-apps.presentation"
SHORTCUT = "application/vnd.google-apps.shortcut"
# the names a model uses for a type -> the mime type (a trailing "/" matches the whole family)
TYPES = {
    "document": DOC,
    "spreadsheet": SHEET,
    "presentation": SLIDES,
    "folder": FOLDER,
    "form": "application/vnd.google-apps.form",
    "drawing": "application/vnd.google-apps.drawing",
    "shortcut": SHORTCUT,
    "pdf": "application/pdf",
    "image": "image/",
    "video": "video/",
    "audio": "audio/",
    "text": "text/",
}
TYPE_NAMES = {mime: name for name, mime in TYPES.items() if not mime.endswith("/")}
TEXT_TYPES = (
    "text/",
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-yaml",
    "application/yaml",
    "application/x-sh",
    "application/sql",
    "image/svg+xml",
)
# files that may declare their own charset (a <meta> or an XML declaration)
MARKUP_TYPES = ("text/html", "application/xhtml+xml", "text/xml", "application/xml", "image/svg+xml")
# what each native type is exported as
EXPORTS = {DOC: "text/markdown", SHEET: "text/csv", SLIDES: "text/plain"}
# what `convert` turns an upload into, by the content's type
CONVERSIONS = {"text/markdown": DOC, "text/plain": DOC, "text/html": DOC, "text/csv": SHEET}
FILE_FIELDS = "id,name,mimeType,modifiedTime,size,version,trashed"
CACHE_ENTRIES = 4  # texts kept for paging: a few files, and at most CACHE_CHARS beside the newest
CACHE_CHARS = 32_000_000


def type_name(mime: str) -> str:
    """`document`, `folder`, ... for the types a model names; the mime type itself otherwise."""
    return TYPE_NAMES.get(mime, mime)


def quote(value: str) -> str:
    """A string literal of Drive's `q`: backslashes and single quotes escaped."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def mentions(q: str, field: str) -> bool:
    """Whether a raw q uses a field (outside its string literals)."""
    outside = re.sub(r"'(?:[^'\\]|\\.)*'", "''", q)
    return re.search(rf"\b{field}\b", outside) is not None


def build_query(args: Any) -> tuple[str, bool]:
    """The `q` for the structured filters (ANDed with a raw `q`), and whether it only lists a folder."""
    terms = []
    if args.q:
        terms.append(f"({args.q})")
    if args.name:
        terms.append(f"name contains {quote(args.name)}")
    if args.text:
        terms.append(f"fullText contains {quote(args.text)}")
    if args.type:
        mime = TYPES[args.type]
        terms.append(f"mimeType contains {quote(mime)}" if mime.endswith("/") else f"mimeType = {quote(mime)}")
    if args.modified_after:
        terms.append(f"modifiedTime > {quote(args.modified_after)}")
    if args.modified_before:
        terms.append(f"modifiedTime < {quote(args.modified_before)}")
    if args.owner:
        terms.append(f"{quote(args.owner)} in owners")
    if args.shared_with_me:
        terms.append("sharedWithMe = true")
    listing = not terms
    if args.folder or listing:
        terms.append(f"{quote(args.folder or 'root')} in parents")
    if not mentions(args.q or "", "trashed"):
        terms.append(f"trashed = {'true' if args.trashed else 'false'}")
    return " and ".join(terms), listing


def file_info(item: dict[str, Any]) -> dict[str, Any]:
    size = item.get("size")
    return {
        "id": item.get("id", ""),
        "name": item.get("name", ""),
        "type": type_name(item.get("mimeType", "")),
        "modified": item.get("modifiedTime", ""),
        "size": int(size) if size is not None else None,
        "version": str(item.get("version", "")),
    }


def _media(data: bytes, mime: str) -> Any:
    from googleapiclient.http import MediaIoBaseUpload

    return MediaIoBaseUpload(io.BytesIO(data), mimetype=mime, resumable=False)


class DriveService(GoogleService):
    NAMESPACE, API, VERSION = "drive", "drive", "v3"

    def __init__(self, config: DriveConfig, google: GoogleConfig, env: Environment, scopes: list[str]) -> None:
        super().__init__(google, env, scopes, access=config.access)
        self.config = config
        self._texts: OrderedDict[tuple[str, str, str], tuple[str, list[str], list[str]]] = OrderedDict()
        self._texts_lock = threading.Lock()

    # --- search -------------------------------------------------------------------------------
    def search(self, args: Any) -> dict[str, Any]:
        q, listing = build_query(args)
        order = None if mentions(q, "fullText") else ("folder,name" if listing or args.folder else "modifiedTime desc")
        found = self.call(
            SEARCH_TOOL,
            lambda s: s.files().list(
                q=q,
                pageSize=args.limit,
                pageToken=args.page_token or None,
                orderBy=order,
                fields=f"nextPageToken,files({FILE_FIELDS})",
                supportsAllDrives=True,
                includeItemsFromAllDrives=True,
            ),
        )
        return {
            "files": [file_info(item) for item in found.get("files", [])],
            "next_page_token": found.get("nextPageToken"),
            "q": q,
        }

    # --- metadata -----------------------------------------------------------------------------
    def metadata(self, tool: str, file_id: str) -> dict[str, Any]:
        return self.call_object(
            tool, lambda s: s.files().get(fileId=file_id, fields=FILE_FIELDS, supportsAllDrives=True)
        )

    def target(self, tool: str, file_id: str) -> dict[str, Any]:
        """The file's metadata, or its target's when it is a shortcut (one hop, as Drive allows)."""
        found = self.call(
            tool,
            lambda s: s.files().get(
                fileId=file_id, fields=FILE_FIELDS + ",shortcutDetails(targetId)", supportsAllDrives=True
            ),
        )
        target_id = (found.get("shortcutDetails") or {}).get("targetId")
        return self.metadata(tool, target_id) if found.get("mimeType") == SHORTCUT and target_id else found

    # --- read ---------------------------------------------------------------------------------
    def read_text(self, meta: dict[str, Any], sheet: str) -> tuple[str, list[str], list[str]]:
        """The file as text (cached by id, version and sheet): text, sheet names, warnings."""
        key = (meta["id"], str(meta.get("version", "")), sheet)
        with self._texts_lock:
            if key in self._texts:
                self._texts.move_to_end(key)
                return self._texts[key]
        found = self._fetch_text(meta, sheet)
        with self._texts_lock:
            self._texts[key] = found
            while len(self._texts) > 1 and (
                len(self._texts) > CACHE_ENTRIES or sum(len(text) for text, _, _ in self._texts.values()) > CACHE_CHARS
            ):
                self._texts.popitem(last=False)
        return found

    def _fetch_text(self, meta: dict[str, Any], sheet: str) -> tuple[str, list[str], list[str]]:
        from mcp_tools.util.text import declared_charset, decode_bytes

        tool, file_id, mime = READ_TOOL, meta["id"], meta.get("mimeType", "")
        warnings: list[str] = []
        sheets: list[str] = []
        if mime == SHEET:
            try:
                found = self.call(
                    tool,
                    lambda s: s.spreadsheets().get(spreadsheetId=file_id, fields="sheets(properties(title))"),
                    api="sheets",
                    version="v4",
                )
            except ToolFailure as failure:
                if sheet or failure.kind != "not_configured":
                    raise
                # the Sheets API is off in the Cloud project: the export still gives the first sheet
                warnings.append(f"only the first sheet, and no sheet names: {failure.message}")
                found = {}
            sheets = [item.get("properties", {}).get("title", "") for item in found.get("sheets", [])]
            if sheet and sheet not in sheets:
                raise ToolFailure("not_found", f"no sheet named {sheet!r}", f"sheets: {', '.join(sheets)[:500]}")
            if sheet and sheets and sheet != sheets[0]:
                return self._sheet_csv(file_id, sheet), sheets, warnings
        if mime in EXPORTS:
            data = self._export(file_id, mime)
        else:
            data = self.call(tool, lambda s: s.files().get_media(fileId=file_id, supportsAllDrives=True))
        declared = declared_charset(data) if mime.startswith(MARKUP_TYPES) else None
        return decode_bytes(data, declared, warnings, meta.get("name", "file")), sheets, warnings

    def _export(self, file_id: str, mime: str) -> bytes:
        try:
            exported: bytes = self.call(READ_TOOL, lambda s: s.files().export(fileId=file_id, mimeType=EXPORTS[mime]))
            return exported
        except ToolFailure as failure:
            if failure.kind == "too_large":
                hint = (
                    "Read another sheet with sheet=NAME, or a range with the sheets tools."
                    if mime == SHEET
                    else "Google exports at most 10 MB: split the file, or open it in Google Drive."
                )
                raise ToolFailure("too_large", failure.message, hint) from None
            raise

    def _sheet_csv(self, file_id: str, sheet: str) -> str:
        import csv

        escaped = sheet.replace("'", "''")
        found = self.call(
            READ_TOOL,
            lambda s: s.spreadsheets().values().get(spreadsheetId=file_id, range=f"'{escaped}'"),
            api="sheets",
            version="v4",
        )
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(found.get("values", []))
        return out.getvalue()

    def download(self, file_id: str) -> bytes:
        data: bytes = self.call(READ_TOOL, lambda s: s.files().get_media(fileId=file_id, supportsAllDrives=True))
        return data

    # --- writes -------------------------------------------------------------------------------
    def create(self, metadata: dict[str, Any], data: bytes | None, mime: str) -> dict[str, Any]:
        client = self.client
        media = _media(data, mime) if data is not None else None
        return self.call_object(
            CREATE_TOOL,
            lambda s: client.fix_upload(
                s.files().create(body=metadata, media_body=media, fields=FILE_FIELDS, supportsAllDrives=True)
            ),
        )

    def update(self, file_id: str, metadata: dict[str, Any], data: bytes | None, mime: str) -> dict[str, Any]:
        client = self.client
        media = _media(data, mime) if data is not None else None
        return self.call_object(
            UPDATE_TOOL,
            lambda s: client.fix_upload(
                s.files().update(
                    fileId=file_id, body=metadata, media_body=media, fields=FILE_FIELDS, supportsAllDrives=True
                )
            ),
        )

    def trash(self, file_id: str) -> dict[str, Any]:
        return self.call_object(
            DELETE_TOOL,
            lambda s: s.files().update(
                fileId=file_id, body={"trashed": True}, fields=FILE_FIELDS, supportsAllDrives=True
            ),
        )

    def delete(self, file_id: str) -> None:
        self.call(DELETE_TOOL, lambda s: s.files().delete(fileId=file_id, supportsAllDrives=True))

    def share(self, file_id: str, permission: dict[str, Any], notify: bool, message: str) -> dict[str, Any]:
        return self.call_object(
            SHARE_TOOL,
            lambda s: s.permissions().create(
                fileId=file_id,
                body=permission,
                sendNotificationEmail=notify if permission["type"] in ("user", "group") else None,
                emailMessage=(message or None) if notify else None,
                supportsAllDrives=True,
                fields="id,type,role,emailAddress",
            ),
        )
