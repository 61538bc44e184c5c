"""Charset labels read as browsers read them: the WHATWG Encoding Standard's label table, as data.

Mail and documents name their charset with labels that mean something else in practice:
Outlook labels Windows-1252 text ``iso-8859-1`` every day, and ``us-ascii``, ``latin1``,
``x-sjis``, ``ks_c_5601-1987`` or ``gb2312`` each name a wider encoding in every browser.
Python's codec registry takes these labels literally (``iso-8859-1`` is Latin-1, so curly
quotes become ``\\x93``), and also knows names no mail should pick (``base64``, ``rot13``,
``utf-7``). So labels are looked up here, in the Standard's table, and nowhere else.

- `encoding_for(label)`: the Standard's name of the encoding a label means, or None
  (ASCII whitespace around the label is ignored, case is not significant).
- `decode(data, encoding)`: the Standard's *decode*: a byte order mark overrides the
  label, invalid bytes become U+FFFD, never raises.

Single-byte encodings decode through a 256-entry table built from Python's codec plus the
few bytes where the Standard differs (the Windows code pages' unassigned bytes in 0x80-0x9F
are the C1 controls of the same value; two KOI8-U letters; one Windows-1255 point).
Multi-byte encodings use Python's codec for the same repertoire: Shift_JIS is Windows-31J
(cp932), EUC-KR is the Unified Hangul Code (cp949), GBK is decoded as gb18030 (whose lone
0x80 is the euro sign), Big5 is Big5-HKSCS. The ``replacement`` encoding (labels of
ISO-2022-KR, ISO-2022-CN and HZ, which can smuggle markup past filters) decodes any input to
one U+FFFD.
"""

from __future__ import annotations

import codecs
import functools

# The Standard's encodings: name -> (Python codec, its labels). "" marks a decoder written here.
ENCODINGS: dict[str, tuple[str, str]] = {
    "UTF-8": ("utf-8", "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8"),
    "IBM866": ("cp866", "866 cp866 csibm866 ibm866"),
    "ISO-8859-2": (
        "iso8859_2",
        "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2",
    ),
    "ISO-8859-3": (
        "iso8859_3",
        "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 latin3",
    ),
    "ISO-8859-4": (
        "iso8859_4",
        "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 latin4",
    ),
    "ISO-8859-5": (
        "iso8859_5",
        "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 iso_8859-5:1988",
    ),
    "ISO-8859-6": (
        "iso8859_6",
        (
            "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 iso-8859-6-e "
            "iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987"
        ),
    ),
    "ISO-8859-7": (
        "iso8859_7",
        (
            "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 iso88597 iso_8859-7 "
            "iso_8859-7:1987 sun_eu_greek"
        ),
    ),
    "ISO-8859-8": (
        "iso8859_8",
        (
            "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 iso88598 "
            "iso_8859-8 iso_8859-8:1988 visual"
        ),
    ),
    "ISO-8859-8-I": ("iso8859_8", "csiso88598i iso-8859-8-i logical"),
    "ISO-8859-10": ("iso8859_10", "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6"),
    "ISO-8859-13": ("iso8859_13", "iso-8859-13 iso8859-13 iso885913"),
    "ISO-8859-14": ("iso8859_14", "iso-8859-14 iso8859-14 iso885914"),
    "ISO-8859-15": ("iso8859_15", "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9"),
    "ISO-8859-16": ("iso8859_16", "iso-8859-16"),
    "KOI8-R": ("koi8_r", "cskoi8r koi koi8 koi8-r koi8_r"),
    "KOI8-U": ("koi8_u", "koi8-ru koi8-u"),
    "macintosh": ("mac_roman", "csmacintosh mac macintosh x-mac-roman"),
    "windows-874": ("cp874", "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874"),
    "windows-1250": ("cp1250", "cp1250 windows-1250 x-cp1250"),
    "windows-1251": ("cp1251", "cp1251 windows-1251 x-cp1251"),
    "windows-1252": (
        "cp1252",
        (
            "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 iso88591 "
            "iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252"
        ),
    ),
    "windows-1253": ("cp1253", "cp1253 windows-1253 x-cp1253"),
    "windows-1254": (
        "cp1254",
        (
            "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 iso_8859-9:1989 l5 latin5 "
            "windows-1254 x-cp1254"
        ),
    ),
    "windows-1255": ("cp1255", "cp1255 windows-1255 x-cp1255"),
    "windows-1256": ("cp1256", "cp1256 windows-1256 x-cp1256"),
    "windows-1257": ("cp1257", "cp1257 windows-1257 x-cp1257"),
    "windows-1258": ("cp1258", "cp1258 windows-1258 x-cp1258"),
    "x-mac-cyrillic": ("mac_cyrillic", "x-mac-cyrillic x-mac-ukrainian"),
    "GBK": ("gb18030", "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk"),
    "gb18030": ("gb18030", "gb18030"),
    "Big5": ("big5hkscs", "big5 big5-hkscs cn-big5 csbig5 x-x-big5"),
    "EUC-JP": ("euc_jp", "cseucpkdfmtjapanese euc-jp x-euc-jp"),
    "ISO-2022-JP": ("iso2022_jp_ext", "csiso2022jp iso-2022-jp"),
    "Shift_JIS": ("cp932", "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis"),
    "EUC-KR": (
        "cp949",
        "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601 ksc_5601 windows-949",
    ),
    "replacement": ("", "csiso2022kr hz-gb-2312 iso-2022-cn iso-2022-cn-ext iso-2022-kr replacement"),
    "UTF-16BE": ("utf-16-be", "unicodefffe utf-16be"),
    "UTF-16LE": ("utf-16-le", "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le"),
    "x-user-defined": ("", "x-user-defined"),
}

