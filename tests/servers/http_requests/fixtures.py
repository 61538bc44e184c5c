"""A real local HTTP server that records what it receives, for the http namespace and files.import."""

from __future__ import annotations

import datetime
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.processes import STOP_POLL_SECONDS


@dataclass
class Recorder:
    """Requests the server received: method, path, headers (lower-case names) and body."""

    requests: list[dict[str, Any]] = field(default_factory=list)


def _handler(recorder: Recorder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {name.lower(): value for name, value in self.headers.items()}
            recorder.requests.append({"method": self.command, "path": self.path, "headers": headers, "body": body})
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            if parts.path == "/redirect":
                self._send(302, b"", {"Location": query["to"][0]})
            elif parts.path == "/binary":
                kind = query.get("type", ["image/png"])[0]
                self._send(200, bytes(range(256)) * int(query.get("times", ["1"])[0]), {"Content-Type": kind})
            elif parts.path == "/big":
                self._send(200, ("0123456789" * 10_000).encode(), {"Content-Type": "text/plain"})
            elif parts.path == "/labelled":  # a body in Windows-1252 under the label in ?charset=
                label = query.get("charset", ["iso-8859-1"])[0]
                body = "\u201cquoted\u201d \u2013 \u20ac5".encode("cp1252")
                self._send(200, body, {"Content-Type": f"text/plain; charset={label}"})
            elif parts.path == "/file.txt":
                self._send(200, b"imported text\n", {"Content-Type": "text/plain"})
            else:  # echo: everything it received, in the body and in response headers
                payload = json.dumps({"method": self.command, "headers": headers, "body": body.decode("latin-1")})
                extra = {"X-Echo-Authorization": headers.get("authorization", ""), "Set-Cookie": "session=abc123"}
                self._send(200, payload.encode(), {"Content-Type": "application/json", **extra})

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _serve

    return Handler


@contextmanager
def local_server(
    host: str = "127.0.0.1", port: int = 0, tls: ssl.SSLContext | None = None
) -> Iterator[tuple[ThreadingHTTPServer, Recorder]]:
    recorder = Recorder()
    server = ThreadingHTTPServer((host, port), _handler(recorder))
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(STOP_POLL_SECONDS,), daemon=True)
    thread.start()
    try:
        yield server, recorder
    finally:
        server.shutdown()
        server.server_close()


def fixed_resolver(table: dict[str, list[str]], calls: list[str] | None = None):
    """A resolver answering from a table (a list of answers per call for names that change)."""
    counts: dict[str, int] = {}

    async def resolve(host: str, port: int) -> list[str]:
        if calls is not None:
            calls.append(host)
        if host not in table:
            raise OSError(-2, "Name or service not known")
        answers = table[host]
        index = counts.get(host, 0)
        counts[host] = index + 1
        answer = answers[min(index, len(answers) - 1)]
        return [answer] if isinstance(answer, str) else list(answer)

    return resolve


@dataclass
class Certificate:
    """A self-signed certificate for some names, as files, and the server names clients asked for."""

    cert_file: str
    key_file: str
    requested_names: list[str] = field(default_factory=list)

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        context.sni_callback = lambda sock, name, ctx: self.requested_names.append(name or "")
        return context

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=self.cert_file)


def self_signed(folder: Any, names: list[str]) -> Certificate:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name) for name in names]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / f"{names[0]}.pem", folder / f"{names[0]}.key"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )

    return Certificate(str(cert_file), str(key_file))
