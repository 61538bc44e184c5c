"""The Docs service: the shared Google client plus what the docs tools do with it.

Every method here is blocking (googleapiclient is synchronous) and runs in a worker thread.
Writes always carry the revision their indexes were computed from (`requiredRevisionId`), so
an edit made meanwhile by someone else is a `conflict`, never text spliced into the wrong place.
"""

from __future__ import annotations

import re
from typing import Any

from mcp_tools.core.tooling import Environment, ToolFailure
from mcp_tools.servers.docs.config import DocsConfig
from mcp_tools.servers.google.config import GoogleConfig
from mcp_tools.servers.google.service import GoogleService

URL = "https://docs.google.com/document/d/{}/edit"
APP_ACCESS_HINT = (
    'ids come from the document\'s address (docs.google.com/document/d/ID/). With [docs] access = "app" only '
    'documents this app created or the person opened with it are reachable; access = "read" or "all" reaches more.'
)
STALE_HINT = "read it again with docs_read and retry with the new revision"


class DocsService(GoogleService):
    NAMESPACE, API, VERSION = "docs", "docs", "v1"

    def __init__(self, config: DocsConfig, google: GoogleConfig, env: Environment, scopes: list[str]) -> None:
        super().__init__(google, env, scopes, access=config.access)
        self.config = config

    def call(self, tool: str, build: Any, api: str | None = None, version: str | None = None) -> Any:
        try:
            return super().call(tool, build, api, version)
        except ToolFailure as failure:
            if failure.kind == "not_found":
                ungranted = self.ungranted()
                if ungranted:
                    failure.hint = (
                        f'[docs] access = "{self.access}" needs {", ".join(ungranted)}, which this sign-in did not '
                        "grant: run `mcp-tools auth google`"
                    )
                else:
                    failure.hint = APP_ACCESS_HINT if self.access == "app" else "ids come from the document's address"
            raise

    def ungranted(self) -> list[str]:
        """Scopes the access level asks for that the sign-in lacks, for doctor's docs line (calls
        name them too, before reaching Google)."""
        from mcp_tools.servers.google.scopes import short

        granted = set(self.client.account.granted_scopes())
        return [short(scope) for scope in self.scopes if scope not in granted]

    def get(self, tool: str, document_id: str) -> dict[str, Any]:
        return self.call_object(tool, lambda s: s.documents().get(documentId=document_id))

    def get_current(self, tool: str, document_id: str, revision: str | None) -> dict[str, Any]:
        """The document, refused as a conflict when it is no longer at the revision the model read."""
        document = self.get(tool, document_id)
        if revision and document.get("revisionId") != revision:
            raise ToolFailure(
                "conflict",
                f"the document changed since revision {revision} was read (now {document.get('revisionId')})",
                STALE_HINT,
            )
        return document

    def create(self, tool: str, title: str) -> dict[str, Any]:
        return self.call_object(tool, lambda s: s.documents().create(body={"title": title}))

    def update(self, tool: str, document_id: str, requests: list[dict[str, Any]], revision: str) -> dict[str, Any]:
        """Apply the requests at exactly `revision`; a document changed meanwhile is a `conflict`."""
        if not revision:  # no guard possible: fail closed rather than edit a document that may have moved
            raise ToolFailure(
                "upstream_error",
                "Google gave no revision for the document (is edit access missing?); nothing was changed",
                "open the document in Google Docs to check your access, then retry",
            )
        body = {"requests": requests, "writeControl": {"requiredRevisionId": revision}}
        try:
            return self.call_object(tool, lambda s: s.documents().batchUpdate(documentId=document_id, body=body))
        except ToolFailure as failure:
            # Google answers a stale requiredRevisionId with a plain 400: tell it apart by the revision now
            if failure.kind == "invalid_arguments" and self.get(tool, document_id).get("revisionId") != revision:
                raise ToolFailure(
                    "conflict", "the document changed while this call was editing it; nothing was changed", STALE_HINT
                ) from None
            raise


def revision_after(answer: dict[str, Any]) -> str:
    """The document's revision once a batchUpdate applied (Google answers it in writeControl)."""
    return str((answer.get("writeControl") or {}).get("requiredRevisionId", ""))


def end_of_body(document: dict[str, Any]) -> tuple[int, bool]:
    """The body's end index and whether its last paragraph is empty (only its newline)."""
    from mcp_tools.servers.docs.render import body_of

    content, _ = body_of(document)
    if not content:
        return 2, True
    last = content[-1]
    runs = (last.get("paragraph") or {}).get("elements", [])
    text = "".join((run.get("textRun") or {}).get("content", "") for run in runs)
    return int(last.get("endIndex", 2)), text in ("", "\n")


def count_matches(document: dict[str, Any], find: str, match_case: bool) -> int:
    """Occurrences of `find` paragraph by paragraph (tables included), as replaceAllText counts them."""
    from mcp_tools.servers.docs.render import body_of

    pattern = re.compile(re.escape(find), 0 if match_case else re.IGNORECASE)
    content, _ = body_of(document)
    total = 0
    stack = list(content)
    while stack:
        element = stack.pop()
        if "paragraph" in element:
            runs = [element.get("textRun") or {} for element in element["paragraph"].get("elements", [])]
            text = "".join(run.get("content", "") for run in runs if not run.get("suggestedInsertionIds"))
            total += len(pattern.findall(text.replace("\n", "")))
        for row in (element.get("table") or {}).get("tableRows", []):
            for cell in row.get("tableCells", []):
                stack.extend(cell.get("content", []))
    return total
