"""`resources/list`, `resources/templates/list`, `resources/read` and `resources/subscribe` in MCP terms.

The documents are the namespaces' (`ResourceHook`); a namespace's resources are offered where its
read tool is: running, and served by the inventory's chain to a reader of documents (not hidden by
the policy nor excluded by the selection, within the caller's OAuth scopes: `Audience.documents`).
A read is a call of that tool through the policy gate, with its rules, containment (traversal,
symlinks, the vault's hidden folders) and audit row; only the listing and the change watch use the
service directly, and they show only what a read would reach.
"""

from __future__ import annotations

import mimetypes
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS
from mcp_types.version import is_version_at_least

from mcp_tools.composition.app import App
from mcp_tools.core.tooling import ResourceHook, ToolFailure
from mcp_tools.inventory.chain import Audience
from mcp_tools.policy.gate import BoundTool, Caller, CallOutcome
from mcp_tools.resources.icons import icon
from mcp_tools.resources.uris import Address, BadAddress, address_of, decode_cursor, encode_cursor

PAGE = 100  # resources a page of resources/list holds
RESOURCE_NOT_FOUND = -32002  # 2025-11-25; 2026-07-28 retired it for INVALID_PARAMS
MODERN = "2026-07-28"


@dataclass(frozen=True)
class Source:
    namespace: str
    hook: ResourceHook[Any]
    service: Any
    reader: BoundTool


