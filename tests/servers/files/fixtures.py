"""Fixtures for the files namespace: a local root, and a real S3 endpoint (moto's server) on loopback."""

from __future__ import annotations

import itertools
import logging
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

S3_KEY_ID = "files-test-key-id"
S3_SECRET = "files-test-secret-key-do-not-leak"
_buckets = itertools.count()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class MotoEndpoint:
    url: str

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.url,
            aws_access_key_id=S3_KEY_ID,
            aws_secret_access_key=S3_SECRET,
            region_name="us-east-1",
        )


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[MotoEndpoint]:
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield MotoEndpoint(f"http://127.0.0.1:{port}")
    finally:
        server.stop()


@dataclass
class FilesBackend:
    """One configured store; `settings` is the TOML config as a dict for `connect`."""

    name: str
    settings: dict[str, Any]
    root: Path | None = None
    endpoint: MotoEndpoint | None = None
    bucket: str | None = None
    prefix: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def with_files(self, **files: Any) -> dict[str, Any]:
        merged = {**self.settings["files"], **files}
        return {**self.settings, "files": merged}

    def put(self, key: str, data: bytes) -> None:
        """Place a file behind the server's back (a peer writing concurrently)."""
        if self.root is not None:
            path = self.root / key
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        else:
            assert self.endpoint is not None
            self.endpoint.client().put_object(Bucket=self.bucket, Key=self.prefix + key, Body=data)

    def remove(self, key: str) -> None:
        """Remove a file behind the server's back."""
        if self.root is not None:
            (self.root / key).unlink()
        else:
            assert self.endpoint is not None
            self.endpoint.client().delete_object(Bucket=self.bucket, Key=self.prefix + key)

    def get(self, key: str) -> bytes | None:
        if self.root is not None:
            path = self.root / key
            return path.read_bytes() if path.is_file() else None
        assert self.endpoint is not None
        try:
            return self.endpoint.client().get_object(Bucket=self.bucket, Key=self.prefix + key)["Body"].read()
        except Exception:
            return None


def local_backend(tmp_path: Path) -> FilesBackend:
    root = tmp_path / "store"
    root.mkdir(exist_ok=True)
    return FilesBackend("local", {"server": {"servers": ["files"]}, "files": {"root": str(root)}}, root=root)


def s3_backend(endpoint: MotoEndpoint) -> FilesBackend:
    bucket = f"files-test-{next(_buckets)}"
    endpoint.client().create_bucket(Bucket=bucket)
    files = {
        "backend": "s3",
        "bucket": bucket,
        "prefix": "team/",
        "endpoint_url": endpoint.url,
        "region": "us-east-1",
        "access_key_id": S3_KEY_ID,
        "secret_access_key": S3_SECRET,
    }
    return FilesBackend(
        "s3", {"server": {"servers": ["files"]}, "files": files}, endpoint=endpoint, bucket=bucket, prefix="team/"
    )


@pytest.fixture(params=["local", "s3"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> FilesBackend:
    if request.param == "local":
        return local_backend(tmp_path)
    return s3_backend(request.getfixturevalue("moto_endpoint"))


@pytest.fixture
def local(tmp_path: Path) -> FilesBackend:
    return local_backend(tmp_path)
