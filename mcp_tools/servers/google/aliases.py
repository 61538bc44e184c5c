"""Argument names of Google's own APIs that the Google namespaces' aliases share."""

from __future__ import annotations

from collections.abc import Mapping

# Paging as Google's list calls name it, in our tools' terms.
PAGING: Mapping[str, str] = {"maxResults": "limit", "max_results": "limit", "pageSize": "limit", "pageToken": "cursor"}
