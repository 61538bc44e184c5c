"""The four docs tools, declared as data.

A document's text is untrusted: the Markdown read is fenced like mail. Writes are built as
batchUpdate requests from Markdown (parse.py, then requests.py) and always carry the
revision they were computed from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_tools.core.tooling import CallContext, Risk, ToolAlias, ToolFailure, ToolSpec, UpstreamScopes
from mcp_tools.servers.docs.models import (
    AppendArgs,
    CreateArgs,
    ReadArgs,
    ReadResult,
    ReplaceArgs,
    ReplaceResult,
    Written,
)
from mcp_tools.servers.google.scopes import DOCUMENTS, DOCUMENTS_READONLY, DRIVE_FILE
from mcp_tools.servers.google.sharing import SharingFacts, exposure_risk, told
from mcp_tools.servers.google.text import page
from mcp_tools.util.text import fence

if TYPE_CHECKING:
    from mcp_tools.servers.docs.service import DocsService


def _url(document_id: str) -> str:
    from mcp_tools.servers.docs.service import URL

    return URL.format(document_id)


# --- read --------------------------------------------------------------------------------------


async def read(service: DocsService, args: ReadArgs, ctx: CallContext) -> ReadResult:
    from mcp_tools.servers.docs.render import to_markdown

    document = await service.run(READ.name, service.get, READ.name, args.id)
    markdown = to_markdown(document)
    text, next_offset = page(markdown, args.offset, args.max_chars, "document")
    return ReadResult(
        id=document.get("documentId", args.id),
        title=document.get("title", ""),
        revision=document.get("revisionId", ""),
        text=text,
        offset=args.offset,
        total_chars=len(markdown),
        next_offset=next_offset,
    )


def render_read(result: ReadResult) -> str:
    end = result.offset + len(result.text)
    head = f"Google Doc {result.title!r} (id {result.id}, revision {result.revision})"
    head += f", characters {result.offset}-{end} of {result.total_chars}"
    if result.next_offset is not None:
        head += f"; {result.total_chars - result.next_offset:,} more, call again with offset={result.next_offset}"
    return head + "\n" + fence("document", result.text)


# --- create and append -------------------------------------------------------------------------


async def create(service: DocsService, args: CreateArgs, ctx: CallContext) -> Written:
    from mcp_tools.servers.docs.parse import parse
    from mcp_tools.servers.docs.requests import append_requests
    from mcp_tools.servers.docs.service import end_of_body, revision_after

    tool = CREATE.name
    blocks = parse(args.text)

    def make() -> Written:
        made = service.create(tool, args.title)
        document_id, revision = made["documentId"], made.get("revisionId", "")
        if blocks:
            plan = append_requests(blocks, *end_of_body(made))
            try:
                revision = revision_after(service.update(tool, document_id, plan.requests, revision))
            except ToolFailure as failure:
                failure.message = f"document {document_id} was created empty, then: {failure.message}"
                failure.hint = f"append the text with docs_append (id {document_id})"
                raise
        return Written(id=document_id, url=_url(document_id), revision=revision)

    created: Written = await service.run(tool, make)
    return created


async def append_risk(service: DocsService, args: AppendArgs, facts: SharingFacts) -> Risk:
    """High when the document is another's or shared: they read what is appended."""
    return await exposure_risk(service, APPEND.name, args.id, facts, Risk.MEDIUM)


async def append(service: DocsService, args: AppendArgs, ctx: CallContext, facts: SharingFacts) -> Written:
    from mcp_tools.servers.docs.parse import parse
    from mcp_tools.servers.docs.requests import append_requests
    from mcp_tools.servers.docs.service import end_of_body, revision_after

    tool = APPEND.name
    blocks = parse(args.text)
    if not blocks:
        raise ToolFailure("invalid_arguments", "text: holds nothing to append", "send Markdown with some text")

    def write() -> Written:
        document = service.get_current(tool, args.id, args.revision or None)
        end, last_empty = end_of_body(document)
        plan = append_requests(blocks, end, last_empty)
        answer = service.update(tool, args.id, plan.requests, document.get("revisionId", ""))
        return Written(id=args.id, url=_url(args.id), revision=revision_after(answer))

    appended: Written = await service.run(tool, write)
    return appended