class Documents:
    """The namespaces' stored documents as resources, for one MCP endpoint (all, or one namespace)."""

    def __init__(self, app: App, namespace: str | None = None) -> None:
        self.app = app
        self.namespace = namespace
        self.sources: dict[str, Source] = {}
        for name, declared in app.namespaces.items():
            hook = declared.resources
            reader = app.catalog.find(hook.read_tool) if hook is not None else None
            if hook is None or reader is None or (namespace is not None and name != namespace):
                continue
            self.sources[name] = Source(name, hook, app.services[name], reader)

    def offered(self, reaches: Callable[[Any], bool] | None) -> list[Source]:
        """The sources whose read tool the inventory's chain offers this caller's documents through."""
        catalog = self.app.catalog
        audience = Audience(self.namespace, reaches, documents=True)
        return [source for source in self.sources.values() if catalog.refusal(source.reader.spec, audience) is None]

    def source_of(self, address: Address, reaches: Callable[[Any], bool] | None) -> Source | None:
        return next((source for source in self.offered(reaches) if source.namespace == address.namespace), None)

    async def page(
        self, cursor: str | None, reaches: Callable[[Any], bool] | None
    ) -> tuple[list[types.Resource], str | None]:
        """One page of every offered source's documents, in namespace, root and path order."""
        sources = self.offered(reaches)
        places = [(source, root) for source in sources for root in source.hook.roots(source.service)]
        start, after = 0, None
        if cursor is not None:
            namespace, root, after = decode_cursor(cursor)
            start = next(
                (
                    index
                    for index, (source, label) in enumerate(places)
                    if (source.namespace, label) == (namespace, root)
                ),
                len(places),
            )
        listed: list[types.Resource] = []
        for source, root in places[start:]:
            room = PAGE - len(listed)
            items, more = await source.hook.items(source.service, root, after, room)
            after = None
            listed += [self.resource(Address(source.namespace, root, item.path), item) for item in items]
            if more:
                return listed, encode_cursor(source.namespace, root, items[-1].path)
            if len(listed) >= PAGE:
                following = places.index((source, root)) + 1
                return listed, encode_cursor(*_first(places[following:])) if following < len(places) else None
        return listed, None

    @staticmethod
    def resource(address: Address, item: Any) -> types.Resource:
        return types.Resource(
            uri=address.uri,
            name=posixpath.basename(address.path) or address.path,
            title=address.path if not address.root else f"{address.root}: {address.path}",
            mime_type=item.mime_type,
            size=item.size,
        )

    def templates(self, reaches: Callable[[Any], bool] | None) -> list[types.ResourceTemplate]:
        found = []
        for source in self.offered(reaches):
            roots = source.hook.roots(source.service)
            forms = [f"{source.namespace}:///{{+path}}"]
            if any(roots):
                forms.append(f"{source.namespace}://{{vault}}/{{+path}}")
            for form in forms:
                found.append(
                    types.ResourceTemplate(
                        uri_template=form,
                        name=f"{source.namespace}-{'vault-' if '{vault}' in form else ''}document",
                        title=source.hook.title,
                        description=f"Read through {source.reader.wire_name}, under the same policy.",
                        icons=[icon(source.namespace)],
                    )
                )
        return found

    async def read(self, uri: str, caller: Caller, modern: bool) -> types.ReadResourceResult:
        try:
            address = address_of(uri)
        except BadAddress as exc:
            raise MCPError(INVALID_PARAMS, f"invalid resource URI: {exc}", {"uri": uri[:200]}) from None
        source = self.source_of(address, caller.reaches)
        if source is None:  # not an address this server serves (to this caller)
            raise MCPError(INVALID_PARAMS, f"there is no resource {uri[:200]}", {"uri": uri[:200]})
        if address.root and address.root not in source.hook.roots(source.service):
            raise _not_found(uri, modern, f"there is no vault {address.root!r}")
        arguments: dict[str, Any] = {"path": address.path, **source.hook.read_arguments}
        if address.root and source.hook.root_argument:
            arguments[source.hook.root_argument] = address.root
        outcome = await self.app.gate.call(source.reader, source.reader.wire_name, arguments, caller)
        if outcome.is_error or outcome.structured is None:
            raise _refused(uri, outcome, modern)
        body = source.hook.body(outcome.structured, outcome.images)
        meta = {"truncated": True, "more": f"read the rest with {source.reader.wire_name}"} if body.truncated else None
        contents: types.TextResourceContents | types.BlobResourceContents
        if body.text is not None:
            contents = types.TextResourceContents(uri=uri, mime_type=body.mime_type, text=body.text, _meta=meta)
        else:
            contents = types.BlobResourceContents(uri=uri, mime_type=body.mime_type, blob=body.blob or "", _meta=meta)
        return types.ReadResourceResult(contents=[contents])

    async def version(self, uri: str) -> str | None:
        """What changes when the document does; None when it is gone or not ours."""
        try:
            address = address_of(uri)
        except BadAddress:
            return None
        source = self.sources.get(address.namespace)
        if source is None:
            return None
        try:
            return await source.hook.version(source.service, address.root, address.path)
        except ToolFailure:
            return None

    def link(
        self,
        tool: BoundTool | None,
        arguments: dict[str, Any],
        outcome: CallOutcome,
        reaches: Callable[[Any], bool] | None,
    ) -> types.ResourceLink | None:
        """The stored file a successful call saved through another namespace's tool (`reaches`), as a link."""
        if tool is None or outcome.is_error or not isinstance(outcome.structured, dict):
            return None
        for argument, target in tool.spec.reaches.items():
            namespace = target.partition(".")[0]
            value = arguments.get(argument)
            saved = outcome.structured.get("saved_path")  # where the tool put it, when it chose the name
            path = saved if isinstance(saved, str) and saved else value
            if not target.endswith(".write") or not value or not isinstance(path, str) or not path:
                continue
            source = next((found for found in self.offered(reaches) if found.namespace == namespace), None)
            if source is None:
                continue
            path = path.strip("/")
            address = Address(namespace, "", path)
            return types.ResourceLink(
                uri=address.uri,
                name=posixpath.basename(path) or path,
                title=f"{path} in the {namespace} store",
                mime_type=mimetypes.guess_type(path, strict=False)[0] or "application/octet-stream",
            )
        return None


def _first(places: list[tuple[Source, str]]) -> tuple[str, str, str]:
    source, root = places[0]
    return source.namespace, root, ""


def _not_found(uri: str, modern: bool, message: str) -> MCPError:
    return MCPError(INVALID_PARAMS if modern else RESOURCE_NOT_FOUND, message, {"uri": uri[:200]})


def _refused(uri: str, outcome: CallOutcome, modern: bool) -> MCPError:
    """The gate's refusal or the tool's failure, in the words the tool gave (already scrubbed)."""
    error = outcome.error or {"kind": "internal_error", "message": outcome.text}
    kind = str(error.get("kind", "internal_error"))
    message = f"{kind}: {error.get('message', '')}"
    if error.get("hint"):
        message += f" ({error['hint']})"
    if kind == "not_found":
        return MCPError(INVALID_PARAMS if modern else RESOURCE_NOT_FOUND, message, {"uri": uri[:200], **error})
    code = INTERNAL_ERROR if kind in ("internal_error", "unavailable") else INVALID_PARAMS
    return MCPError(code, message, {"uri": uri[:200], **error})


def is_modern(ctx: ServerRequestContext[Any, Any]) -> bool:
    return bool(ctx.protocol_version) and is_version_at_least(ctx.protocol_version, MODERN)
