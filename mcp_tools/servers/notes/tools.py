"""The notes tools, declared as data; each handler runs its service method in a worker thread."""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from mcp_tools.core.tooling import CallContext, Risk, ToolAlias, ToolFailure, ToolSpec
from mcp_tools.servers.notes import models as m
from mcp_tools.util.wording import human_size, plural

if TYPE_CHECKING:  # the service module (regexes, SQLite, sandbox) loads only when the namespace starts
    from mcp_tools.servers.notes.service import NotesService


def route(service: NotesService, args: Any) -> tuple[str, NotesService]:
    """The vault the arguments name, and its service (see `vaults`)."""
    from mcp_tools.servers.notes.vaults import pick

    return pick(service, args)


def stamp(service: NotesService, label: str, result: Any) -> Any:
    from mcp_tools.servers.notes.vaults import answered

    return answered(service, label, result)


def threaded(method: str) -> Callable[[NotesService, Any, CallContext], Awaitable[Any]]:
    """A handler that runs the service method `method` in a worker thread (SQLite and file I/O block)."""

    async def handler(service: NotesService, args: Any, ctx: CallContext) -> Any:
        label, vault = route(service, args)
        return stamp(service, label, await anyio.to_thread.run_sync(partial(getattr(vault, method), args)))

    return handler


def precheck(method: str) -> Callable[[NotesService, Any], Awaitable[None]]:
    """A precondition check: the service method `method`, in a worker thread."""

    async def check(service: NotesService, args: Any) -> None:
        await anyio.to_thread.run_sync(partial(getattr(route(service, args)[1], method), args))

    return check


async def precheck_rename(service: NotesService, args: m.RenameArgs, facts: m.RenameFacts) -> None:
    await anyio.to_thread.run_sync(route(service, args)[1].precheck_rename, args, facts)


async def precheck_delete(service: NotesService, args: m.DeleteArgs, facts: m.DeleteFacts) -> None:
    await anyio.to_thread.run_sync(route(service, args)[1].precheck_delete, args, facts)


async def delete_handler(
    service: NotesService, args: m.DeleteArgs, ctx: CallContext, facts: m.DeleteFacts
) -> m.DeleteOutput:
    label, vault = route(service, args)
    result: m.DeleteOutput = stamp(service, label, await anyio.to_thread.run_sync(vault.delete, args))
    return result


async def rename_handler(
    service: NotesService, args: m.RenameArgs, ctx: CallContext, facts: m.RenameFacts
) -> m.RenameOutput:
    label, vault = route(service, args)
    await ctx.report_progress(0, 1, f"planning the rename of {args.path}")
    result: m.RenameOutput = stamp(service, label, await anyio.to_thread.run_sync(partial(vault.rename, args)))
    await ctx.report_progress(1, 1, f"{len(result.changed)} files {'would change' if args.dry_run else 'changed'}")
    return result


def in_vault(describe: Callable[..., str]) -> Callable[..., str]:
    """The description, naming the vault when the call names one (the person approving sees where)."""

    @functools.wraps(describe)  # the hooks contract reads the signature: facts stay declared as they were
    def described(args: Any, *facts: Any) -> str:
        line = describe(args, *facts)
        return line + f" in vault {args.vault!r}" if args.vault else line

    return described


def describe_rename(args: m.RenameArgs, facts: m.RenameFacts) -> str:
    if args.dry_run:
        return f"preview renaming note {args.path!r} to {args.new_path!r} (changes nothing)"
    line = f"rename note {args.path!r} to {args.new_path!r}"
    if facts.rewrites is None:
        return line + ", rewriting the links to it"
    files, links = facts.rewrites
    if not links:
        return line + "; no links need rewriting"
    return line + f", rewriting {links} {plural(links, 'link')} in {files} {plural(files, 'file')}"


def describe_delete(args: m.DeleteArgs, facts: m.DeleteFacts) -> str:
    if args.permanent:
        return f"permanently delete note {args.path!r} (it does not go to the trash folder; this cannot be undone)"
    where = f" as {facts.trash_to!r}" if facts.trash_to else ""
    return f"move note {args.path!r} to the vault's trash folder{where}"


