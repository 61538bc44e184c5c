"""A fake Google for tests: OAuth, batch and stateful APIs, validated against discovery documents."""

from tests.servers.fake_google.docs import FakeDocs
from tests.servers.fake_google.gmail import FakeGmail
from tests.servers.fake_google.server import FakeGoogle

__all__ = ["FakeDocs", "FakeGmail", "FakeGoogle"]
