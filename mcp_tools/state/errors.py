"""What a state store raises when it cannot be used."""

from __future__ import annotations


class StateStoreError(RuntimeError):
    """The state store cannot be used: the message says why, without credentials."""


class StateStoreUnavailable(StateStoreError):
    """The state store cannot be reached (the database is down); nothing was changed."""
