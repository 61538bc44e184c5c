"""Obsidian-style link resolution and the link rewrites a rename needs.

Resolution order for a link target: exact vault path, then path suffix, then basename
(closest folder to the linking note, then shortest path), then frontmatter aliases. Markdown
links are first tried relative to the linking note, then from the vault root.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from mcp_tools.servers.notes.markdown import Link, name_key

NOTE_SUFFIX = ".md"


def strip_md(target: str) -> str:
    return target[: -len(NOTE_SUFFIX)] if target.lower().endswith(NOTE_SUFFIX) else target


def stem_of(path: str) -> str:
    return strip_md(path.rpartition("/")[2])  # posixpath.basename, without its call overhead


def has_foreign_extension(target: str) -> bool:
    """`image.png` is an attachment, not a note; `v1.2 plan` has no known extension so stays a note."""
    base = target.rpartition("/")[2]
    if base.lower().endswith(NOTE_SUFFIX) or "." not in base:
        return False
    extension = base.rsplit(".", 1)[1].lower()
    return extension in ATTACHMENT_EXTENSIONS


ATTACHMENT_EXTENSIONS = frozenset(
    [
        "png",
        "jpg",
        "jpeg",
        "gif",
        "bmp",
        "svg",
        "webp",
        "avif",
        "heic",
        "pdf",
        "mp3",
        "wav",
        "m4a",
        "ogg",
        "flac",
        "webm",
        "mp4",
        "mov",
        "mkv",
        "ogv",
        "canvas",
        "base",
        "json",
        "csv",
        "txt",
        "zip",
        "docx",
        "xlsx",
        "pptx",
    ]
)


def closeness(source: str, candidate: str) -> tuple[int, int, int, str]:
    """Sort key: most shared leading folders with the source, then fewest folders, then shortest path."""
    source_parts = posixpath.dirname(source).split("/") if "/" in source else []
    candidate_dirs = posixpath.dirname(candidate).split("/") if "/" in candidate else []
    shared = 0
    for a, b in zip(source_parts, candidate_dirs, strict=False):
        if a != b:
            break
        shared += 1
    return (-shared, len(candidate_dirs), len(candidate), candidate)


class Resolution(NamedTuple):  # a tuple: a first index resolves every link of the vault
    path: str | None
    method: str  # "self" | "exact" | "relative" | "root" | "suffix" | "basename" | "alias" | "none"


class Resolver:
    """Resolves link targets against a snapshot of the vault's note paths and aliases."""

    def __init__(self, paths: Iterable[str], aliases: Mapping[str, Iterable[str]] | None = None) -> None:
        self.by_key: dict[str, str] = {}
        self.by_stem: dict[str, list[str]] = {}
        self.by_alias: dict[str, list[str]] = {}
        self.aliases_of: dict[str, list[str]] = {}
        for path in paths:
            self.add(path, (aliases or {}).get(path, ()))

    def add(self, path: str, aliases: Iterable[str] = ()) -> None:
        self.remove(path)
        self.by_key[name_key(path)] = path
        self.by_stem.setdefault(name_key(stem_of(path)), []).append(path)
        self.aliases_of[path] = [name_key(alias) for alias in aliases]
        for alias in self.aliases_of[path]:
            self.by_alias.setdefault(alias, []).append(path)

    def remove(self, path: str) -> None:
        if self.by_key.pop(name_key(path), None) is None:
            return
        keys = [(self.by_stem, name_key(stem_of(path)))]
        keys += [(self.by_alias, alias) for alias in self.aliases_of.pop(path, [])]
        for table, key in keys:
            remaining = [p for p in table.get(key, ()) if p != path]
            if remaining:
                table[key] = remaining
            else:
                table.pop(key, None)

    def resolve_paths(self, links: Iterable[tuple[str, str, str]]) -> list[str | None]:
        """The note each (source, style, target) resolves to, for storing many links at once.

        A link resolves by its source's folder, never the source's name (but a link to the note
        itself, `[[#Heading]]`), and a vault's links name the same notes from the same folders
        over and over: each folder's answer for a target is found once."""
        found: dict[tuple[str, str, str], str | None] = {}
        paths: list[str | None] = []
        for source, style, target in links:
            if not target.strip():
                paths.append(source)
                continue
            key = (source.rpartition("/")[0], style, target)
            if key not in found:
                found[key] = self.resolve_target(source, style, target).path
            paths.append(found[key])
        return paths

    def resolve(self, source: str, link: Link) -> Resolution:
        return self.resolve_target(source, link.style, link.target)

    def resolve_target(self, source: str, style: str, target: str) -> Resolution:
        target = target.strip()
        if not target:
            return Resolution(source, "self")
        if has_foreign_extension(target):
            return Resolution(None, "none")
        if style == "markdown":
            found = self._markdown(source, target)
            if found.path:
                return found
        return self._wiki(source, target)

    def _markdown(self, source: str, target: str) -> Resolution:
        with_suffix = target if target.lower().endswith(NOTE_SUFFIX) else target + NOTE_SUFFIX
        if not with_suffix.startswith("/"):
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(source), with_suffix))
            if not joined.startswith("../") and joined != ".." and (hit := self.by_key.get(name_key(joined))):
                return Resolution(hit, "relative")
        rooted = posixpath.normpath(with_suffix.lstrip("/"))
        if not rooted.startswith("../") and (hit := self.by_key.get(name_key(rooted))):
            return Resolution(hit, "root")
        return Resolution(None, "none")

    def _wiki(self, source: str, target: str) -> Resolution:
        bare = strip_md(target.lstrip("/"))
        bare_key = name_key(bare)
        key = bare_key + NOTE_SUFFIX  # name_key keeps ".md" as it is, and joins nothing across it
        if hit := self.by_key.get(key):
            return Resolution(hit, "exact")
        if "/" in bare:
            suffix = "/" + key
            same_stem = self.by_stem.get(name_key(posixpath.basename(bare)), ())
            matches = [path for path in same_stem if name_key(path).endswith(suffix)]
            if matches:
                return Resolution(closest(source, matches), "suffix")
            return Resolution(None, "none")
        stems = self.by_stem.get(bare_key)
        if stems:
            return Resolution(closest(source, stems), "basename")
        aliased = self.by_alias.get(name_key(target))
        if aliased:
            return Resolution(closest(source, aliased), "alias")
        return Resolution(None, "none")


