"""requestState across replicas: sealed under a key from the shared secret, each answer counted once
in the shared store, so a state minted by one replica is accepted once by any and refused on replay."""

from __future__ import annotations

import threading
from collections.abc import Callable

import mcp_types as types
import pytest

from mcp_tools.core.config import ConfigError, parse_config
from mcp_tools.core.tooling import Risk
from mcp_tools.policy.gate import Answer, AskLater, ConfirmationRequest
from mcp_tools.state import request_state_security
from mcp_tools.state.store import StateStore
from mcp_tools.transports.mcp_server import CONFIRM_KEY, InputRequiredElicitation
from mcp_tools.util.secrets import known_secrets

OpenStore = Callable[..., StateStore]
SECRET = "a-shared-secret-of-at-least-32-bytes!!"
pytestmark = pytest.mark.anyio


def security(secret: str | None):
    return request_state_security(parse_config({"state": {"secret": secret}} if secret else {}, {}), ttl=600)


def test_replicas_sharing_the_secret_open_each_others_state() -> None:
    sealed = security(SECRET).codec.seal(b'{"nonce": "n"}')
    assert security(SECRET).codec.unseal(sealed) == b'{"nonce": "n"}'


def test_a_state_sealed_under_another_secret_or_a_process_key_is_refused() -> None:
    """ATTACK: a state forged with a guessed or another deployment's secret does not open."""
    sealed = security(SECRET).codec.seal(b'{"nonce": "n"}')
    with pytest.raises(Exception):  # noqa: B017 - the SDK's codec error type is its own business
        security("another-secret-of-at-least-32-bytes-long").codec.unseal(sealed)
    with pytest.raises(Exception):  # noqa: B017
        security(None).codec.unseal(sealed)
    with pytest.raises(Exception):  # noqa: B017
        security(SECRET).codec.unseal(security(None).codec.seal(b"{}"))


def test_the_shared_secret_is_long_and_never_shown() -> None:
    with pytest.raises(ConfigError, match="at least 32 bytes"):
        security("too-short")
    assert SECRET in f"secret={SECRET}"
    security(SECRET)
    assert known_secrets.scrub(f"secret={SECRET}") == "secret=[redacted]"


def test_a_nonce_counts_once_however_many_replicas_race_for_it(open_store: OpenStore) -> None:
    stores = [open_store() for _ in range(6)]
    barrier = threading.Barrier(len(stores))
    firsts: list[bool] = []

    def use(store: StateStore) -> None:
        barrier.wait()
        firsts.append(store.use_nonce("n-1", 600))

    threads = [threading.Thread(target=use, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(firsts) == [False] * 5 + [True]
    assert stores[0].use_nonce("n-2", 600) is True


def test_a_nonce_is_remembered_for_its_whole_lifetime(open_store: OpenStore) -> None:
    now = [1000.0]
    store = open_store(clock=lambda: now[0])
    assert store.use_nonce("n", 600)
    now[0] += 599
    assert not store.use_nonce("n", 600)


async def test_an_answer_is_accepted_once_by_whichever_replica_sees_it(open_store: OpenStore) -> None:
    """ATTACK: the answered state replayed to the other replica asks again instead of running."""
    replica_a, replica_b = open_store(), open_store()
    request = ConfirmationRequest("demo.erase", Risk.HIGH, "Erase t", {"target": "t"}, "digest")
    call = types.CallToolRequestParams(name="demo_erase", arguments={"target": "t"})
    asked = await InputRequiredElicitation(call, replica_a, 600, "laptop").ask(request)
    assert isinstance(asked, AskLater)
    answered = call.model_copy(
        update={
            "input_responses": {CONFIRM_KEY: types.ElicitResult(action="accept", content={"confirm": True})},
            "request_state": asked.payload.request_state,
        }
    )
    assert await InputRequiredElicitation(answered, replica_b, 600, "laptop").ask(request) is Answer.ACCEPT
    assert isinstance(await InputRequiredElicitation(answered, replica_a, 600, "laptop").ask(request), AskLater)
    assert isinstance(await InputRequiredElicitation(answered, replica_b, 600, "laptop").ask(request), AskLater)
