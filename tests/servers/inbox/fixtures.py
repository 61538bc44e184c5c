"""A corpus of MIME samples built byte by byte, and helpers shared by the inbox tests."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from mcp_tools.core.tooling import Environment
from mcp_tools.servers.inbox import NAMESPACE
from mcp_tools.servers.inbox.config import InboxConfig
from mcp_tools.servers.inbox.service import InboxService
from tests.processes import STOP_POLL_SECONDS

INBOX_ADDRESS = "inbox@assistant.example"
PDF_BYTES = b"%PDF-1.4\n" + bytes(range(256)) * 4 + b"\n%%EOF\n"


def make_service(tmp_path: Path, env: dict[str, str] | None = None, **settings: Any) -> InboxService:
    settings.setdefault("addresses", [INBOX_ADDRESS])
    config = InboxConfig.model_validate(settings)
    environment = Environment(data_dir=tmp_path / "data", state_dir=tmp_path / "state", env=env or {})
    return NAMESPACE.create(config, environment)


def crlf(text: str) -> bytes:
    return text.replace("\r\n", "\n").replace("\n", "\r\n").encode("ascii")


def simple(
    subject: str = "Hello",
    body: str = "Just a short note.",
    *,
    message_id: str | None = "<simple@example.org>",
    sender: str = "Alice Example <alice@example.org>",
    date: str = "Mon, 02 Nov 2026 09:30:00 +0000",
) -> bytes:
    headers = [f"From: {sender}", f"To: {INBOX_ADDRESS}", f"Subject: {subject}", f"Date: {date}"]
    if message_id:
        headers.append(f"Message-ID: {message_id}")
    headers += [
        "MIME-Version: 1.0",
        'Content-Type: text/plain; charset="utf-8"',
        "Content-Transfer-Encoding: 8bit",
    ]
    return ("\r\n".join(headers) + "\r\n\r\n" + body.replace("\n", "\r\n") + "\r\n").encode("utf-8")


def multipart_alternative() -> bytes:
    return crlf(
        """From: Bob Builder <bob@example.com>
To: inbox@assistant.example
Cc: Carol <carol@example.com>
Subject: Quarterly report ready
Date: Tue, 03 Nov 2026 14:00:00 +0100
Message-ID: <alt-1@example.com>
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="ALT"

--ALT
Content-Type: text/plain; charset=us-ascii

The quarterly report is ready for review.
Please send comments by Friday.

--ALT
Content-Type: text/html; charset=us-ascii

<html><body><p>The <b>HTML</b> version must not be chosen.</p></body></html>
--ALT--
"""
    )


def html_only() -> bytes:
    return crlf(
        """From: Newsletter <news@shop.example>
To: inbox@assistant.example
Subject: Your order has shipped
Date: Wed, 04 Nov 2026 08:00:00 +0000
Message-ID: <html-1@shop.example>
MIME-Version: 1.0
Content-Type: text/html; charset=utf-8

<html><head><title>ignored title</title><style>p { color: red }</style></head>
<body><script>alert("tracking")</script>
<h1>Order&nbsp;#4711 shipped</h1>
<p>Your parcel is on its way &amp; arrives <i>Thursday</i>.</p>
<ul><li>Blue kettle</li><li>Tea towel</li></ul>
<p><a href="https://shop.example/track/4711">Track parcel</a></p>
</body></html>
"""
    )


def with_attachments() -> bytes:
    pdf = base64.encodebytes(PDF_BYTES).decode("ascii")
    csv_text = base64.encodebytes("name;city\nZoë;Zürich\n".encode()).decode("ascii")
    return crlf(
        f"""From: Dana <dana@example.net>
To: inbox@assistant.example
Subject: Invoice and data
Date: Thu, 05 Nov 2026 10:00:00 +0000
Message-ID: <att-1@example.net>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="MIX"

--MIX
Content-Type: text/plain; charset=utf-8

Invoice attached, plus the customer list.

--MIX
Content-Type: application/pdf; name="invoice.pdf"
Content-Disposition: attachment; filename="invoice.pdf"
Content-Transfer-Encoding: base64

{pdf}
--MIX
Content-Type: text/csv; charset=utf-8
Content-Disposition: attachment; filename*=utf-8''kunden%20%C3%BCbersicht.csv
Content-Transfer-Encoding: base64

{csv_text}
--MIX
Content-Type: application/x-sh
Content-Disposition: attachment; filename="../../../../tmp/evil.sh"

echo pwned
--MIX--
"""
    )


def latin1_body() -> bytes:
    head = crlf(
        """From: =?iso-8859-1?q?Andr=E9?= <andre@example.fr>
To: inbox@assistant.example
Subject: =?iso-8859-1?q?R=E9union_=E0_Gen=E8ve?=
Date: Fri, 06 Nov 2026 16:45:00 +0100
Message-ID: <latin1@example.fr>
MIME-Version: 1.0
Content-Type: text/plain; charset=iso-8859-1
Content-Transfer-Encoding: 8bit