def closest(source: str, paths: list[str]) -> str:
    """The path nearest to `source` (the first of equals); most names have a single note."""
    if len(paths) == 1:
        return paths[0]
    return min(paths, key=lambda path: closeness(source, path))


def wiki_target_span(link: Link) -> tuple[int, int]:
    """Offsets (within `link.raw`) of the note part of a wikilink: `[[HERE#frag|alias]]`."""
    start = 3 if link.raw.startswith("!") else 2
    end = start
    while end < len(link.raw) and link.raw[end] not in "#|]":
        end += 1
    return start, end


def markdown_destination_span(link: Link) -> tuple[int, int, bool]:
    """Offsets of the path part of a Markdown link destination and whether it is in <angle brackets>."""
    open_paren = _closing_bracket(link.raw) + 1
    start = open_paren + 1
    angle = link.raw[start] == "<"
    if angle:
        start += 1
    end = start
    stop = ">" if angle else ") \t"
    while end < len(link.raw) and link.raw[end] not in stop and link.raw[end] != "#":
        end += 1
    return start, end, angle


def _closing_bracket(raw: str) -> int:
    depth = 0
    for index, char in enumerate(raw):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return index
    return raw.index("](")


def encode_destination(path: str) -> str:
    """Markdown link destinations escape what would end them; Obsidian writes spaces as %20."""
    return path.replace("%", "%25").replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def relative_path(source: str, target: str) -> str:
    return posixpath.relpath(target, posixpath.dirname(source) or ".")


def rewrite_link(link: Link, source_after: str, new_path: str, before: Resolution, after: Resolver) -> str | None:
    """The new text for one link that resolved to a renamed note, or None when it still resolves."""
    if before.method == "self":
        return None
    if before.method == "alias" and after.resolve(source_after, link).path == new_path:
        return None
    if link.style == "markdown":
        return _rewrite_markdown(link, source_after, new_path, before, after)
    if after.resolve(source_after, link).path == new_path:
        return None
    start, end = wiki_target_span(link)
    original = link.raw[start:end]
    keep_suffix = original.strip().lower().endswith(NOTE_SUFFIX)
    short = stem_of(new_path) + (NOTE_SUFFIX if keep_suffix else "")
    full = new_path if keep_suffix else strip_md(new_path)
    choice = full
    unique = len(after.by_stem.get(name_key(stem_of(new_path)), ())) == 1
    bare = "/" not in strip_md(original.strip())
    if bare and unique and after.resolve_target(source_after, link.style, short).path == new_path:
        choice = short
    return link.raw[:start] + choice + link.raw[end:]


def _rewrite_markdown(link: Link, source_after: str, new_path: str, before: Resolution, after: Resolver) -> str | None:
    still = after.resolve(source_after, link)
    if still.path == new_path and still.method == before.method:
        return None  # a relative path that still holds, or a bare name that still resolves
    start, end, angle = markdown_destination_span(link)
    original = link.raw[start:end]
    if before.method == "root" and not original.startswith((".", "..")):
        new_destination = ("/" if original.startswith("/") else "") + new_path
    else:
        new_destination = relative_path(source_after, new_path)
    if not original.lower().endswith(NOTE_SUFFIX):
        new_destination = strip_md(new_destination)
    if not angle:
        new_destination = encode_destination(new_destination)
    return link.raw[:start] + new_destination + link.raw[end:]


def splice(text: str, replacements: list[tuple[int, int, str]]) -> str:
    """Apply non-overlapping (start, end, new) replacements to `text`."""
    out: list[str] = []
    position = 0
    for start, end, new in sorted(replacements):
        out.append(text[position:start])
        out.append(new)
        position = end
    out.append(text[position:])
    return "".join(out)
