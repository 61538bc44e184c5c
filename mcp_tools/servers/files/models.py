"""Tool argument/result models of the files namespace (kept small: they are the schemas)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field, model_validator

from mcp_tools.core.tooling import MAX_PAGE_CHARS, AbsentWhenNone, Arguments, Output

PathArg = Field(max_length=1024, description="e.g. 'docs/report.md'")
Sha256Arg = Field(
    default=None,
    pattern=r"^[0-9a-fA-F]{64}$",
    description="version from your last read; stale: not written.",
)


EntryType = Literal["file", "folder", "link", "other"]


class Entry(AbsentWhenNone):  # a folder has no size: absent, not null
    path: str
    type: EntryType
    size: int | None = None
    modified: str | None = Field(default=None, description="ISO 8601 UTC")


class ListArgs(Arguments):
    path: str = Field(default="", max_length=1024, description="'' is the root.")
    recursive: bool = False
    pattern: str | None = Field(
        default=None,
        max_length=256,
        description="Glob ('*.md', 'src/**/*.py'); without '/', on names.",
    )
    limit: int = Field(default=200, ge=1, le=200)
    cursor: str | None = Field(default=None, max_length=1400, description="next_cursor of the last page.")


class ListResult(AbsentWhenNone):
    path: str
    entries: list[Entry]
    next_cursor: str | None = None
    note: str | None = Field(default=None, description="Set when listed names cannot be used as paths.")


class ReadArgs(Arguments):
    path: str = PathArg
    offset: int = Field(default=0, ge=0, description="In bytes.")
    max_chars: int = Field(default=20_000, ge=200, le=MAX_PAGE_CHARS, description="Of text, or of base64.")
    limit: int | None = Field(default=None, ge=1, le=MAX_PAGE_CHARS, description="Bytes, if fewer.")
    sha256: bool = False


class ReadResult(AbsentWhenNone):
    path: str
    size: int
    version: str
    sha256: str | None = Field(default=None, description="Of the whole file.")
    mime_type: str
    encoding: Literal["text", "base64", "image"]  # a small image as image content
    content: str
    offset: int
    truncated: bool
    next_offset: int | None = None


class WriteArgs(Arguments):
    nul_allowed = frozenset({"content"})

    path: str = PathArg
    content: str
    encoding: Literal["text", "base64"] = Field(default="text", description="base64 for binary.")
    expected_sha256: str | None = Sha256Arg
    create_parents: bool = True


@dataclass
class ExistingFacts:
    """The file a write or an import would replace, as its risk check found it (for the person)."""

    known: bool = False  # False: it could not be looked at
    size: int | None = None  # None: there is no file there yet
    target_version: str | None = None  # the file as it was when the person was asked


class WriteResult(Output):
    path: str
    size: int
    sha256: str
    created: bool


class Edit(Arguments):
    nul_allowed = frozenset({"old_string", "new_string"})

    old_string: str = Field(description="Exact text, whitespace too.")
    new_string: str = Field(description="Taken literally.")
    replace_all: bool = False


class EditArgs(Arguments):
    path: str = PathArg
    edits: list[Edit] = Field(min_length=1, max_length=100)
    expected_sha256: str | None = Sha256Arg
    dry_run: bool = Field(default=False, description="Diff only.")


class EditResult(Output):
    path: str
    sha256: str
    size: int
    replacements: int
    diff: str
    dry_run: bool


class MkdirArgs(Arguments):
    path: str = PathArg
    parents: bool = True


class MkdirResult(Output):
    path: str
    created: bool


class MoveArgs(Arguments):
    source: str = PathArg
    destination: str = PathArg
    overwrite: bool = False
    create_parents: bool = True


@dataclass
class MoveFacts:
    """The size of the file an overwriting move replaces, as its risk check found it (None: none found)."""

    destination_size: int | None = None
    target_version: str | None = None  # the file replaced, as it was when the person was asked


class MoveResult(Output):
    source: str
    destination: str
    replaced: bool


class DeleteArgs(Arguments):
    path: str = PathArg
    recursive: bool = Field(default=False, description="Needed for a folder.")


@dataclass
class DeleteFacts:
    """What a delete removes, as its risk check found it: the entry and, for a folder, how many are in it."""

    target: Entry | None = None
    file_count: int | None = None
    target_version: str | None = None  # the entry as it was when the person was asked


class DeleteResult(Output):
    path: str
    type: EntryType
    removed: int


class ImportArgs(Arguments):
    path: str = PathArg
    url: str = Field(default="", max_length=4096)
    content_base64: str = Field(default="", max_length=100_000_000, description="instead of url")
    expected_sha256: str | None = Sha256Arg

    @model_validator(mode="after")
    def _one_source(self) -> ImportArgs:
        if bool(self.url) == bool(self.content_base64):
            raise ValueError("give url or content_base64, not both")
        return self


class ImportResult(Output):
    path: str
    size: int
    sha256: str
    created: bool
    content_type: str


class SearchArgs(Arguments):
    query: str = Field(max_length=1000)
    regex: bool = False
    pattern: str | None = Field(default=None, max_length=256, description="Glob on paths.")
    case_sensitive: bool = False
    context_lines: int = Field(default=0, ge=0, le=5)
    limit: int = Field(default=50, ge=1, le=200)
    cursor: str | None = Field(default=None, max_length=2800)


class LineHit(Output):
    path: str
    line: int
    text: str
    before: list[str] = Field(default_factory=list)
    after: list[str] = Field(default_factory=list)


class SearchResult(AbsentWhenNone):
    hits: list[LineHit]
    searched: int  # files searched
    binary: int = 0  # binary files skipped
    partial: list[str] = Field(default_factory=list)  # files over the size bound, searched in their start
    next_cursor: str | None = None
    note: str | None = None


class CopyArgs(Arguments):
    source: str = PathArg
    destination: str = PathArg
    recursive: bool = Field(default=False, description="Needed for a folder.")
    overwrite: bool = False
    create_parents: bool = True


@dataclass
class CopyFacts:
    """What a copy would replace and how much it copies, as its risk check found it."""

    destination_size: int | None = None  # None: no file there
    file_count: int | None = None  # of a folder
    target_version: str | None = None  # the file replaced, as it was when the person was asked


class CopyResult(Output):
    source: str
    destination: str
    copied: int = Field(description="Files copied.")
    replaced: bool
