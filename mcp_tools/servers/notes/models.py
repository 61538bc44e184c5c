"""Config and the tools' input and output models (their JSON schemas reach the model: keep them lean)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, model_validator

from mcp_tools.core.tooling import MAX_PAGE_CHARS, Arguments, Output

SHA256 = Field(
    default=None,
    pattern=r"^[0-9a-fA-F]{64}$",
    description="sha256 of your last read; stale: not written",
)
MAX_TAG_CHARS = 200
Tag = Annotated[str, Field(max_length=MAX_TAG_CHARS)]
LIMIT = Field(default=50, ge=1, le=100)
CURSOR = Field(default=None, max_length=200, description="next_cursor of the last page")
OFFSET = Field(default=0, ge=0, description="next_offset of the last page")
MAX_CHARS = Field(default=20_000, ge=200, le=MAX_PAGE_CHARS)
# notes.rename shows this many files (with their diffs, each cut at DIFF_MAX_CHARS) a page;
# notes.delete names this many of the notes that linked to the deleted one
RENAME_PAGE = 10
DIFF_MAX_CHARS = 2_000
LINKED_FROM_SHOWN = 100


# -- inputs ---------------------------------------------------------------------------------


class NoteArguments(Arguments):
    """Every notes tool's arguments; `vault` is listed only when several vaults are configured."""

    vault: str | None = Field(default=None, max_length=100, description="vault label; default: the default vault")


NotePath = Field(max_length=1024, description="e.g. 'Projects/Plan' ('.md' optional)")


class ReadArgs(NoteArguments):
    path: str = NotePath
    heading: str | None = Field(default=None, max_length=500, description="only this section")
    offset: int = OFFSET
    max_chars: int = MAX_CHARS


class SearchArgs(NoteArguments):
    query: str = Field(min_length=1, max_length=2000)
    top_k: int = Field(default=10, ge=1, le=50)
    tags: list[Tag] = Field(default_factory=list, max_length=20, description="all required; 'a' matches 'a/b'")
    date_after: str | None = Field(default=None, max_length=40, description="ISO date (frontmatter date, else mtime)")
    date_before: str | None = Field(default=None, max_length=40)
    folder: str | None = Field(default=None, max_length=1024)


class WriteArgs(NoteArguments):
    path: str = NotePath
    content: str
    expected_sha256: str | None = SHA256


class UpdateFrontmatterArgs(NoteArguments):
    path: str = NotePath
    set: dict[str, Any] = Field(max_length=100, description="keys to merge; null removes one")
    expected_sha256: str | None = SHA256


class EditArgs(NoteArguments):
    path: str = NotePath
    action: Literal["append", "prepend", "insert", "replace_section", "replace"] = Field(
        description="insert: after heading's own text; replace_section: heading's body and subsections; "
        "replace: the one passage old"
    )
    content: str
    heading: str | None = Field(default=None, max_length=1000, description="Its text, or 'Parent > Child'.")
    old: str | None = None
    expected_sha256: str | None = SHA256


class LinksArgs(NoteArguments):
    path: str = NotePath
    limit: int = LIMIT
    cursor: str | None = CURSOR


class DailyArgs(NoteArguments):
    date: str | None = Field(default=None, max_length=40, description="YYYY-MM-DD; default today")
    create: bool = True
    offset: int = OFFSET
    max_chars: int = MAX_CHARS


class TagArgs(NoteArguments):
    tag: str = Field(min_length=1, max_length=MAX_TAG_CHARS)
    limit: int = LIMIT
    cursor: str | None = CURSOR


class PathArgs(NoteArguments):
    path: str = NotePath


class RenameArgs(NoteArguments):
    path: str = NotePath
    new_path: str = Field(max_length=1024)
    dry_run: bool = False
    cursor: str | None = Field(default=None, max_length=20, description="dry_run: next_cursor of the last page")

    @model_validator(mode="after")
    def _cursor_pages_a_dry_run(self) -> RenameArgs:
        if self.cursor is not None and not self.dry_run:
            raise ValueError("cursor: pages a dry_run only; a rename reports its first files and counts")
        return self


class DeleteArgs(NoteArguments):
    path: str = NotePath
    permanent: bool = False


@dataclass
class RenameFacts:
    """What a rename will rewrite, counted by the precheck for the confirmation."""

    rewrites: tuple[int, int] | None = None  # (files, links); None: not counted (a dry run)


@dataclass
class DeleteFacts:
    """Where the note goes in the vault's trash folder, found by the precheck."""

    trash_to: str | None = None
    target_version: str | None = None  # the note as it was when the person was asked