"""
    )
    return head + "Le café crème est prêt à Genève.\r\n".encode("iso-8859-1")


def shift_jis_body() -> bytes:
    body = base64.encodebytes("会議の議事録を送ります。確認してください。\n".encode("shift_jis")).decode("ascii")
    subject = "=?shift_jis?B?" + base64.b64encode("議事録".encode("shift_jis")).decode("ascii") + "?="
    return crlf(
        f"""From: =?iso-2022-jp?b?GyRCOzNFRBsoQg==?= <yamada@example.jp>
To: inbox@assistant.example
Subject: {subject}
Date: Sat, 07 Nov 2026 09:00:00 +0900
Message-ID: <sjis@example.jp>
MIME-Version: 1.0
Content-Type: text/plain; charset=Shift_JIS
Content-Transfer-Encoding: base64

{body}"""
    )


def rfc2047_subject() -> bytes:
    return crlf(
        """From: Eve <eve@example.org>
To: inbox@assistant.example
Subject: =?UTF-8?B?8J+OiSBQYXJ0eQ==?= =?UTF-8?Q?_am_Samstag_f=C3=BCr_J=C3=BCrgen?=
Date: Sun, 08 Nov 2026 12:00:00 +0000
Message-ID: <rfc2047@example.org>
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8

Bring snacks.
"""
    )


def nested_forward() -> bytes:
    return crlf(
        """From: Me <me@home.example>
To: inbox@assistant.example
Subject: Fwd: Fwd: Lease renewal
Date: Mon, 09 Nov 2026 07:00:00 +0000
Message-ID: <fwd-outer@home.example>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="OUTER"

--OUTER
Content-Type: text/plain; charset=utf-8

See the landlord's mail below.

--OUTER
Content-Type: message/rfc822
Content-Disposition: attachment

From: Partner <partner@home.example>
To: me@home.example
Subject: Fwd: Lease renewal
Date: Sun, 08 Nov 2026 20:00:00 +0000
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="MIDDLE"

--MIDDLE
Content-Type: text/plain; charset=utf-8

Can you deal with this?

--MIDDLE
Content-Type: message/rfc822

From: Landlord <landlord@rent.example>
To: partner@home.example
Subject: Lease renewal
Date: Fri, 06 Nov 2026 11:00:00 +0000
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="INNER"

--INNER
Content-Type: text/plain; charset=utf-8

The lease renewal must be signed before December 1st.

--INNER
Content-Type: text/plain; charset=utf-8; name="lease.txt"
Content-Disposition: attachment; filename="lease.txt"

Lease terms: rent 1200 per month.
--INNER--

--MIDDLE--

--OUTER--
"""
    )


def truncated() -> bytes:
    whole = with_attachments()
    cut = whole.index(b"Content-Type: application/pdf") + 200
    return whole[:cut].replace(b"<att-1@example.net>", b"<truncated-1@example.net>")


def unknown_charset() -> bytes:
    return (
        crlf(
            """From: Frank <frank@example.org>
To: inbox@assistant.example
Subject: Odd charset
Message-ID: <odd@example.org>
Content-Type: text/plain; charset=x-made-up-charset

"""
        )
        + b"Caf\xc3\xa9 and \xff stray byte\r\n"
    )


def malformed_headers() -> bytes:
    return (
        b"From: <<<@@@>>> \x81\x82\r\n"
        b"To: ,,,,@\r\n"
        b"Subject: Broken =?utf-8?q?but_readable?=\r\n"
        b"Date: yesterday around noon\r\n"
        b"Content-Type: multipart/mixed\r\n"
        b"\r\n"
        b"no boundary given, body still here\r\n"
    )


def corpus() -> dict[str, bytes]:
    return {
        "alternative": multipart_alternative(),
        "html_only": html_only(),
        "attachments": with_attachments(),
        "latin1": latin1_body(),
        "shift_jis": shift_jis_body(),
        "rfc2047": rfc2047_subject(),
        "forward": nested_forward(),
        "truncated": truncated(),
        "unknown_charset": unknown_charset(),
        "malformed": malformed_headers(),
    }


@dataclass
class FakeChat:
    """A tiny OpenAI-compatible `/v1/chat/completions` service on 127.0.0.1."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    mode: str = "ok"
    reply: str = "A reminder to sign the lease renewal before December."
    expected_key: str | None = "sk-test-secret-key"


@contextmanager
def fake_chat_server(expected_key: str | None = "sk-test-secret-key") -> Iterator[FakeChat]:
    state = FakeChat(url="", expected_key=expected_key)
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, payload: Any) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            state.requests.append({"path": self.path, "authorization": self.headers.get("Authorization"), "body": body})
            if self.path != "/v1/chat/completions":
                return self._send(404, {"error": {"message": "not found"}})
            if state.expected_key and self.headers.get("Authorization") != f"Bearer {state.expected_key}":
                return self._send(
                    401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
                )
            messages = body.get("messages")
            if not body.get("model") or not isinstance(messages, list) or not messages:
                return self._send(400, {"error": {"message": "model and messages are required"}})
            if state.mode == "error":
                return self._send(500, {"error": {"message": "server exploded"}})
            if state.mode == "slow":
                release.wait(5)
            if state.mode == "garbage":
                return self._send(200, b"<html>not json</html>")
            content = "   " if state.mode == "empty" else state.reply
            return self._send(
                200,
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                },
            )

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(STOP_POLL_SECONDS,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        release.set()
        server.shutdown()
        server.server_close()
