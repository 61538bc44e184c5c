"""Charset labels as browsers read them (the WHATWG Encoding Standard), and decoding that never raises."""

from __future__ import annotations

import codecs

import pytest

from mcp_tools.util.charsets import ENCODINGS, LABELS, decode, encoding_for
from mcp_tools.util.text import decode_bytes, utf8_encoded_words, utf8_parameters

OUTLOOK_BYTES = b"\x93Quoted\x94 \x96 \x80 5 \x85"
OUTLOOK_TEXT = "\u201cQuoted\u201d \u2013 \u20ac 5 \u2026"


@pytest.mark.parametrize("label", ["iso-8859-1", "ISO-8859-1", " latin1 ", "us-ascii", "ascii", "l1", "cp819"])
def test_latin1_and_ascii_labels_mean_windows_1252(label: str) -> None:
    assert encoding_for(label) == "windows-1252"
    warnings: list[str] = []
    assert decode_bytes(OUTLOOK_BYTES, label, warnings, "body") == OUTLOOK_TEXT
    assert warnings == []


@pytest.mark.parametrize(
    ("label", "encoding", "text", "codec"),
    [
        ("x-sjis", "Shift_JIS", "会議は①時から～", "cp932"),
        ("ks_c_5601-1987", "EUC-KR", "똠양꿍 안녕하세요", "cp949"),
        ("gb2312", "GBK", "朱镕基 会议纪要", "gbk"),
        ("big5-hkscs", "Big5", "香港", "big5hkscs"),
        ("iso-8859-9", "windows-1254", "İstanbul ğ ş \u201c", "cp1254"),
        ("tis-620", "windows-874", "สวัสดี", "cp874"),
        ("koi8", "KOI8-R", "Привет", "koi8_r"),
    ],
)
def test_browser_aliases_name_the_wider_encoding(label: str, encoding: str, text: str, codec: str) -> None:
    assert encoding_for(label) == encoding
    assert decode_bytes(text.encode(codec), label, [], "body") == text


def test_the_table_is_the_standards_whole_table() -> None:
    assert len(ENCODINGS) == 40 and len(LABELS) == 228
    for name in ENCODINGS:
        assert encoding_for(name) == name or name in ("replacement",)  # every name is also a label of itself
    for label, name in LABELS.items():
        assert label == label.lower().strip() and name in ENCODINGS
        decode(bytes(range(256)), name)  # every encoding decodes every byte without raising


def test_differences_from_pythons_codecs_follow_the_standard() -> None:
    assert decode(b"\x81\x8d\x8f\x90\x9d", "windows-1252") == "\x81\x8d\x8f\x90\x9d"  # holes are C1 controls
    assert decode(b"\xaa", "windows-1253") == "\ufffd"  # a byte with no character
    assert decode(b"\xae\xbe", "KOI8-U") == "\u045e\u040e"
    assert decode(b"\xca", "windows-1255") == "\u05ba"
    assert decode(b"\x80", "GBK") == "\u20ac" and decode(b"a\xff", "gb18030") == "a\ufffd"
    assert decode(b"a\x80\xff", "x-user-defined") == "a\uf780\uf7ff"


def test_a_byte_order_mark_wins_over_the_label() -> None:
    utf16 = codecs.BOM_UTF16_LE + "“hi”".encode("utf-16-le")
    assert decode_bytes(utf16, "iso-8859-1", [], "body") == "“hi”"
    assert decode_bytes(codecs.BOM_UTF8 + "é".encode(), "windows-1252", [], "body") == "é"
    assert decode_bytes(codecs.BOM_UTF16_BE + "x".encode("utf-16-be"), None, [], "body") == "x"


@pytest.mark.parametrize("label", ["iso-2022-kr", "hz-gb-2312", "iso-2022-cn", "csiso2022kr"])
def test_labels_that_smuggle_markup_decode_to_one_replacement(label: str) -> None:
    assert decode_bytes(b"~{<script>~}", label, [], "body") == "\ufffd"
    assert decode_bytes(b"", label, [], "body") == ""


@pytest.mark.parametrize("label", ["base64", "rot13", "zlib", "hex", "utf-7", "x-made-up", "unicode-escape", "idna"])
def test_python_only_codec_names_are_not_charsets(label: str) -> None:
    """Python's registry would decode these (or raise on them); to mail they are unknown labels."""
    warnings: list[str] = []
    assert decode_bytes(b"+ZeVnLIqe- aGVsbG8= caf\xc3\xa9", label, warnings, "body") == "+ZeVnLIqe- aGVsbG8= café"
    assert warnings and label in warnings[0]


def test_unlabelled_text_is_utf8_else_windows_1252() -> None:
    assert decode_bytes("café".encode(), None, [], "body") == "café"
    assert decode_bytes(OUTLOOK_BYTES, None, [], "body") == OUTLOOK_TEXT


def test_encoded_words_are_relabelled_utf8_with_the_text_decoded_as_browsers_do() -> None:
    import base64

    word = utf8_encoded_words("Re: =?iso-8859-1?Q?=93Hi=94_=96_=80?= and =?x-sjis?B?gqCCog==?=")
    decoded = [base64.b64decode(part.split("?")[3]).decode() for part in word.split() if part.startswith("=?")]
    assert decoded == ["\u201cHi\u201d \u2013 \u20ac", "あい"]
    kept = "=?utf-8?q?caf=C3=A9?= =?x-unknown?q?a?= =?iso-8859-1?B?***?="
    assert utf8_encoded_words(kept) == kept


def test_rfc2231_parameters_are_relabelled_utf8() -> None:
    single = utf8_parameters("attachment; filename*=iso-8859-1'en'%93R%E9sum%E9%94.pdf; size=3")
    assert single == "attachment; filename*=utf-8'en'%E2%80%9CR%C3%A9sum%C3%A9%E2%80%9D.pdf; size=3"
    pieces = utf8_parameters("attachment; filename*0*=windows-1252''%80; filename*1*=%85.txt")
    assert pieces == "attachment; filename*0*=utf-8''%E2%82%AC; filename*1*=%E2%80%A6.txt"
    kept = "attachment; filename*0*=x-sjis''%82; filename*1*=%A0.md; name*=utf-8''%C3%A9"
    assert utf8_parameters(kept) == kept  # a multi-byte character may straddle pieces: left as sent