@dataclass
class WriteFacts:
    """The note a write would replace, as its risk check found it."""

    target_version: str | None = None  # None: no note there yet
    key: str | None = None  # the note really written (`Alpha` is `Alpha.md`); None: not looked at
    exists: bool | None = None  # None: it could not be looked at
    size: int | None = None  # bytes of the note it replaces


class RandomArgs(NoteArguments):
    tag: str | None = Field(default=None, max_length=MAX_TAG_CHARS)
    folder: str | None = Field(default=None, max_length=1024)


# -- outputs --------------------------------------------------------------------------------


class SkippedNote(BaseModel):
    path: str
    reason: str


class IndexState(BaseModel):
    indexed: int
    total: int
    complete: bool
    embedded_chunks: int = 0
    total_chunks: int = 0
    # notes not indexed, and the first 20 of them with why; present only when there are any
    skipped: int = Field(default=0, exclude_if=lambda count: not count)
    skipped_notes: list[SkippedNote] = Field(default_factory=list, exclude_if=lambda notes: not notes)


class NoteOutput(Output):
    """Every notes result; `vault` (the vault that answered) is there only when several are configured."""

    vault: str | None = Field(default=None, exclude_if=lambda label: label is None)


class ReadOutput(NoteOutput):
    path: str
    content: str
    frontmatter: dict[str, Any]
    tags: list[str]
    sha256: str
    heading: str | None = None
    broken_links: list[str] = Field(default_factory=list)  # links to missing notes, headings or blocks
    offset: int = 0
    total_chars: int = 0  # of the note (or section)
    next_offset: int | None = None  # pass as offset for more; null at the end


class Passage(BaseModel):
    heading: str
    snippet: str


class SearchHit(BaseModel):
    path: str
    title: str
    heading: str
    snippet: str
    more: list[Passage] = Field(default_factory=list, description="next best passages")
    score: float


class SearchOutput(NoteOutput):
    mode: Literal["hybrid", "lexical"]
    results: list[SearchHit]
    index: IndexState
    note: str | None = None


class WriteOutput(NoteOutput):
    path: str
    sha256: str
    created: bool
    bytes: int


class EditOutput(NoteOutput):
    path: str
    sha256: str
    changed: bool
    diff: str


class FrontmatterOutput(NoteOutput):
    path: str
    sha256: str
    frontmatter: dict[str, Any]


class Backlink(BaseModel):
    source: str
    kind: str
    text: str
    fragment: str
    line: int


class BacklinksOutput(NoteOutput):
    path: str
    backlinks: list[Backlink]
    total: int
    next_cursor: str | None = None


class ForwardLink(BaseModel):
    target: str
    resolved_path: str | None
    kind: str
    fragment: str
    text: str
    line: int
    missing: str | None = None  # the heading or block the link names does not exist


class ForwardLinksOutput(NoteOutput):
    path: str
    links: list[ForwardLink]
    total: int
    unresolved: int
    next_cursor: str | None = None


class DailyOutput(NoteOutput):
    path: str
    date: str
    created: bool
    content: str
    sha256: str
    offset: int = 0
    total_chars: int = 0
    next_offset: int | None = None


class TaggedNote(BaseModel):
    path: str
    tags: list[str]


class TagOutput(NoteOutput):
    tag: str
    notes: list[TaggedNote]
    total: int
    next_cursor: str | None = None


class MetadataOutput(NoteOutput):
    path: str
    title: str
    frontmatter: dict[str, Any]
    tags: list[str]
    aliases: list[str]
    headings: list[str]
    words: int
    links_out: int
    links_unresolved: int
    backlinks: int
    created: str | None
    modified: str
    size: int
    sha256: str


class FileChange(BaseModel):
    path: str
    links: int
    diff: str | None = None


class RenameOutput(NoteOutput):
    path: str
    new_path: str
    dry_run: bool
    changed: list[FileChange]  # a page of the files that change (dry_run: with diffs)
    warnings: list[str] = Field(default_factory=list)  # links to headings or blocks that do not exist
    files: int = 0  # files that change, in all
    links: int = 0  # links rewritten, in all
    next_cursor: str | None = None  # dry_run: pass as cursor for the next files


class DeleteOutput(NoteOutput):
    path: str
    trashed_to: str | None
    linked_from: list[str]  # the first of them
    linked_from_total: int = 0


class RandomOutput(NoteOutput):
    path: str
    title: str
    tags: list[str]