# --- replace -----------------------------------------------------------------------------------


@dataclass
class ReplaceFacts(SharingFacts):
    """What the precheck found in the document: the matches, its title and the revision it read."""

    found: tuple[int, str, str] | None = None  # (matches, title, revision)


async def replace_risk(service: DocsService, args: ReplaceArgs, facts: ReplaceFacts) -> Risk:
    if args.dry_run:
        return Risk.LOW
    base = Risk.MEDIUM if args.expected_matches is not None else Risk.HIGH
    return await exposure_risk(service, REPLACE.name, args.id, facts, base)


async def precheck_replace(service: DocsService, args: ReplaceArgs, facts: ReplaceFacts) -> None:
    from mcp_tools.servers.docs.service import count_matches

    tool = REPLACE.name
    document = await service.run(tool, service.get_current, tool, args.id, args.revision or None)
    matches = count_matches(document, args.find, args.match_case)
    facts.found = (matches, document.get("title", ""), document.get("revisionId", ""))
    if args.dry_run:
        return
    if args.expected_matches is not None and args.expected_matches != matches:
        raise ToolFailure(
            "conflict",
            f"expected {args.expected_matches} matches of {args.find!r}, the document has {matches}",
            "count again with dry_run, then pass that count as expected_matches",
            {"matches": matches},
        )
    if matches == 0:
        raise ToolFailure(
            "not_found",
            f"{args.find!r} does not occur in the document" + (" (case-sensitive)" if args.match_case else ""),
            "check the text with docs_read, or set match_case false",
        )


def describe_replace(args: ReplaceArgs, facts: ReplaceFacts) -> str:
    if facts.found is None:
        return f"replace {args.find!r} with {args.replace!r} in Google Doc {args.id}"
    matches, title, _ = facts.found
    case = "case-sensitive" if args.match_case else "ignoring case"
    line = f"Replace {matches} occurrence(s) of {args.find!r} with {args.replace!r} ({case}) in Google Doc {title!r}"
    return told(f"{line} ({args.id})", facts)


async def replace(service: DocsService, args: ReplaceArgs, ctx: CallContext, facts: ReplaceFacts) -> ReplaceResult:
    from mcp_tools.servers.docs.service import revision_after

    if facts.found is None:
        await precheck_replace(service, args, facts)
    assert facts.found is not None  # the precheck counted or raised
    matches, _, revision = facts.found
    if args.dry_run:
        return ReplaceResult(id=args.id, matches=matches, dry_run=True, revision=revision)
    request = {
        "replaceAllText": {
            "containsText": {"text": args.find, "matchCase": args.match_case},
            "replaceText": args.replace,
        }
    }
    answer = await service.run(REPLACE.name, service.update, REPLACE.name, args.id, [request], revision)
    # Google leaves a count of 0 out of the reply (proto3 defaults)
    changed = ((answer.get("replies") or [{}])[0].get("replaceAllText") or {}).get("occurrencesChanged", 0)
    return ReplaceResult(id=args.id, matches=int(changed), dry_run=False, revision=revision_after(answer))


def render_replace(result: ReplaceResult) -> str:
    if result.dry_run:
        return f"{result.matches} match(es); nothing changed (revision {result.revision})"
    return f"Replaced {result.matches} occurrence(s); revision {result.revision}"


# Docs API argument names, as other systems' docs tools pass them.
_ALIAS_RENAMES = {
    "documentId": "id",
    "document_id": "id",
    "url": "id",
    "content": "text",
    "markdown": "text",
    "body": "text",
    "containsText": "find",
    "replaceText": "replace",
    "matchCase": "match_case",
    "revisionId": "revision",
    "requiredRevisionId": "revision",
}


