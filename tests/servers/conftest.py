"""Fixtures shared by the namespace tests: the fake Google (OAuth, batch, Gmail)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers.fake_google import FakeGmail, FakeGoogle


@pytest.fixture
def google() -> Iterator[FakeGoogle]:
    """A fake Google on 127.0.0.1; a request the real API would refuse fails the test."""
    fake = FakeGoogle().start()
    try:
        yield fake
    finally:
        fake.stop()
    assert fake.violations == [], f"requests Google would refuse: {fake.violations}"


@pytest.fixture
def gmail(google: FakeGoogle) -> FakeGmail:
    return FakeGmail(google)
