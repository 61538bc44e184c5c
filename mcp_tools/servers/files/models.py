"""Config and tool argument/result models of the files namespace (kept small: they are the schemas)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr

from mcp_tools.tooling import Arguments, Output

KIB = 1024
MIB = 1024 * KIB

PathArg = Field(
    max_length=1024, description="Relative to the store root, e.g. 'docs/report.md'. Allowed: A-Z a-z 0-9 _ - . /"
)
Sha256Arg = Field(
    default=None,
    pattern=r"^[0-9a-fA-F]{64}$",
    description="sha256 from your last read; if the file changed since, nothing is written (conflict).",
)


class FilesConfig(BaseModel):
    """The `[files]` section."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["local", "s3"] = "local"
    root: Path | None = Field(default=None, description="Local folder; default: <data_dir>/files.")
    max_read_bytes: int = Field(default=1 * MIB, ge=1 * KIB, le=64 * MIB)
    max_write_bytes: int = Field(default=10 * MIB, ge=1 * KIB, le=1024 * MIB)
    bucket: str | None = None
    prefix: str = ""
    endpoint_url: str | None = None
    region: str | None = None
    access_key_id: str | None = None
    secret_access_key: SecretStr | None = None


EntryType = Literal["file", "folder", "link", "other"]


class Entry(Output):
    path: str
    type: EntryType
    size: int | None = None
    modified: str | None = Field(default=None, description="ISO 8601, UTC")


class ListArgs(Arguments):
    path: str = Field(default="", max_length=1024, description="Folder relative to the root; '' is the root.")
    recursive: bool = False
    pattern: str | None = Field(
        default=None,
        max_length=256,
        description="Glob on the path below the folder ('*.md', 'src/**/*.py'); without '/', on the name.",
    )
    limit: int = Field(default=200, ge=1, le=1000)
    cursor: str | None = Field(default=None, max_length=1400, description="next_cursor from the previous page.")


class ListResult(Output):
    path: str
    entries: list[Entry]
    next_cursor: str | None = None


class ReadArgs(Arguments):
    path: str = PathArg
    offset: int = Field(default=0, ge=0, description="Byte offset to start from.")
    limit: int | None = Field(default=None, ge=1, description="Bytes to return; default and cap: the read limit.")


class ReadResult(Output):
    path: str
    size: int
    sha256: str = Field(description="Of the whole file; pass it back as expected_sha256 when writing.")
    mime_type: str
    encoding: Literal["text", "base64"]
    content: str
    offset: int
    truncated: bool = Field(description="True when more bytes follow; continue at next_offset.")
    next_offset: int | None = None


class WriteArgs(Arguments):
    nul_allowed = frozenset({"content"})

    path: str = PathArg
    content: str
    encoding: Literal["text", "base64"] = Field(default="text", description="'base64' for binary content.")
    expected_sha256: str | None = Sha256Arg
    create_parents: bool = Field(default=True, description="Create missing folders on the way.")

    _existing_size: int | None = PrivateAttr(default=None)
    _existing_known: bool = PrivateAttr(default=False)


class WriteResult(Output):
    path: str
    size: int
    sha256: str
    created: bool


class Edit(Arguments):
    nul_allowed = frozenset({"old_string", "new_string"})

    old_string: str = Field(description="Exact text to find, including whitespace; must match exactly once.")
    new_string: str = Field(description="Replacement text, taken literally ($ and \\ are not special).")
    replace_all: bool = Field(default=False, description="Replace every occurrence instead of exactly one.")


class EditArgs(Arguments):
    path: str = PathArg
    edits: list[Edit] = Field(min_length=1, max_length=100, description="Applied in order, each to the result.")
    expected_sha256: str | None = Sha256Arg
    dry_run: bool = Field(default=False, description="Return the diff without writing.")


class EditResult(Output):
    path: str
    sha256: str = Field(description="Of the new content (of the current content on a dry run).")
    size: int
    replacements: int
    diff: str
    dry_run: bool


class MkdirArgs(Arguments):
    path: str = PathArg
    parents: bool = Field(default=True, description="Create missing parent folders too.")


class MkdirResult(Output):
    path: str
    created: bool


class MoveArgs(Arguments):
    source: str = PathArg
    destination: str = PathArg
    overwrite: bool = Field(default=False, description="Replace an existing destination file.")
    create_parents: bool = Field(default=True, description="Create the destination's missing folders.")

    _destination_size: int | None = PrivateAttr(default=None)


class MoveResult(Output):
    source: str
    destination: str
    replaced: bool


class DeleteArgs(Arguments):
    path: str = PathArg
    recursive: bool = Field(default=False, description="Required to delete a folder and everything in it.")

    _target: Entry | None = PrivateAttr(default=None)
    _file_count: int | None = PrivateAttr(default=None)


class DeleteResult(Output):
    path: str
    type: EntryType
    removed: int = Field(description="Files and folders removed.")