def _position(what: str, offset: int, shown: int, total: int, next_offset: int | None) -> str:
    line = f"{what}: characters {offset:,}-{offset + shown:,} of {total:,}"
    if next_offset is not None:
        line += f"; {total - next_offset:,} more, call again with offset={next_offset}"
    return line


def vault_of(out: m.NoteOutput) -> str:
    """`vault work: ` before a rendered result when several vaults are configured."""
    return f"vault {out.vault}: " if out.vault else ""


def render_read(out: m.ReadOutput) -> str:
    """The note for people and text-only clients: what identifies it, then its text, once."""
    head = [f"{vault_of(out)}{out.path} (sha256 {out.sha256})" + (f", section {out.heading!r}" if out.heading else "")]
    if out.tags:
        head.append("tags: " + ", ".join(out.tags))
    if out.frontmatter:
        head.append("frontmatter: " + json.dumps(out.frontmatter, ensure_ascii=False, default=str))
    head += [f"broken link: {link}" for link in out.broken_links]
    head.append(_position("content", out.offset, len(out.content), out.total_chars, out.next_offset))
    return "\n".join(head) + "\n\n" + out.content


def render_daily(out: m.DailyOutput) -> str:
    head = f"{vault_of(out)}{out.path} ({out.date}, {'created' if out.created else 'existing'}, sha256 {out.sha256})"
    return (
        head
        + "\n"
        + _position("content", out.offset, len(out.content), out.total_chars, out.next_offset)
        + ("\n\n" + out.content)
    )


def render_rename(out: m.RenameOutput) -> str:
    verb = "would change" if out.dry_run else "changed"
    lines = [f"{vault_of(out)}{out.path} -> {out.new_path}: {verb} {out.links:,} links in {out.files:,} files."]
    lines += [f"warning: {warning}" for warning in out.warnings]
    for change in out.changed:
        lines.append(f"- {change.path} ({change.links} links)")
        if change.diff:
            lines.append(change.diff.rstrip("\n"))
    if out.next_cursor is not None:
        lines.append(f"{out.files - int(out.next_cursor):,} more files, call again with cursor={out.next_cursor!r}")
    elif not out.dry_run and out.files > len(out.changed):
        lines.append(f"and {out.files - len(out.changed):,} more files (notes.backlinks of {out.new_path} lists them)")
    return "\n".join(lines)


def render_delete(out: m.DeleteOutput) -> str:
    done = f"moved to {out.trashed_to}" if out.trashed_to else "deleted permanently"
    linked = f"{out.linked_from_total:,} {plural(out.linked_from_total, 'note')} linked to it"
    lines = [f"{vault_of(out)}{out.path} {done}; {linked}."]
    lines += [f"- {path}" for path in out.linked_from]
    if out.linked_from_total > len(out.linked_from):
        lines.append(f"and {out.linked_from_total - len(out.linked_from):,} more")
    return "\n".join(lines)


async def write_risk(service: NotesService, args: m.WriteArgs, facts: m.WriteFacts) -> Risk:
    """Replacing a note without proving which version was read is an overwrite. What the write
    would create or replace is kept for its description, from one look at the vault."""
    try:
        vault = route(service, args)[1]
        facts.key, facts.size, version = await anyio.to_thread.run_sync(vault.write_target, args.path)
    except ToolFailure:
        return Risk.MEDIUM  # a path that is refused; the precheck says why
    facts.exists = facts.size is not None
    if args.expected_sha256 is None and facts.exists:
        facts.target_version = version
        return Risk.HIGH
    return Risk.MEDIUM


async def write_handler(service: NotesService, args: m.WriteArgs, ctx: CallContext, facts: m.WriteFacts) -> Any:
    label, vault = route(service, args)
    return stamp(service, label, await anyio.to_thread.run_sync(vault.write, args))


async def precheck_write(service: NotesService, args: m.WriteArgs, facts: m.WriteFacts) -> None:
    await anyio.to_thread.run_sync(route(service, args)[1].precheck_write, args)