LABELS: dict[str, str] = {label: name for name, (_, labels) in ENCODINGS.items() for label in labels.split()}

# Bytes 0x80-0xFF where the Standard's index differs from Python's codec, beyond the C1 rule.
_SINGLE_BYTE_CHANGES: dict[str, dict[int, str]] = {
    "KOI8-U": {0xAE: "\u045e", 0xBE: "\u040e"},
    "windows-1255": {0xCA: "\u05ba"},
}
_UNASSIGNED = "\ufffe"  # charmap_decode's mark for a byte that has no character
_ASCII_WHITESPACE = "\t\n\f\r "
_BOMS = ((codecs.BOM_UTF8, "UTF-8"), (codecs.BOM_UTF16_BE, "UTF-16BE"), (codecs.BOM_UTF16_LE, "UTF-16LE"))


def encoding_for(label: str | None) -> str | None:
    """The encoding a charset label names in the Standard, e.g. 'iso-8859-1' -> 'windows-1252'."""
    if not label:
        return None
    return LABELS.get(label.strip(_ASCII_WHITESPACE).lower())


def sniff_bom(data: bytes) -> tuple[str | None, int]:
    """The encoding a byte order mark at the start names, and the mark's length."""
    for mark, name in _BOMS:
        if data.startswith(mark):
            return name, len(mark)
    return None, 0


@functools.cache
def _single_byte_table(name: str) -> str:
    """256 characters, one a byte; unassigned bytes hold charmap_decode's U+FFFE."""
    codec = ENCODINGS[name][0]
    table = [chr(byte) for byte in range(128)]
    for byte in range(128, 256):
        try:
            table.append(bytes([byte]).decode(codec))
        except UnicodeDecodeError:
            windows_c1 = name.startswith("windows-") and byte < 0xA0
            table.append(chr(byte) if windows_c1 else _UNASSIGNED)
    for byte, char in _SINGLE_BYTE_CHANGES.get(name, {}).items():
        table[byte] = char
    return "".join(table)


def _gb18030_euro(error: UnicodeError) -> tuple[str, int]:
    """The Standard's gb18030 decoder reads a lone 0x80 as U+20AC; anything else invalid is U+FFFD."""
    if not isinstance(error, UnicodeDecodeError):
        raise error
    if error.object[error.start : error.start + 1] == b"\x80":
        return "\u20ac", error.start + 1
    return "\ufffd", error.end


codecs.register_error("mcp-tools-gb18030", _gb18030_euro)

MULTI_BYTE = frozenset(
    {"UTF-8", "UTF-16BE", "UTF-16LE", "GBK", "gb18030", "Big5", "EUC-JP", "ISO-2022-JP", "Shift_JIS", "EUC-KR"}
)


def decode(data: bytes, encoding: str) -> str:
    """Bytes to text in `encoding` (a name from ENCODINGS), after a byte order mark's say."""
    sniffed, skip = sniff_bom(data)
    if sniffed is not None:
        encoding, data = sniffed, data[skip:]
    if encoding == "replacement":
        return "\ufffd" if data else ""
    if encoding == "x-user-defined":
        return "".join(chr(byte) if byte < 0x80 else chr(0xF700 + byte) for byte in data)
    codec = ENCODINGS[encoding][0]
    if encoding in ("GBK", "gb18030"):
        return data.decode(codec, "mcp-tools-gb18030")
    if encoding in MULTI_BYTE:
        return data.decode(codec, "replace")
    return codecs.charmap_decode(data, "replace", _single_byte_table(encoding))[0]
