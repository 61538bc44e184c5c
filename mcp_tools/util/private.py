"""The server's own files are readable by its user alone.

The state dir holds approvals and the audit log with call arguments (in the SQLite file and its
`-wal`), whole mail bodies (the inbox), the text of notes (their index), tokens and keys. Every
folder the process makes is 0700 and every file 0600 from the moment it is created: the process
runs under umask 077 (`keep_private`), which covers what libraries create on their own, such as
SQLite's `-wal` and `-shm`. State left by an older version with wider modes is narrowed at start
(`repair_modes`), with a log line.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

PRIVATE_UMASK = 0o077
logger = logging.getLogger("mcp_tools.state")


def keep_private() -> None:
    """From now on this process creates nothing another user can read (bits the umask already
    took away stay away)."""
    os.umask(os.umask(PRIVATE_UMASK) | PRIVATE_UMASK)


def private_folder(path: Path) -> None:
    """Make `path` (and its missing parents) as a folder of this user alone."""
    keep_private()
    path.mkdir(mode=0o700, parents=True, exist_ok=True)


def repair_modes(folder: Path, *, deep: bool = True) -> int:
    """Take group and other bits off `folder` and (with `deep`) everything in it; symbolic links
    are not followed. How many were narrowed (each logged once, as a count)."""
    narrowed = 0
    try:
        narrowed += _narrow(folder)
    except OSError:
        return 0
    if deep:
        for parent, folders, files in os.walk(folder, followlinks=False):
            for name in (*folders, *files):
                try:
                    narrowed += _narrow(Path(parent, name))
                except OSError:  # gone meanwhile, or not ours: left as it is
                    continue
    if narrowed:
        logger.warning("made %d files and folders in %s readable by their owner only (they were not)", narrowed, folder)
    return narrowed


def _narrow(path: Path) -> int:
    found = os.lstat(path)
    if stat.S_ISLNK(found.st_mode) or not (found.st_mode & PRIVATE_UMASK):
        return 0
    if found.st_uid != os.geteuid():
        return 0
    os.chmod(path, stat.S_IMODE(found.st_mode) & ~PRIVATE_UMASK, follow_symlinks=False)
    return 1
