"""A fake Google for tests: OAuth, batch and stateful APIs, validated against discovery documents."""

from tests.servers.fake_google.calendar import FakeCalendar
from tests.servers.fake_google.docs import FakeDocs
from tests.servers.fake_google.drive import FakeDrive
from tests.servers.fake_google.gmail import FakeGmail
from tests.servers.fake_google.people import FakePeople
from tests.servers.fake_google.server import FakeGoogle
from tests.servers.fake_google.sheets import FakeSheets
from tests.servers.fake_google.tasks import FakeTasks

__all__ = ["FakeCalendar", "FakeDocs", "FakeDrive", "FakeGmail", "FakeGoogle", "FakePeople", "FakeSheets", "FakeTasks"]
