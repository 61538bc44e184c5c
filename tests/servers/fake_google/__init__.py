"""A fake Google for tests: OAuth, batch and stateful APIs, validated against discovery documents."""

from tests.servers.fake_google.gmail import FakeGmail
from tests.servers.fake_google.server import FakeGoogle
from tests.servers.fake_google.sheets import FakeSheets

__all__ = ["FakeGmail", "FakeGoogle", "FakeSheets"]