def _replace_alias(arguments: dict[str, Any]) -> dict[str, Any]:
    """Google's `containsText: {text, matchCase}` object becomes docs.replace's `find` and `match_case`."""
    out = dict(arguments)
    criteria = out.get("find")
    if isinstance(criteria, dict) and isinstance(criteria.get("text"), str):
        out["find"] = criteria["text"]
        if "matchCase" in criteria:
            out.setdefault("match_case", criteria["matchCase"])
    return out


TOOLS: list[ToolSpec[Any, Any, Any]] = [
    READ := ToolSpec(
        name="docs.read",
        scopes=UpstreamScopes(
            (DRIVE_FILE,), ("docs.documents.get",), wider={"read": (DOCUMENTS_READONLY,), "all": (DOCUMENTS,)}
        ),
        aliases=(ToolAlias("docs_read", _ALIAS_RENAMES),),
        title="Read Google Doc",
        description="A Doc as Markdown, with its revision; page with next_offset.",
        input_model=ReadArgs,
        output_model=ReadResult,
        handler=read,
        risk=Risk.LOW,
        describe=lambda args: f"read Google Doc {args.id}",
        read_only=True,
        idempotent=True,
        open_world=True,
        tier="core",
        render_text=render_read,
    ),
    CREATE := ToolSpec(
        name="docs.create",
        scopes=UpstreamScopes(
            (DRIVE_FILE,), ("docs.documents.create", "docs.documents.batchUpdate"), wider={"all": (DOCUMENTS,)}
        ),
        aliases=(ToolAlias("docs_create", _ALIAS_RENAMES),),
        title="Create Google Doc",
        description="Create a Google Doc from Markdown (headings, lists, tables, links, bold, italic).",
        input_model=CreateArgs,
        output_model=Written,
        handler=create,
        risk=Risk.MEDIUM,
        describe=lambda args: f"create Google Doc {args.title!r} ({len(args.text)} characters of Markdown)",
        open_world=True,
        tier="extended",
        destructive=False,
    ),
    APPEND := ToolSpec(
        name="docs.append",
        scopes=UpstreamScopes(
            (DRIVE_FILE,),
            ("drive.files.get", "docs.documents.get", "docs.documents.batchUpdate"),
            wider={"all": (DOCUMENTS,)},
        ),
        aliases=(ToolAlias("docs_append", _ALIAS_RENAMES),),
        title="Append to Google Doc",
        description="Append Markdown at the end of a Google Doc.",
        input_model=AppendArgs,
        output_model=Written,
        handler=append,
        risk=Risk.MEDIUM,
        describe=lambda args, facts: told(
            f"append {len(args.text)} characters of Markdown to Google Doc {args.id}", facts
        ),
        dynamic_risk=append_risk,
        facts=SharingFacts,
        open_world=True,
        tier="extended",
        destructive=False,
    ),
    REPLACE := ToolSpec(
        name="docs.replace",
        scopes=UpstreamScopes(
            (DRIVE_FILE,),
            ("drive.files.get", "docs.documents.get", "docs.documents.batchUpdate"),
            wider={"all": (DOCUMENTS,)},
        ),
        aliases=(ToolAlias("docs_replace", _ALIAS_RENAMES, _replace_alias),),
        title="Find and replace in Google Doc",
        description="Replace every occurrence of text in a Google Doc.",
        input_model=ReplaceArgs,
        output_model=ReplaceResult,
        handler=replace,
        risk=Risk.LOW,
        describe=describe_replace,
        dynamic_risk=replace_risk,
        precheck=precheck_replace,
        facts=ReplaceFacts,
        open_world=True,
        tier="extended",
        destructive=True,
        render_text=render_replace,
    ),
]
