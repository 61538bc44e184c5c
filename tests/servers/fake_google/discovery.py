"""Check requests against the discovery document shipped in google-api-python-client.

The fake answers only what the real API would accept: the method must exist at that path
and HTTP verb, every query parameter must be declared with the right type, required ones
present, and every request-body field must exist in the method's request schema.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from dataclasses import dataclass
from typing import Any

GLOBAL_PARAMETERS = {
    "alt",
    "fields",
    "key",
    "prettyPrint",
    "quotaUser",
    "uploadType",
    "upload_protocol",
    "access_token",
    "callback",
    "oauth_token",
    "$.xgafv",
}


def load_document(api: str, version: str) -> dict[str, Any]:
    import googleapiclient

    folder = os.path.join(os.path.dirname(googleapiclient.__file__), "discovery_cache", "documents")
    with open(os.path.join(folder, f"{api}.{version}.json"), encoding="utf-8") as handle:
        return json.load(handle)


class Rejected(Exception):
    """A request Google would refuse with 400; the message says why."""


@dataclass
class Method:
    id: str
    http_method: str
    pattern: re.Pattern[str]
    parameters: dict[str, Any]
    request_ref: str | None
    scopes: list[str]
    upload: bool = False


def _compile(path: str) -> re.Pattern[str]:
    regex = ""
    for piece in re.split(r"(\{[^}]+\})", path):
        if piece.startswith("{"):
            name = piece[1:-1].lstrip("+")
            regex += f"(?P<{name.replace('.', '_')}>[^/]+)"
        else:
            regex += re.escape(piece)
    return re.compile("^/" + regex + "$")


class Discovery:
    def __init__(self, api: str, version: str) -> None:
        self.document = load_document(api, version)
        self.schemas: dict[str, Any] = self.document["schemas"]
        self.methods: list[Method] = []
        self.service_path: str = self.document.get("servicePath") or ""  # drive/v3/ (empty for gmail)
        self._collect(self.document.get("resources", {}))

    def _collect(self, resources: dict[str, Any]) -> None:
        for resource in resources.values():
            for method in resource.get("methods", {}).values():
                ref = method.get("request", {}).get("$ref")
                common = (method["id"], method["httpMethod"])
                self.methods.append(
                    Method(
                        *common,
                        _compile(self.service_path + method["path"]),
                        method.get("parameters", {}),
                        ref,
                        method["scopes"],
                    )
                )
                upload = method.get("mediaUpload", {}).get("protocols", {}).get("simple", {}).get("path")
                if upload:
                    self.methods.append(
                        Method(
                            *common,
                            _compile(upload.lstrip("/")),
                            method.get("parameters", {}),
                            ref,
                            method["scopes"],
                            upload=True,
                        )
                    )
            self._collect(resource.get("resources", {}))

    def match(self, http_method: str, path: str) -> tuple[Method, dict[str, str]] | None:
        """The method at this verb and path, with its path parameters; None if Google has none."""
        for method in self.methods:
            found = method.pattern.match(path)
            if found and method.http_method == http_method:
                return method, {key: value for key, value in found.groupdict().items()}
        return None

    def check_query(self, method: Method, query: dict[str, list[str]], path_params: dict[str, str]) -> None:
        for name, values in query.items():
            if name in GLOBAL_PARAMETERS:
                continue
            spec = method.parameters.get(name)
            if spec is None or spec.get("location") != "query":
                raise Rejected(f'Invalid JSON payload received. Unknown name "{name}": Cannot bind query parameter.')
            if len(values) > 1 and not spec.get("repeated"):
                raise Rejected(f"parameter {name} may appear only once")
            for value in values:
                self._check_value(name, spec, value)
        for name, spec in method.parameters.items():
            if spec.get("required") and name not in query and name not in path_params:
                raise Rejected(f"Required parameter: {name}")

    @staticmethod
    def _check_value(name: str, spec: dict[str, Any], value: str) -> None:
        kind = spec.get("type")
        if kind == "integer":
            if not re.fullmatch(r"-?\d+", value):
                raise Rejected(f"Invalid value at '{name}' (TYPE_INT32), \"{value}\"")
            number = int(value)
            if "minimum" in spec and number < int(spec["minimum"]):
                raise Rejected(f"Invalid value at '{name}': below {spec['minimum']}")
            if "maximum" in spec and number > int(spec["maximum"]):
                raise Rejected(f"Invalid value at '{name}': above {spec['maximum']}")
        elif kind == "boolean" and value not in ("true", "false"):
            raise Rejected(f"Invalid value at '{name}' (TYPE_BOOL), \"{value}\"")
        if "enum" in spec and value not in spec["enum"]:
            raise Rejected(f"Invalid value at '{name}' (enum), \"{value}\"")

    def check_body(self, method: Method, body: Any) -> None:
        if method.request_ref is None:
            if body not in (None, {}, b""):
                raise Rejected(f"{method.id} takes no request body")
            return
        self._check_schema({"$ref": method.request_ref}, body, "body")

    def _check_schema(self, schema: dict[str, Any], value: Any, where: str) -> None:
        if value is None and where != "body":
            return  # JSON null for a field is its default: how a patch clears it
        if "$ref" in schema:
            schema = self.schemas[schema["$ref"]]
        kind = schema.get("type")
        if kind == "object":
            if not isinstance(value, dict):
                raise Rejected(f"Invalid JSON payload received. {where}: expected an object")
            properties = schema.get("properties", {})
            extra = schema.get("additionalProperties")
            for key, item in value.items():
                if key in properties:
                    self._check_schema(properties[key], item, f"{where}.{key}")
                elif extra is not None:
                    self._check_schema(extra, item, f"{where}.{key}")
                else:
                    raise Rejected(
                        f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': Cannot find field."
                    )
        elif kind == "array":
            if not isinstance(value, list):
                raise Rejected(f"Invalid JSON payload received. {where}: expected a list")
            for index, item in enumerate(value):
                self._check_schema(schema.get("items", {}), item, f"{where}[{index}]")
        elif kind == "string":
            if schema.get("format") in ("int64", "uint64") and isinstance(value, int):
                return
            if not isinstance(value, str):
                raise Rejected(f"Invalid value at '{where}' (TYPE_STRING), {value!r}")
            if schema.get("format") == "byte":
                try:
                    base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
                except (binascii.Error, ValueError):
                    raise Rejected(f"Invalid value at '{where}' (TYPE_BYTES), Base64 decoding failed") from None
            if "enum" in schema and value not in schema["enum"]:
                raise Rejected(f"Invalid value at '{where}' (enum), {value!r}")
        elif kind == "integer":
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise Rejected(f"Invalid value at '{where}' (TYPE_INT32), {value!r}")
        elif kind == "boolean" and not isinstance(value, bool):
            raise Rejected(f"Invalid value at '{where}' (TYPE_BOOL), {value!r}")
