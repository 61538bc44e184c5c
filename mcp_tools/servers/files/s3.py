"""The S3-compatible backend (AWS S3, Cloudflare R2, MinIO): same keys, same tools, boto3 loaded lazily.

Folders are prefixes; `files.mkdir` writes an empty `name/` marker object so an empty folder
can exist. Conditional writes use the object's ETag (`If-Match`), so `expected_sha256` holds
even against another writer.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.files.backend import (
    MAX_COPIED,
    READ_CHUNK,
    Progress,
    StoredEntry,
    Window,
    check_copy_target,
    check_expected,
    read_window_from,
)
from mcp_tools.util.sandbox import KeyPolicy, check_key

DELETE_BATCH = 1000  # the most one DeleteObjects request takes


@dataclass(frozen=True)
class S3Settings:
    bucket: str
    prefix: str = ""
    endpoint_url: str | None = None
    region: str | None = None
    access_key_id: str | None = field(default=None, repr=False)
    secret_access_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)


def _normal_prefix(prefix: str) -> str:
    stripped = prefix.strip("/")
    return f"{stripped}/" if stripped else ""


def _failure(error: Exception, key: str) -> ToolFailure:
    """Map a boto error to a failure; messages name the key and the S3 code, never credentials."""
    response: dict[str, Any] = getattr(error, "response", None) or {}
    code = str(response.get("Error", {}).get("Code", ""))
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    if code in ("NoSuchKey", "404", "NotFound") or status == 404:
        if code == "NoSuchBucket":
            return ToolFailure("not_configured", "the configured bucket does not exist", "check [files] bucket")
        return ToolFailure("not_found", f"{key} does not exist")
    if code in ("PreconditionFailed", "ConditionalRequestConflict") or status in (409, 412):
        return ToolFailure("conflict", f"{key} changed while it was being written; nothing was written")
    if code in ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "403") or status == 403:
        return ToolFailure(
            "upstream_error",
            f"the bucket refused access to {key} ({code or status})",
            "check the S3 credentials and their permissions",
        )
    if code == "NoSuchBucket":
        return ToolFailure("not_configured", "the configured bucket does not exist", "check [files] bucket")
    name = type(error).__name__
    if "Timeout" in name:
        return ToolFailure("timeout", f"the S3 endpoint did not answer in time for {key}")
    return ToolFailure("upstream_error", f"S3 request for {key} failed ({code or name})")


class S3Backend:
    """Objects under `prefix` in one bucket; every boto3 call runs in a worker thread."""

    blocking = True

    def __init__(self, settings: S3Settings, *, names: KeyPolicy = "strict") -> None:
        self.settings = settings
        self.names: KeyPolicy = names
        self.prefix = _normal_prefix(settings.prefix)
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._write_lock = threading.Lock()

    @property
    def client(self) -> Any:
        with self._client_lock:
            if self._client is None:
                import boto3
                from botocore.config import Config

                settings = self.settings
                config = Config(
                    connect_timeout=5,
                    read_timeout=30,
                    retries={"max_attempts": 3, "mode": "standard"},
                    s3={"addressing_style": "path"} if settings.endpoint_url else None,
                )
                self._client = boto3.session.Session().client(
                    "s3",
                    endpoint_url=settings.endpoint_url,
                    region_name=settings.region or "us-east-1",
                    aws_access_key_id=settings.access_key_id,
                    aws_secret_access_key=settings.secret_access_key,
                    aws_session_token=settings.session_token,
                    config=config,
                )
            return self._client

    def _object(self, key: str) -> str:
        check_key(key, self.names, allow_empty=True)
        return self.prefix + key

    def _key_of(self, object_key: str) -> str:
        return object_key[len(self.prefix) :].rstrip("/")

    def _call(self, key: str, operation: str, **kwargs: Any) -> Any:
        try:
            return getattr(self.client, operation)(Bucket=self.settings.bucket, **kwargs)
        except ToolFailure:
            raise
        except Exception as error:  # botocore raises many unrelated classes
            raise _failure(error, key) from None

    def _head(self, key: str) -> dict[str, Any] | None:
        try:
            head: dict[str, Any] = self._call(key, "head_object", Key=self._object(key))
            return head
        except ToolFailure as failure:
            if failure.kind == "not_found":
                return None
            raise

    def _is_folder(self, key: str) -> bool:
        listing = self._call(key, "list_objects_v2", Prefix=self._object(key) + "/", MaxKeys=1)
        return bool(listing.get("KeyCount") or listing.get("Contents"))

    def _objects_below(self, key: str) -> Iterator[dict[str, Any]]:
        base = self._object(key) + "/" if key else self.prefix
        token: str | None = None
        while True:
            extra = {"ContinuationToken": token} if token else {}
            page = self._call(key or "the root", "list_objects_v2", Prefix=base, **extra)
            yield from page.get("Contents", [])
            if not page.get("IsTruncated"):
                return
            token = page.get("NextContinuationToken")

    def stat(self, key: str) -> StoredEntry | None:
        head = self._head(key)
        if head is not None:
            size, modified = int(head["ContentLength"]), head["LastModified"].timestamp()
            return StoredEntry(key, "file", size, modified, tag=head.get("ETag"))
        if self._is_folder(key):
            return StoredEntry(key, "folder")
        return None

    def _get(self, key: str) -> dict[str, Any]:
        if self._is_folder(key) and self._head(key) is None:
            raise ToolFailure("conflict", f"{key} is a folder, not a file", "list it instead")
        found: dict[str, Any] = self._call(key, "get_object", Key=self._object(key))
        return found

    def read_window(self, key: str, offset: int, limit: int, *, sha256: bool = False) -> Window:
        """One pass over the object: its version is its sha256."""
        response = self._get(key)
        body = response["Body"]
        try:
            return read_window_from(body.iter_chunks(READ_CHUNK), offset, limit)
        finally:
            body.close()

    def current_version(self, key: str, expected: str) -> str | None:
        try:
            return self.read_window(key, 0, 0).sha256
        except ToolFailure as failure:
            if failure.kind == "not_found":
                return None
            raise

    def _read_limited(self, key: str, max_bytes: int) -> tuple[bytes, str]:
        response = self._get(key)
        size = int(response.get("ContentLength", 0))
        if size > max_bytes:
            response["Body"].close()
            raise ToolFailure("too_large", f"{key} is {size} bytes; the limit is {max_bytes} bytes")
        try:
            data = response["Body"].read()
        finally:
            response["Body"].close()
        return data, response.get("ETag", "")

    def read_all(self, key: str, max_bytes: int) -> bytes:
        return self._read_limited(key, max_bytes)[0]

    def read_head(self, key: str, max_bytes: int) -> bytes:
        """One ranged GET: S3 sends no more than `max_bytes` bytes, however large the object."""
        if max_bytes <= 0:
            return b""
        response = self._call(key, "get_object", Key=self._object(key), Range=f"bytes=0-{max_bytes - 1}")
        try:
            data: bytes = response["Body"].read(max_bytes)
            return data
        finally:
            response["Body"].close()

    def write(self, key: str, data: bytes, *, create_parents: bool, expected_sha256: str | None) -> bool:
        object_key = self._object(key)
        with self._write_lock:
            if self._is_folder(key):
                raise ToolFailure("conflict", f"{key} is a folder; it cannot be replaced by a file")
            self._check_parent(key, create_parents)
            condition: dict[str, str] = {}
            if expected_sha256 is not None:
                head = self._head(key)
                if head is None:
                    check_expected(key, None, expected_sha256)
                    return False  # pragma: no cover - check_expected raised
                current, etag = self._read_limited(key, max(int(head["ContentLength"]), 1))
                check_expected(key, hashlib.sha256(current).hexdigest(), expected_sha256)
                condition = {"IfMatch": etag}
                existed = True
            else:
                existed = self._head(key) is not None
            self._call(key, "put_object", Key=object_key, Body=data, **condition)
            return not existed

    def _check_parent(self, key: str, create_parents: bool) -> None:
        """The containing folder: never a file; it must exist unless parents may be created."""
        parent = key.rpartition("/")[0]
        if not parent:
            return
        if self._head(parent) is not None:
            raise ToolFailure("conflict", f"a part of {key} is a file, not a folder")
        if not create_parents and not self._is_folder(parent):
            raise ToolFailure("not_found", f"the folder for {key} does not exist", "pass create_parents: true")

    def entries(self, folder: str, *, recursive: bool, after: str | None) -> Iterator[StoredEntry]:
        base = self._object(folder) + "/" if folder else self.prefix
        listing: dict[str, Any] = {"Prefix": base}
        if not recursive:
            listing["Delimiter"] = "/"
        if after:
            listing["StartAfter"] = self._object(after.rstrip("/")) + ("/" if after.endswith("/") else "")
        emitted_folders: set[str] = set()
        token: str | None = None
        while True:
            extra = {"ContinuationToken": token} if token else {}
            page = self._call(folder or "the root", "list_objects_v2", **listing, **extra)
            found: list[StoredEntry] = []
            for common in page.get("CommonPrefixes", []):
                found.append(StoredEntry(self._key_of(common["Prefix"]), "folder"))
            for item in page.get("Contents", []):
                object_key: str = item["Key"]
                if object_key == base:
                    continue  # the folder's own marker
                key = self._key_of(object_key)
                if recursive:
                    found.extend(self._implied_folders(folder, key, emitted_folders))
                if object_key.endswith("/"):
                    if key not in emitted_folders:
                        emitted_folders.add(key)
                        found.append(StoredEntry(key, "folder", None, item["LastModified"].timestamp()))
                    continue
                found.append(StoredEntry(key, "file", int(item["Size"]), item["LastModified"].timestamp()))
            found.sort(key=lambda entry: entry.sort_key)
            for entry in found:
                if after is None or entry.sort_key > after:
                    yield entry
            if not page.get("IsTruncated"):
                return
            token = page.get("NextContinuationToken")

    @staticmethod
    def _implied_folders(folder: str, key: str, emitted: set[str]) -> list[StoredEntry]:
        """Folders that exist only as prefixes of deeper objects, each listed once."""
        implied: list[StoredEntry] = []
        parts = key.split("/")
        start = len(folder.split("/")) if folder else 0
        for depth in range(start + 1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent not in emitted:
                emitted.add(parent)
                implied.append(StoredEntry(parent, "folder"))
        return implied

    def mkdir(self, key: str, *, parents: bool) -> bool:
        if self._head(key) is not None:
            raise ToolFailure("conflict", f"{key} exists and is not a folder")
        if self._is_folder(key):
            return False
        self._call(key, "put_object", Key=self._object(key) + "/", Body=b"")
        return True

    def survey_below(self, key: str, cap: int) -> tuple[int, str]:
        digest, count = hashlib.sha256(), 0
        for item in self._objects_below(key):  # S3 lists in key order
            if count >= cap:
                break
            digest.update(f"{item['Key']}\0{item.get('ETag')}:{item.get('Size')}\n".encode())
            count += 1
        return count, digest.hexdigest()

    def _delete_keys(self, key: str, object_keys: list[str], progress: Progress | None = None) -> None:
        for start in range(0, len(object_keys), DELETE_BATCH):
            batch = [{"Key": name} for name in object_keys[start : start + DELETE_BATCH]]
            result = self._call(key, "delete_objects", Delete={"Objects": batch, "Quiet": True})
            if progress is not None:
                progress(start + len(batch), len(object_keys))
            if result.get("Errors"):
                raise ToolFailure("upstream_error", f"S3 refused to delete {len(result['Errors'])} objects of {key}")

    def move(self, source: str, destination: str, *, overwrite: bool, create_parents: bool) -> bool:
        with self._write_lock:
            origin = self.stat(source)
            if origin is None:
                raise ToolFailure("not_found", f"{source} does not exist")
            target = self.stat(destination)
            if target is not None and target.type == "folder":
                raise ToolFailure(
                    "conflict", f"{destination} is a folder", "give the full new path, e.g. 'folder/name.txt'"
                )
            if target is not None and not overwrite:
                raise ToolFailure("conflict", f"{destination} already exists", "pass overwrite: true to replace it")
            if origin.type == "file":
                pairs = [(self._object(source), self._object(destination))]
            else:
                source_base = self._object(source) + "/"
                destination_base = self._object(destination) + "/"
                pairs = [
                    (item["Key"], destination_base + item["Key"][len(source_base) :])
                    for item in self._objects_below(source)
                ]
            for old, new in pairs:
                copy_source = {"Bucket": self.settings.bucket, "Key": old}
                self._call(source, "copy_object", Key=new, CopySource=copy_source)
            self._delete_keys(source, [old for old, _ in pairs])
            return target is not None

    def copy(self, source: str, destination: str, *, overwrite: bool, create_parents: bool, max_bytes: int) -> int:
        """Server-side copies, each object atomic; a folder appears object by object."""
        with self._write_lock:
            origin = self.stat(source)
            if origin is None:
                raise ToolFailure("not_found", f"{source} does not exist")
            target = self.stat(destination)
            check_copy_target(destination, target, overwrite)
            self._check_parent(destination, create_parents)
            if origin.type == "file":
                if (origin.size or 0) > max_bytes:
                    raise ToolFailure("too_large", f"{source} is larger than the write limit of {max_bytes} bytes")
                pairs = [(self._object(source), self._object(destination))]
            else:
                if target is not None:
                    raise ToolFailure("conflict", f"{destination} already exists", "copy the folder to a new path")
                source_base, destination_base = self._object(source) + "/", self._object(destination) + "/"
                objects = list(itertools.islice(self._objects_below(source), MAX_COPIED + 1))
                if len(objects) > MAX_COPIED:
                    raise ToolFailure(
                        "too_large", f"{source} holds more than {MAX_COPIED} entries", "copy smaller folders"
                    )
                if any(int(item.get("Size", 0)) > max_bytes for item in objects):
                    raise ToolFailure("too_large", f"a file in {source} is larger than the write limit")
                pairs = [(item["Key"], destination_base + item["Key"][len(source_base) :]) for item in objects]
            for old, new in pairs:
                self._call(source, "copy_object", Key=new, CopySource={"Bucket": self.settings.bucket, "Key": old})
            return sum(1 for old, _ in pairs if not old.endswith("/"))

    def delete(self, key: str, *, recursive: bool, progress: Progress | None = None) -> int:
        with self._write_lock:
            if self._head(key) is not None:
                self._call(key, "delete_object", Key=self._object(key))
                return 1
            if not self._is_folder(key):
                raise ToolFailure("not_found", f"{key} does not exist")
            if not recursive:
                raise ToolFailure(
                    "invalid_arguments",
                    f"{key} is a folder",
                    "pass recursive: true to delete it and everything in it",
                )
            object_keys = [item["Key"] for item in self._objects_below(key)]
            self._delete_keys(key, object_keys, progress)
            return len(object_keys)
