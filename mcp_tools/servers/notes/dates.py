"""Daily-note names and templates: Moment.js date formats (as Obsidian uses) mapped to strftime."""

from __future__ import annotations

import datetime as dt
import re

MOMENT_TOKENS = {
    "YYYY": "%Y",
    "YY": "%y",
    "MMMM": "%B",
    "MMM": "%b",
    "MM": "%m",
    "M": "{month}",
    "DDDD": "%j",
    "DD": "%d",
    "Do": "{ordinal}",
    "D": "{day}",
    "dddd": "%A",
    "ddd": "%a",
    "ww": "%V",
    "HH": "%H",
    "mm": "%M",
    "ss": "%S",
}
TOKEN_RE = re.compile(r"\[[^\]]*\]|" + "|".join(sorted(MOMENT_TOKENS, key=len, reverse=True)))


def moment_to_strftime(fmt: str) -> str:
    """Translate a Moment.js format; `[literal]` text is kept, unknown letters pass through."""

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.startswith("["):
            return token[1:-1].replace("%", "%%")
        return MOMENT_TOKENS[token]

    out = []
    position = 0
    for match in TOKEN_RE.finditer(fmt):
        out.append(fmt[position : match.start()].replace("%", "%%"))
        out.append(replace(match))
        position = match.end()
    out.append(fmt[position:].replace("%", "%%"))
    return "".join(out)


def format_day(day: dt.date | dt.datetime, fmt: str) -> str:
    text = day.strftime(moment_to_strftime(fmt))
    suffix = "th" if 11 <= day.day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day.day % 10, "th")
    return (
        text.replace("{month}", str(day.month))
        .replace("{day}", str(day.day))
        .replace("{ordinal}", f"{day.day}{suffix}")
    )


TEMPLATE_RE = re.compile(r"\{\{\s*(date|time|title)(?::([^}]*))?\s*\}\}")


def render_template(template: str, day: dt.date, title: str, default_format: str) -> str:
    """Obsidian's core template variables: {{date}}, {{date:FORMAT}}, {{time}}, {{title}}."""
    now = dt.datetime.now()
    moment = dt.datetime.combine(day, now.time())

    def replace(match: re.Match[str]) -> str:
        name, fmt = match.group(1), match.group(2)
        if name == "title":
            return title
        if name == "time":
            return format_day(moment, fmt.strip() if fmt else "HH:mm")
        return format_day(moment, fmt.strip() if fmt else default_format)

    return TEMPLATE_RE.sub(replace, template)
