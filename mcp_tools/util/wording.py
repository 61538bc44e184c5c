"""Counts and sizes in the words a person reads in a confirmation or a result, one way everywhere."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """`word` for one, else `many` (default: `word` + "s"): "1 entry", "3 entries"."""
    return word if count == 1 else many or word + "s"


def human_size(size: int | None) -> str:
    """Bytes as "512 B", "1.3 KB", "4.0 MB"; "unknown size" when nobody could tell."""
    if size is None:
        return "unknown size"
    value = float(size)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"
