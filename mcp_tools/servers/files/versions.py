"""What a local file's version is, at a cost that does not grow with the file.

A read reports a version and a write given `expected_sha256` checks it. Hashing the whole file
for that made a window of a large file cost the whole file. The version is the file's identity
instead: device, inode, size, mtime_ns and ctime_ns, hashed to 64 hex characters so it passes
wherever a sha256 does. Any write changes the change time, which nobody can set back; an atomic
replace makes a new inode, whose change time is its creation's.

Timestamps have ticks (a few milliseconds on Linux, up to 2 s on FAT, HFS+ or network shares): a
second same-size write in the tick of the first could keep every field. So the identity stands
for a version only once its times are `RACY_MARGIN_NS` older than the moment it is taken: a later
change then gets a later change time, also on a reused inode. A file changed more recently than
that is versioned by its content's sha256, one pass over it, as every read did before.

A whole file's sha256 is still given where it costs nothing that grows with the file: the read
covers the whole file, the file is at most `HASHED_FREELY` bytes, or a digest of this version
was kept (`FileDigests`). Otherwise only when asked for.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import OrderedDict

RACY_MARGIN_NS = 2_000_000_000
HASHED_FREELY = 1 << 20  # a file this small is hashed with any read of it: at most a millisecond
MAX_DIGESTS = 1024
now_ns = time.time_ns

State = tuple[int, int, int]


def state(info: os.stat_result) -> State:
    """What changes with any write to the same inode: size, mtime_ns and ctime_ns."""
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns


def settled(info: os.stat_result, at_ns: int) -> bool:
    """Whether the file's times are safely older than `at_ns`: its identity is then its version."""
    return max(info.st_mtime_ns, info.st_ctime_ns) <= at_ns - RACY_MARGIN_NS


def identity(info: os.stat_result) -> str:
    """The version of a settled file: its device, inode, size and times, as 64 hex characters."""
    fields = (
        f"mcp-tools file identity\0{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"
    )
    return hashlib.sha256(fields.encode()).hexdigest()


class FileDigests:
    """sha256 of whole files, kept per (device, inode) while size, mtime_ns and ctime_ns stay the same.

    Only for settled files (above), so a kept digest is the file's current one.
    """

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[int, int], tuple[State, str]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, info: os.stat_result) -> str | None:
        with self._lock:
            kept = self._kept.get((info.st_dev, info.st_ino))
            if kept is None or kept[0] != state(info):
                return None
            self._kept.move_to_end((info.st_dev, info.st_ino))
            return kept[1]

    def keep(self, info: os.stat_result, digest: str, hashed_at_ns: int) -> None:
        """Remember `digest` of the file as `info` describes it, if its times are safely in the past."""
        if not settled(info, hashed_at_ns):
            return
        with self._lock:
            self._kept[(info.st_dev, info.st_ino)] = (state(info), digest)
            self._kept.move_to_end((info.st_dev, info.st_ino))
            while len(self._kept) > MAX_DIGESTS:
                self._kept.popitem(last=False)