def describe_write(args: m.WriteArgs, facts: m.WriteFacts) -> str:
    """The file really written (`Alpha` is `Alpha.md`), and whether it is created or replaced."""
    count = len(args.content)
    characters = f"{count:,} {plural(count, 'character')}"
    if facts.key is None or facts.exists is None:  # not looked at: say what may happen
        replacing = "" if args.expected_sha256 else ", replacing it if it exists"
        return f"write note {args.path} ({characters}){replacing}"
    if facts.exists:
        return f"Replace note {facts.key} ({human_size(facts.size)}) with {characters}"
    return f"Create note {facts.key} ({characters})"


def describe_edit(args: m.EditArgs) -> str:
    count = len(args.content)
    what = f"{count:,} {plural(count, 'character')}"
    if args.action == "append":
        return f"append {what} to note {args.path}"
    if args.action == "prepend":
        return f"add {what} at the top of note {args.path}"
    if args.action == "insert":
        return f"insert {what} under heading {args.heading!r} of note {args.path}"
    if args.action == "replace_section":
        return f"replace the section {args.heading!r} of note {args.path} with {what}"
    return f"replace a passage of {len(args.old or ''):,} characters in note {args.path} with {what}"


async def daily_risk(service: NotesService, args: m.DailyArgs) -> Risk:
    def creates() -> bool:
        try:
            vault = route(service, args)[1]
            key, _ = vault.daily_key(args.date)
        except Exception:
            return False
        return args.create and not vault.exists(key)

    return Risk.MEDIUM if await anyio.to_thread.run_sync(creates) else Risk.LOW


# What other systems' models call the notes tools (the vault servers this namespace replaces).
_SEARCH_ALIAS_RENAMES = {"limit": "top_k", "max_results": "top_k", "maxResults": "top_k", "k": "top_k"}


