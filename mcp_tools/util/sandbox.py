"""Containment of relative keys under a root folder, and atomic file I/O that cannot be escaped.

A model names files by *keys*: relative, "/"-separated paths. Every key is checked twice:
lexically (characters and segments) and then on disk (the real path must lie inside the
root's real path). All I/O then walks from a file descriptor of the root, one segment at a
time with ``O_NOFOLLOW``, so a symlink swapped in after the check is refused rather than
followed.

Public API
----------
``check_key(key, policy="strict", *, field="path", allow_empty=False) -> tuple[str, ...]``
    Validate a key and return its segments. Policies:

    - ``"strict"``: only ``[A-Za-z0-9_\\-/.]`` (the files store).
    - ``"unicode"``: printable Unicode (spaces, punctuation, accents, any script) but no
      control, bidi, private-use, unassigned or invisible characters (a zero-width joiner or
      non-joiner only between two visible characters, as in emoji and Persian; a variation
      selector only after one), no backslash, no look-alike of '/' or '\\' (U+2215, U+FF0F,
      ...), no segment that compatibility normalisation turns into '.' or '..' (U+FF0E U+FF0E,
      U+2025), and no segment that starts or ends with a space (invisible in a confirmation).
      Names are never normalised, so NFC and NFD names round-trip exactly as given.

    Names on disk that are not valid UTF-8 (an unzip or a sync client can leave them) are
    written in keys with each undecodable byte as ``\\xHH`` (``HH`` from ``80`` to ``ff``,
    lower case) and a literal backslash as ``\\\\``; ``escape_name`` makes that form from an
    OS name and the sandbox turns it back, so such a file can be listed, moved and deleted
    by the escaped key. Any other backslash is refused.

    Both refuse a leading ``/``, empty, ``.`` or ``..`` segments, keys over ``MAX_KEY_CHARS``
    characters and segments over ``MAX_SEGMENT_BYTES`` UTF-8 bytes. ``allow_empty`` accepts
    ``""`` as the root itself (for listings). Failures raise
    ``ToolFailure("invalid_arguments", ...)`` naming ``field`` and the rule broken.

``Sandbox(root, *, create=True)``
    The root's real path is taken once, at construction (the root may itself be a symlink;
    prefix siblings such as ``/data/files-evil`` are outside because containment compares
    whole path segments). Methods (``key`` arguments are checked with the sandbox's policy):

    - ``resolve(key, *, field="path", allow_empty=False) -> Path``: the real path inside
      the root, which may not exist yet; a symlink on the way that leads out is refused
      (``invalid_arguments``); for a missing path the deepest existing parent is checked.
    - ``key_of(path) -> str``: the key of a real path inside the root.
    - ``open_dir(key, *, create=False) -> fd`` (context manager): a directory descriptor
      reached from the root without following any symlink; ``create`` makes missing folders.
    - ``read_bytes(key, *, max_bytes=None) -> bytes``: read a regular file with
      ``O_NOFOLLOW`` (refuses FIFOs and devices; ``too_large`` beyond ``max_bytes``).
    - ``write_bytes(key, data, *, create_parents=False) -> None``: atomic replace: a
      temporary file in the same folder, ``fsync``, then ``os.replace`` relative to the
      folder's descriptor, so a symlink at the target is replaced, never followed.
    - ``open_file(key) -> BinaryIO`` (context manager): the same checks as ``read_bytes``,
      for streaming or windowed reads.
    - ``stat(key) -> os.stat_result | None`` (``lstat`` semantics), ``exists(key)``.
    - Reads and writes follow an in-root symlink at the key to its target; ``stat``,
      ``unlink``, ``rmdir``, ``rmtree``, ``mkdir`` and ``rename`` act on the link itself.
    - ``unlink(key)``, ``rmdir(key)``, ``rmtree(key)``, ``mkdir(key, *, parents=False)``,
      ``rename(src, dst, *, overwrite=False)``: same descriptor-relative walking.

``atomic_write(dir_fd, name, data)`` and ``read_nofollow(dir_fd, name, max_bytes)`` are the
descriptor-level primitives, for callers that already hold a folder descriptor.

Missing files raise ``ToolFailure("not_found", ...)``; a file where a folder is expected (or
the reverse) raises ``conflict``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import stat as stat_module
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Literal

from mcp_tools.core.tooling import ToolFailure

# Credentials commonly kept in a home directory, and the config folders of the MCP clients
# (Claude Desktop's holds the server entry, its environment and so any token put there) and of
# this project; hidden inside the sandbox, and never inside a root or working folder.
HOME_SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".config/gcloud",
    ".config/gh",
    ".config/mcp-tools",
    ".config/Claude",
    "Library/Application Support/Claude",
    "Library/Application Support/mcp-tools",
    ".claude",
    ".claude.json",
)


def stat_version(info: os.stat_result) -> str:
    """What changes when a file does, for an approval to cover one version of it: a replacing
    (atomic) write makes a new inode, an edit in place a new change time, which unlike the
    modification time no one can set back."""
    return f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def contains(folder: Path, path: Path) -> bool:
    """Whether `path` is `folder` or lies below it, as written or once symlinks are resolved."""
    pairs = ((Path(os.path.abspath(folder)), Path(os.path.abspath(path))), (folder.resolve(), path.resolve()))
    return any(inner == outer or outer in inner.parents for outer, inner in pairs)


def protected_paths(
    state_dir: Path, data_dir: Path, config_file: Path | None, home: Path | None, environ: dict[str, str]
) -> list[Path]:
    """What a root or working folder must not hold: our state and data, the config's folder, the
    home directory's credential folders and the MCP clients' config folders."""
    found = [state_dir, data_dir]
    if config_file is not None:
        found.append(config_file.parent)
    found += home_secrets(home, environ)
    return found


def home_secrets(home: Path | None, environ: dict[str, str]) -> list[Path]:
    found = [home / name for name in HOME_SECRETS] if home else []
    xdg_config = environ.get("XDG_CONFIG_HOME")
    if xdg_config:
        found += [Path(xdg_config) / "mcp-tools", Path(xdg_config) / "Claude"]
    return found


def protected_in(
    root: Path,
    state_dir: Path,
    data_dir: Path,
    config_file: Path | None,
    home: Path | None,
    environ: dict[str, str],
) -> Path | None:
    """The protected path a store's root would expose (it holds it, or lies inside our state or a
    credential folder), or None. A root inside the data folder is fine (even where it shares the
    state folder): the default file store lives there."""
    for protected in protected_paths(state_dir, data_dir, config_file, home, environ):
        if contains(root, protected):
            return protected
    if contains(state_dir, root) and not contains(data_dir, root):
        return state_dir
    for protected in home_secrets(home, environ):
        if contains(protected, root):
            return protected
    return None


KeyPolicy = Literal["strict", "unicode"]

MAX_KEY_CHARS = 1024
MAX_SEGMENT_BYTES = 255
TEMP_SUFFIX = ".mcp-tmp"

_STRICT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-/.")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC


_ESCAPE = re.compile(r"\\(?:x[89a-f][0-9a-f]|\\)")


def escape_name(name: str) -> str:
    """An OS name (undecodable bytes as surrogate escapes) as valid UTF-8: bytes as \\xHH, \\ as \\\\."""
    if "\\" not in name and name.isascii():
        return name
    out = []
    for char in name:
        code = ord(char)
        if char == "\\":
            out.append("\\\\")
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        else:
            out.append(char)
    return "".join(out)


def unescape_name(name: str) -> str:
    """The OS name of an escaped key segment; the inverse of `escape_name`."""
    if "\\" not in name:
        return name
    return _ESCAPE.sub(lambda match: "\\" if match[0] == "\\\\" else chr(0xDC00 + int(match[0][2:], 16)), name)


def _invalid(field: str, message: str, hint: str | None = None) -> ToolFailure:
    return ToolFailure("invalid_arguments", f"{field} {message}", hint)


_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_JOINERS = frozenset("\u200c\u200d")  # ZWNJ, ZWJ: Persian words, emoji sequences
# Invisible characters outside the Cf category (Unicode's default-ignorable letters and marks, blanks).
_INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0")
# Look-alikes of '/' and '\\' that compatibility normalisation leaves alone.
_SLASH_LOOKALIKES = frozenset("\u1735\u2044\u2215\u2216\u2571\u2572\u27cb\u27cd\u29f5\u29f8\u29f9")


def _is_selector(char: str) -> bool:
    code = ord(char)
    return 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF


def _plainly_forbidden(char: str) -> bool:
    return char in _INVISIBLE or unicodedata.category(char) in _FORBIDDEN_CATEGORIES


def _visible(char: str) -> bool:
    return not (char.isspace() or char == "/" or _is_selector(char) or _plainly_forbidden(char))


def _hidden_characters(text: str) -> list[str]:
    """Control, bidi and invisible characters of `text`; joiners and selectors count by context."""
    if text.isascii() and text.isprintable():  # printable ASCII holds none: skip the walk (most names)
        return []
    bad: set[str] = set()
    for index, char in enumerate(text):
        before = text[index - 1] if index else ""
        after = text[index + 1] if index + 1 < len(text) else ""
        if char in _JOINERS:
            allowed = bool(before) and (_visible(before) or _is_selector(before)) and bool(after) and _visible(after)
        elif _is_selector(char):
            allowed = bool(before) and _visible(before)
        else:
            allowed = not _plainly_forbidden(char)
        if not allowed:
            bad.add(char)
    return sorted(bad)


def _slash_lookalikes(text: str) -> list[str]:
    if text.isascii():  # every look-alike is beyond ASCII
        return []
    found = {char for char in text if not char.isascii() and char in _SLASH_LOOKALIKES}
    found |= {
        char
        for char in text
        if not char.isascii() and any(mark in unicodedata.normalize("NFKC", char) for mark in "/\\")
    }
    return sorted(found)


def _unicode_segment_problem(segment: str) -> str | None:
    if segment[:1].isspace() or segment[-1:].isspace():
        return "starts or ends with a space, which a person cannot see"
    if segment.isascii():
        return None
    if unicodedata.normalize("NFKC", segment) in (".", ".."):
        return "reads as '.' or '..' once normalised (look-alike dots)"
    return None


def safe_name(name: str, policy: KeyPolicy = "strict", *, fallback: str = "file") -> str:
    """One valid segment made from an outside file name (an attachment's): kept as close as the policy allows."""
    name = re.split(r"[/\\]", name)[-1]
    if policy == "strict":
        cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._")
        return cleaned[:120] or fallback
    hidden = set(_hidden_characters(name))
    kept = "".join("_" if char in _SLASH_LOOKALIKES else char for char in name if char not in hidden)
    kept = "".join("_" if any(mark in unicodedata.normalize("NFKC", c) for mark in "/\\") else c for c in kept)
    kept = kept.strip()
    if unicodedata.normalize("NFKC", kept).strip(".") == "" or _hidden_characters(kept):
        return fallback
    stem, dot, extension = kept.rpartition(".")
    if not dot or len(extension.encode()) > 16:
        stem, dot, extension = kept, "", ""
    while len((stem + dot + extension).encode()) > 200:
        stem = stem[:-1]
    return (stem.rstrip() + dot + extension) or fallback


def check_key(
    key: str, policy: KeyPolicy = "strict", *, field: str = "path", allow_empty: bool = False
) -> tuple[str, ...]:
    """Validate a relative key and return its segments (``()`` for the root when allowed)."""
    if not isinstance(key, str):
        raise _invalid(field, "must be a string")
    if key == "":
        if allow_empty:
            return ()
        raise _invalid(field, "must not be empty", "name a file relative to the root, e.g. notes/todo.md")
    if len(key) > MAX_KEY_CHARS:
        raise _invalid(field, f"is {len(key)} characters long; the limit is {MAX_KEY_CHARS}")
    if "\x00" in key:
        raise _invalid(field, "must not contain a NUL character")
    plain = _ESCAPE.sub("", key) if "\\" in key else key
    if "\\" in plain:
        raise _invalid(
            field,
            "must not contain a backslash; separate folders with '/'",
            "a backslash is allowed only in the escapes \\xHH and \\\\ of names that are not valid UTF-8",
        )
    if key.startswith("/"):
        raise _invalid(field, "must be relative to the root, without a leading '/'", f"try {key.lstrip('/')!r}")
    if policy == "strict":
        bad = sorted({char for char in plain if char not in _STRICT_CHARS})
        if bad:
            shown = ", ".join(repr(char) for char in bad[:5])
            raise _invalid(
                field,
                f"contains characters outside [A-Za-z0-9_-/.]: {shown}",
                "use only letters, digits, '_', '-', '.' and '/'",
            )
    elif policy == "unicode":
        bad = _hidden_characters(plain)
        if bad:
            shown = ", ".join(f"U+{ord(char):04X}" for char in bad[:5])
            raise _invalid(
                field,
                f"contains control, bidi or invisible characters: {shown}",
                "names may hold letters, digits, punctuation, symbols and spaces of any script",
            )
        lookalikes = _slash_lookalikes(plain)
        if lookalikes:
            shown = ", ".join(f"U+{ord(char):04X}" for char in lookalikes[:5])
            raise _invalid(field, f"contains look-alikes of '/' or '\\': {shown}", "separate folders with '/'")
    else:  # pragma: no cover - a programming error, not input
        raise ValueError(f"unknown key policy {policy!r}")
    segments = tuple(key.split("/"))
    for index, segment in enumerate(segments):
        if segment == "":
            raise _invalid(field, f"has an empty segment at position {index} ('//' or a trailing '/')")
        if segment in (".", ".."):
            raise _invalid(field, f"must not contain a {segment!r} segment; give the path from the root")
        if policy == "unicode":
            problem = _unicode_segment_problem(segment)
            if problem:
                raise _invalid(field, f"segment {index} {problem}")
        if len(os.fsencode(unescape_name(segment)) if "\\" in segment else segment.encode("utf-8")) > MAX_SEGMENT_BYTES:
            raise _invalid(field, f"segment {index} is longer than {MAX_SEGMENT_BYTES} bytes")
    return segments


def _inside(root: str, path: str) -> bool:
    """Whole-segment containment: '/data/files-evil' is not inside '/data/files'."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _open_regular(dir_fd: int, name: str, shown: str) -> int:
    """Open `name` for reading without following a symlink; only regular files pass."""
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK, dir_fd=dir_fd)
    except OSError as error:
        raise _os_failure(error, shown) from None
    try:
        info = os.fstat(fd)
        if stat_module.S_ISDIR(info.st_mode):
            raise ToolFailure("conflict", f"{shown} is a folder, not a file", "list it instead")
        if not stat_module.S_ISREG(info.st_mode):
            raise ToolFailure("invalid_arguments", f"{shown} is not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_nofollow(dir_fd: int, name: str, max_bytes: int | None = None, *, key: str | None = None) -> bytes:
    """Read the regular file `name` in `dir_fd` without following a symlink at it."""
    shown = key or name
    fd = _open_regular(dir_fd, name, shown)
    try:
        info = os.fstat(fd)
        if max_bytes is not None and info.st_size > max_bytes:
            raise ToolFailure("too_large", f"{shown} is {info.st_size} bytes; the read limit is {max_bytes} bytes")
        chunks: list[bytes] = []
        remaining = info.st_size if max_bytes is None else max_bytes + 1
        while True:
            chunk = os.read(fd, min(1 << 20, max(remaining, 1 << 16)))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
            if max_bytes is not None and sum(map(len, chunks)) > max_bytes:
                raise ToolFailure("too_large", f"{shown} grew beyond the read limit of {max_bytes} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def atomic_write(dir_fd: int, name: str, data: bytes, *, key: str | None = None) -> None:
    """Replace `name` in `dir_fd` with `data`: temp file, fsync, rename; a symlink there is replaced."""
    shown = key or name
    mode = 0o644
    with contextlib.suppress(FileNotFoundError):
        existing = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat_module.S_ISDIR(existing.st_mode):
            raise ToolFailure("conflict", f"{shown} is a folder; it cannot be replaced by a file")
        if stat_module.S_ISREG(existing.st_mode):
            mode = stat_module.S_IMODE(existing.st_mode)
    stem = name.encode("utf-8", "surrogatepass")[:100].decode("utf-8", "ignore")
    temp_name = f".{stem}.{secrets.token_hex(6)}{TEMP_SUFFIX}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    fd = os.open(temp_name, flags, 0o600, dir_fd=dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp_name, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temp_name, dir_fd=dir_fd)
        if isinstance(error, IsADirectoryError):
            raise ToolFailure("conflict", f"{shown} is a folder; it cannot be replaced by a file") from None
        if isinstance(error, OSError):
            raise _os_failure(error, shown) from None
        raise
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)


STALE_TEMP_SECONDS = 600


def sweep_temp_files(root: str | os.PathLike[str], older_than: float = STALE_TEMP_SECONDS) -> int:
    """Remove the temp files of writes that never finished (a crash, a kill) below `root`.

    Only names `atomic_write` makes (`.NAME.HEX.mcp-tmp`) that are regular files untouched for
    `older_than` seconds go; a write in progress is younger. Symlinks are never followed.
    Returns how many were removed.
    """
    removed = 0
    cutoff = time.time() - older_than
    try:
        walker = os.fwalk(root, follow_symlinks=False)
        for _, _, files, dir_fd in walker:
            for name in files:
                if not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
                    continue
                with contextlib.suppress(OSError):
                    info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                    if stat_module.S_ISREG(info.st_mode) and info.st_mtime < cutoff:
                        os.unlink(name, dir_fd=dir_fd)
                        removed += 1
    except OSError:
        pass
    return removed


def _os_failure(error: OSError, shown: str) -> ToolFailure:
    """Map an OS error to a failure the model can act on, without leaking host paths."""
    if error.errno == errno.ENOENT:
        return ToolFailure("not_found", f"{shown} does not exist")
    if error.errno in (errno.ELOOP, errno.EMLINK):
        return ToolFailure("invalid_arguments", f"{shown} is a symbolic link, which is not followed here")
    if error.errno == errno.ENOTDIR:
        return ToolFailure("conflict", f"a part of {shown} is a file, not a folder")
    if error.errno == errno.EISDIR:
        return ToolFailure("conflict", f"{shown} is a folder")
    if error.errno == errno.EEXIST:
        return ToolFailure("conflict", f"{shown} already exists")
    if error.errno == errno.ENOTEMPTY:
        return ToolFailure("conflict", f"{shown} is a folder that is not empty")
    if error.errno in (errno.EACCES, errno.EPERM):
        return ToolFailure("denied_by_policy", f"the operating system refused access to {shown}")
    if error.errno == errno.EINVAL:
        return ToolFailure("invalid_arguments", f"{shown}: the operation is not possible (a folder into itself?)")
    if error.errno == errno.ENOSPC:
        return ToolFailure("internal_error", "the disk is full")
    return ToolFailure("internal_error", f"{shown}: {error.strerror or 'operating system error'}")


class Sandbox:
    """A root folder that keys cannot leave; see the module docstring for the API."""

    def __init__(self, root: str | os.PathLike[str], *, policy: KeyPolicy = "strict", create: bool = True) -> None:
        if not _NOFOLLOW or not _DIRECTORY or os.open not in os.supports_dir_fd:
            raise RuntimeError("this platform lacks O_NOFOLLOW or dir_fd support; containment cannot be guaranteed")
        root_path = Path(root).expanduser()
        if create:
            root_path.mkdir(parents=True, exist_ok=True)
        self.root = Path(os.path.realpath(root_path))
        self.policy: KeyPolicy = policy

    # -- checking ---------------------------------------------------------------------------

    def check(self, key: str, *, field: str = "path", allow_empty: bool = False) -> tuple[str, ...]:
        """The key's segments as names on disk (escapes of undecodable bytes turned back)."""
        segments = check_key(key, self.policy, field=field, allow_empty=allow_empty)
        return tuple(unescape_name(segment) for segment in segments) if "\\" in key else segments

    def resolve(self, key: str, *, field: str = "path", allow_empty: bool = False) -> Path:
        segments = self.check(key, field=field, allow_empty=allow_empty)
        return self._resolve_segments(segments, key, field)

    def _resolve_segments(self, segments: tuple[str, ...], key: str, field: str) -> Path:
        root = str(self.root)
        real = os.path.realpath(os.path.join(root, *segments)) if segments else root
        if not _inside(root, real):
            raise _invalid(
                field,
                f"{key!r} leads outside the root through a symbolic link",
                "symbolic links out are refused",
            )
        return Path(real)

    def _real_segments(self, key: str, field: str, allow_empty: bool = False) -> tuple[str, ...]:
        """Segments of the key's real path relative to the root (in-root symlinks resolved)."""
        segments = self.check(key, field=field, allow_empty=allow_empty)
        real = self._resolve_segments(segments, key, field)
        relative = os.path.relpath(real, self.root)
        return () if relative == "." else tuple(relative.split(os.sep))

    def key_of(self, path: str | os.PathLike[str]) -> str:
        relative = os.path.relpath(os.fspath(path), self.root)
        if relative == ".":
            return ""
        if relative.startswith(".."):
            raise ValueError("path is outside the sandbox root")
        return escape_name(relative.replace(os.sep, "/"))

    # -- descriptor walking -----------------------------------------------------------------

    def _open_walk(self, segments: tuple[str, ...], shown: str, create: bool) -> int:
        fd = os.open(self.root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            for segment in segments:
                try:
                    next_fd = os.open(segment, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise ToolFailure("not_found", f"folder {shown} does not exist") from None
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(segment, 0o755, dir_fd=fd)
                    next_fd = os.open(segment, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = next_fd
        except OSError as error:
            os.close(fd)
            raise _os_failure(error, shown) from None
        except BaseException:
            os.close(fd)
            raise
        return fd

    @contextlib.contextmanager
    def _walk(self, segments: tuple[str, ...], shown: str, *, create: bool = False) -> Iterator[int]:
        """A descriptor of the folder `segments`, each step opened with O_NOFOLLOW."""
        fd = self._open_walk(segments, shown, create)
        try:
            yield fd
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def open_dir(self, key: str, *, create: bool = False, field: str = "path") -> Iterator[int]:
        segments = self._real_segments(key, field, allow_empty=True)
        with self._walk(segments, key or "the root", create=create) as fd:
            yield fd

    @contextlib.contextmanager
    def _parent(
        self, key: str, field: str, *, create: bool = False, follow_last: bool = True
    ) -> Iterator[tuple[int, str]]:
        """The containing folder's descriptor and the final name.

        With ``follow_last`` an in-root symlink at the key is resolved (reads and writes reach
        its target); without it the final name is taken as is (stat, delete and move act on the
        link itself).
        """
        if follow_last:
            segments = self._real_segments(key, field)
            if not segments:
                raise _invalid(field, "names the root itself, which is a folder")
            *parents, name = segments
        else:
            *given_parents, name = self.check(key, field=field)
            parents = list(self._real_segments("/".join(given_parents), field, allow_empty=True))
        with self._walk(tuple(parents), "/".join(parents) or "the root", create=create) as fd:
            yield fd, name

    # -- operations -------------------------------------------------------------------------

    def read_bytes(self, key: str, *, max_bytes: int | None = None, field: str = "path") -> bytes:
        with self._parent(key, field) as (fd, name):
            return read_nofollow(fd, name, max_bytes, key=key)

    def write_bytes(self, key: str, data: bytes, *, create_parents: bool = False, field: str = "path") -> None:
        try:
            with self._parent(key, field, create=create_parents) as (fd, name):
                atomic_write(fd, name, data, key=key)
        except ToolFailure as failure:
            if failure.kind == "not_found" and not create_parents:
                raise ToolFailure(
                    "not_found", f"the folder for {key} does not exist", "pass create_parents: true"
                ) from None
            raise

    def stat(self, key: str, *, field: str = "path") -> os.stat_result | None:
        """``lstat`` of the key, or None when it does not exist (the root for '')."""
        if key == "":
            return os.stat(self.root)
        try:
            with self._parent(key, field, follow_last=False) as (fd, name):
                return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except ToolFailure as failure:
            if failure.kind in ("not_found", "conflict"):
                return None
            raise
        except (FileNotFoundError, NotADirectoryError):
            return None

    @contextlib.contextmanager
    def open_file(self, key: str, *, field: str = "path") -> Iterator[BinaryIO]:
        """A regular file opened for reading with O_NOFOLLOW (FIFOs and devices refused)."""
        with self._parent(key, field) as (fd, name):
            file_fd = _open_regular(fd, name, key)
        with os.fdopen(file_fd, "rb") as file:
            yield file

    def exists(self, key: str, *, field: str = "path") -> bool:
        return self.stat(key, field=field) is not None

    def mkdir(self, key: str, *, parents: bool = False, field: str = "path") -> bool:
        """Make a folder; returns False when it already existed."""
        with self._parent(key, field, create=parents, follow_last=False) as (fd, name):
            try:
                os.mkdir(name, 0o755, dir_fd=fd)
                return True
            except FileExistsError:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if stat_module.S_ISDIR(info.st_mode):
                    return False
                raise ToolFailure("conflict", f"{key} exists and is not a folder") from None
            except OSError as error:
                raise _os_failure(error, key) from None

    def unlink(self, key: str, *, field: str = "path") -> None:
        with self._parent(key, field, follow_last=False) as (fd, name):
            try:
                os.unlink(name, dir_fd=fd)
            except OSError as error:
                raise _os_failure(error, key) from None

    def rmdir(self, key: str, *, field: str = "path") -> None:
        with self._parent(key, field, follow_last=False) as (fd, name):
            try:
                os.rmdir(name, dir_fd=fd)
            except OSError as error:
                raise _os_failure(error, key) from None

    def rmtree(self, key: str, *, field: str = "path") -> None:
        """Remove a folder and everything in it; symlinks inside are removed, never followed."""
        with self._parent(key, field, follow_last=False) as (fd, name):
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if not stat_module.S_ISDIR(info.st_mode):
                    raise ToolFailure("conflict", f"{key} is not a folder")
                shutil.rmtree(name, dir_fd=fd)
            except OSError as error:
                raise _os_failure(error, key) from None

    def rename(self, source: str, destination: str, *, overwrite: bool = False) -> None:
        """Move `source` to `destination` (whose folder must exist); no symlink is followed."""
        with (
            self._parent(source, "source", follow_last=False) as (source_fd, source_name),
            self._parent(destination, "destination", follow_last=False) as (destination_fd, destination_name),
        ):
            try:
                os.stat(source_name, dir_fd=source_fd, follow_symlinks=False)
            except OSError as error:
                raise _os_failure(error, source) from None
            if not overwrite:
                try:
                    os.stat(destination_name, dir_fd=destination_fd, follow_symlinks=False)
                except FileNotFoundError:
                    pass
                else:
                    raise ToolFailure("conflict", f"{destination} already exists", "pass overwrite: true to replace it")
            try:
                os.rename(source_name, destination_name, src_dir_fd=source_fd, dst_dir_fd=destination_fd)
            except OSError as error:
                raise _os_failure(error, destination) from None
