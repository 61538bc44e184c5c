"""Real MIME messages whose labels mean what browsers take them to mean, not what Python's codecs say.

Each sample is (raw bytes, the subject and body text a reader must see). The bytes are written
the way the sending clients write them: Outlook labels Windows-1252 text `iso-8859-1`, Japanese
clients label Windows-31J `x-sjis`, Korean ones label the Unified Hangul Code `ks_c_5601-1987`,
Chinese ones label GBK `gb2312`.
"""

from __future__ import annotations

import base64
import quopri
from dataclasses import dataclass


@dataclass(frozen=True)
class Sample:
    raw: bytes
    subject: str
    body: str
    attachment: str | None = None


def _crlf(text: bytes) -> bytes:
    return text.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def outlook() -> Sample:
    """Outlook: curly quotes, en dash and euro in Windows-1252, labelled iso-8859-1, quoted-printable."""
    body = "\u201cQuarterly\u201d numbers \u2013 revenue \u20ac1,250 (na\u00efve estimate)."
    subject = "\u201cQ3\u201d report \u2013 \u20ac"
    filename = "R\u00e9sum\u00e9 \u201cfinal\u201d.txt"
    encoded_subject = quopri.encodestring(subject.encode("cp1252"), header=True).decode("ascii")
    encoded_name = quopri.encodestring(filename.encode("cp1252"), header=True).decode("ascii")
    head = (
        "From: =?iso-8859-1?Q?Ren=E9_M=FCller?= <rene@example.org>\n"
        "To: inbox@assistant.example\n"
        f"Subject: =?iso-8859-1?Q?{encoded_subject}?=\n"
        "Message-ID: <outlook-1252@example.org>\n"
        "Date: Tue, 24 Nov 2026 08:00:00 +0000\n"
        "MIME-Version: 1.0\n"
        'Content-Type: multipart/mixed; boundary="b1"\n'
        "\n"
        "--b1\n"
        'Content-Type: text/plain; charset="iso-8859-1"\n'
        "Content-Transfer-Encoding: quoted-printable\n"
        "\n"
    ).encode("ascii")
    attachment = (
        "\n--b1\n"
        'Content-Type: text/plain; charset="us-ascii"\n'
        f'Content-Disposition: attachment; filename="=?iso-8859-1?Q?{encoded_name}?="\n'
        "Content-Transfer-Encoding: base64\n"
        "\n" + base64.b64encode("\u2018notes\u2019 \u2014 \u20ac5".encode("cp1252")).decode("ascii") + "\n--b1--\n"
    ).encode("ascii")
    return Sample(_crlf(head + quopri.encodestring(body.encode("cp1252")) + attachment), subject, body, filename)


def _single(charset: str, codec: str, subject_ascii: str, body: str, transfer: str = "base64") -> Sample:
    encoded = base64.b64encode(body.encode(codec)).decode("ascii") if transfer == "base64" else None
    head = (
        f"From: sender@example.org\nTo: inbox@assistant.example\nSubject: {subject_ascii}\n"
        f"Message-ID: <{charset}@example.org>\nMIME-Version: 1.0\n"
        f"Content-Type: text/plain; charset={charset}\nContent-Transfer-Encoding: {transfer}\n\n"
    ).encode("ascii")
    payload = encoded.encode("ascii") + b"\n" if encoded is not None else body.encode(codec) + b"\n"
    return Sample(_crlf(head + payload), subject_ascii, body)


def x_sjis() -> Sample:
    """Windows-31J: the NEC circled digit and the wave dash are not in plain Shift_JIS."""
    return _single("x-sjis", "cp932", "Meeting", "\u4f1a\u8b70\u306f\u2460\u6642\u304b\u3089\uff5e", "8bit")


def ks_c_5601() -> Sample:
    """The Unified Hangul Code: '똠' is outside EUC-KR proper."""
    body = "\uc548\ub155\ud558\uc138\uc694, \ub620\uc591\uafb8 \ub0a0\uc528"
    return _single("ks_c_5601-1987", "cp949", "Hello", body)


def gb2312() -> Sample:
    """GBK characters beyond GB 2312 ('镕') under a gb2312 label."""
    return _single("gb2312", "gbk", "Notice", "\u4f1a\u8bae\u7eaa\u8981\uff1a\u6731\u9555\u57fa")


def rfc2231_name() -> Sample:
    """A file name as an RFC 2231 parameter in Windows-1252 labelled iso-8859-1, split in two pieces."""
    filename = "\u201cBudget\u201d 2026 \u2013 R\u00e9vision.txt"
    encoded = "".join(f"%{byte:02X}" for byte in filename.encode("cp1252"))
    body = "See the \u201cbudget\u201d \u2013 \u20ac12k."
    head = (
        "From: ann@example.org\nTo: inbox@assistant.example\nSubject: Budget\n"
        "Message-ID: <rfc2231@example.org>\nMIME-Version: 1.0\n"
        'Content-Type: multipart/mixed; boundary="b2"\n\n'
        "--b2\nContent-Type: text/plain; charset=latin1\nContent-Transfer-Encoding: 8bit\n\n"
    ).encode("ascii")
    attachment = (
        "\n--b2\nContent-Type: text/plain; charset=us-ascii\nContent-Transfer-Encoding: base64\n"
        f"Content-Disposition: attachment; filename*0*=iso-8859-1''{encoded[:24]};\n"
        f" filename*1*={encoded[24:]}\n\n"
        + base64.b64encode("\u2018notes\u2019 \u2014 \u20ac5".encode("cp1252")).decode("ascii")
        + "\n--b2--\n"
    ).encode("ascii")
    return Sample(_crlf(head + body.encode("cp1252") + attachment), "Budget", body, filename)


def raw_8bit_headers() -> Sample:
    """An old client: headers in raw Windows-1252 bytes, no encoded words, the body's label the only hint."""
    subject = "Caf\u00e9 \u201ccr\u00e8me\u201d \u2013 \u20ac4"
    body = "R\u00e9sum\u00e9 attached \u2026"
    head = (
        f'From: "Doe, Ren\u00e9" <rene@example.org>\nTo: inbox@assistant.example\nSubject: {subject}\n'
        "Message-ID: <raw-8bit@example.org>\nMIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: 8bit\n\n"
    )
    return Sample(_crlf((head + body + "\n").encode("cp1252")), subject, body)


SAMPLES = {
    "outlook": outlook,
    "raw-8bit-headers": raw_8bit_headers,
    "rfc2231-name": rfc2231_name,
    "x-sjis": x_sjis,
    "ks_c_5601-1987": ks_c_5601,
    "gb2312": gb2312,
}