_TOOLS: list[ToolSpec[NotesService, Any, Any]] = [
    READ := ToolSpec(
        name="notes.read",
        aliases=(ToolAlias("read_note"),),
        render_text=render_read,
        tier="core",
        title="Read a note",
        description="A note (or one section) with its frontmatter, tags and sha256.",
        input_model=m.ReadArgs,
        output_model=m.ReadOutput,
        handler=threaded("read"),
        risk=Risk.LOW,
        describe=lambda a: f"read note {a.path}",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="notes.search",
        aliases=(ToolAlias("search_notes", _SEARCH_ALIAS_RENAMES),),
        tier="core",
        title="Search notes",
        description=("Find notes by words or meaning; filter by tag, date, folder."),
        input_model=m.SearchArgs,
        output_model=m.SearchOutput,
        handler=threaded("search"),
        risk=Risk.LOW,
        describe=lambda a: f"search notes for {a.query!r}",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="notes.write",
        aliases=(ToolAlias("write_note"),),
        tier="core",
        title="Write a note",
        description=("Create or replace a note; pass expected_sha256 when replacing."),
        input_model=m.WriteArgs,
        output_model=m.WriteOutput,
        handler=write_handler,
        risk=Risk.MEDIUM,
        dynamic_risk=write_risk,
        describe=describe_write,
        precheck=precheck_write,
        facts=m.WriteFacts,
    ),
    ToolSpec(
        name="notes.edit",
        aliases=(ToolAlias("edit_note"),),
        tier="extended",
        title="Edit a note",
        description="Change a note in place: append, prepend, insert under or replace a heading's section, "
        "or replace one exact passage.",
        input_model=m.EditArgs,
        output_model=m.EditOutput,
        handler=threaded("edit"),
        risk=Risk.MEDIUM,
        describe=describe_edit,
        precheck=precheck("precheck_edit"),
    ),
    ToolSpec(
        name="notes.update_frontmatter",
        aliases=(ToolAlias("update_frontmatter", {"frontmatter": "set", "updates": "set"}),),
        tier="extended",
        title="Update frontmatter",
        description="Merge keys into a note's YAML frontmatter; the body stays untouched.",
        input_model=m.UpdateFrontmatterArgs,
        output_model=m.FrontmatterOutput,
        handler=threaded("update_frontmatter"),
        risk=Risk.MEDIUM,
        describe=lambda a: f"set frontmatter {', '.join(sorted(a.set))} on {a.path}",
        idempotent=True,
        precheck=precheck("precheck_update_frontmatter"),
    ),
    ToolSpec(
        name="notes.backlinks",
        aliases=(ToolAlias("list_backlinks"),),
        tier="extended",
        title="Backlinks",
        description="Notes that link to this note.",
        input_model=m.LinksArgs,
        output_model=m.BacklinksOutput,
        handler=threaded("backlinks"),
        risk=Risk.LOW,
        describe=lambda a: f"list backlinks of {a.path}",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="notes.forward_links",
        aliases=(ToolAlias("list_forward_links"),),
        tier="extended",
        title="Forward links",
        description="Links in this note and where they resolve.",
        input_model=m.LinksArgs,
        output_model=m.ForwardLinksOutput,
        handler=threaded("forward_links"),
        risk=Risk.LOW,
        describe=lambda a: f"list links in {a.path}",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="notes.daily",
        aliases=(ToolAlias("get_daily_note"),),
        render_text=render_daily,
        tier="core",
        title="Daily note",
        description="Today's (or a date's) daily note, made from the template if missing.",
        input_model=m.DailyArgs,
        output_model=m.DailyOutput,
        handler=threaded("daily"),
        risk=Risk.LOW,
        dynamic_risk=daily_risk,
        describe=lambda a: (
            f"open the daily note for {a.date or 'today'}" + (" (creating it if missing)" if a.create else "")
        ),
    ),
    ToolSpec(
        name="notes.search_by_tag",
        aliases=(ToolAlias("search_by_tag"),),
        tier="extended",
        title="Notes by tag",
        description="Notes with a tag (frontmatter or inline); 'a' also matches 'a/b'.",
        input_model=m.TagArgs,
        output_model=m.TagOutput,
        handler=threaded("search_by_tag"),
        risk=Risk.LOW,
        describe=lambda a: f"list notes tagged #{a.tag}",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="notes.metadata",
        aliases=(ToolAlias("get_note_metadata"),),
        tier="extended",
        title="Note metadata",
        description="A note's frontmatter, tags, headings, counts and dates, without its body.",
        input_model=m.PathArgs,
        output_model=m.MetadataOutput,
        handler=threaded("metadata"),
        risk=Risk.LOW,
        describe=lambda a: f"read metadata of {a.path}",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="notes.rename",
        aliases=(ToolAlias("rename_note", {"new_name": "new_path", "destination": "new_path"}),),
        render_text=render_rename,
        tier="extended",
        title="Rename a note",
        description="Move or rename a note and rewrite every link to it; dry_run shows the diffs.",
        input_model=m.RenameArgs,
        output_model=m.RenameOutput,
        handler=rename_handler,
        risk=Risk.HIGH,
        describe=describe_rename,
        precheck=precheck_rename,
        facts=m.RenameFacts,
        preview=lambda a: a.dry_run,
    ),
    ToolSpec(
        name="notes.delete",
        aliases=(ToolAlias("delete_note"),),
        render_text=render_delete,
        tier="extended",
        title="Delete a note",
        description=("Move a note to the vault's trash (or delete it: permanent); lists notes that linked to it."),
        input_model=m.DeleteArgs,
        output_model=m.DeleteOutput,
        handler=delete_handler,
        risk=Risk.HIGH,
        describe=describe_delete,
        precheck=precheck_delete,
        facts=m.DeleteFacts,
    ),
    ToolSpec(
        name="notes.random",
        aliases=(ToolAlias("get_random_note"),),
        tier="extended",
        title="Random note",
        description="A random note, optionally within a tag or folder.",
        input_model=m.RandomArgs,
        output_model=m.RandomOutput,
        handler=threaded("random_note"),
        risk=Risk.LOW,
        describe=lambda a: "pick a random note",
        read_only=True,
    ),
]
TOOLS: list[ToolSpec[NotesService, Any, Any]] = [replace(spec, describe=in_vault(spec.describe)) for spec in _TOOLS]
