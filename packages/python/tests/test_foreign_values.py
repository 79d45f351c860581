"""Values the kit did not write, under the keys it uses (issue 36, point 4; decisions D2 and D3), on a
real redis-server and a real token file:

- a value of another Redis type under the intent or the tokens key (another application's hash) fails
  the call with ``STORAGE_FAILED``, cause ``COMMAND_FAILED``, naming the Redis key and saying the kit
  did not write it; nothing is sent, deleted or overwritten;
- a string under the intent key that is no intent record reads as no intent, is warned about once,
  naming the key, and is replaced by the next refresh's intent;
- the message about a value that is no token record names the key a user finds (the Redis key, with
  its prefix and hash tag), never the manager's internal name.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import redis

from fake_tenant import BASE_URL, CLIENT_ID, signed_in_and_expired
from tenant_integration import TokenManagerError
from tenant_integration.storage import FileStorage, TokenStorage
from tenant_integration.storage.errors import RedisStorageError
from tenant_integration.storage.redis import RedisStorage

SESSION = f"tenant-integration:{BASE_URL}:{CLIENT_ID}"
#: Their Redis keys, after the test's prefix: the session part in a hash tag.
REDIS_SESSION = f"tenant-integration:{{{BASE_URL}:{CLIENT_ID}}}"


@pytest.mark.parametrize("kind", ["intent", "tokens"])
def test_a_value_of_another_type_fails_the_call_naming_the_redis_key_and_is_left_as_it_is(
    redis_client: redis.Redis, redis_prefix: str, kind: str
) -> None:
    manager, tenant = signed_in_and_expired(RedisStorage(redis_client, prefix=redis_prefix))
    key = f"{redis_prefix}{REDIS_SESSION}:{kind}"
    if kind == "tokens":
        redis_client.delete(key)
    redis_client.hset(key, mapping={"owner": "another-app"})

    with pytest.raises(TokenManagerError) as caught:
        manager.get_access_token()

    assert caught.value.code == "STORAGE_FAILED"
    cause = caught.value.cause
    assert isinstance(cause, RedisStorageError)
    assert cause.code == "COMMAND_FAILED"
    assert f"Redis GET of {key} failed" in str(cause)
    assert "holds a value of another Redis type, which this kit did not write" in str(cause)
    assert "WRONGTYPE" in str(cause)
    assert tenant.refreshes == 0, "nothing may be presented while the intent is unknown"
    assert redis_client.type(key) == b"hash"
    assert redis_client.hgetall(key) == {b"owner": b"another-app"}


def redis_storage(redis_client: redis.Redis, redis_prefix: str, tmp_path: Path) -> tuple[TokenStorage, str]:
    return RedisStorage(redis_client, prefix=redis_prefix), f"{redis_prefix}{REDIS_SESSION}:intent"


def file_storage(redis_client: redis.Redis, redis_prefix: str, tmp_path: Path) -> tuple[TokenStorage, str]:
    # The token file's entries are the manager's names, as they are.
    return FileStorage(tmp_path / "tokens.json"), f"{SESSION}:intent"


@pytest.mark.parametrize("make", [redis_storage, file_storage], ids=["redis", "file"])
def test_a_string_that_is_no_intent_reads_as_none_is_warned_about_once_and_is_replaced(
    redis_client: redis.Redis, redis_prefix: str, tmp_path: Path, caplog: pytest.LogCaptureFixture, make: object
) -> None:
    storage, named = make(redis_client, redis_prefix, tmp_path)  # type: ignore[operator]
    manager, tenant = signed_in_and_expired(storage)
    storage.set(f"{SESSION}:intent", '{"written-by":"another tool"}')

    with caplog.at_level(logging.WARNING, logger="tenant_integration"):
        first = manager.get_access_token()
        storage.set(f"{SESSION}:intent", '{"written-by":"another tool"}')  # put back: read again, not warned again
        manager.on_unauthorized(first)
        manager.get_access_token()

    assert tenant.refreshes == 2, "the value reads as no intent: nothing to wait for"
    warnings = [r.getMessage() for r in caplog.records if "not a refresh intent record" in r.getMessage()]
    assert warnings == [
        f"The value under {named} is not a refresh intent record (this kit did not write it); it reads as no "
        "intent, and the next refresh intent replaces it"
    ]
    # Replaced by this refresh's intent, which was deleted once its tokens were stored.
    assert storage.get(f"{SESSION}:intent") is None


def test_a_value_that_is_no_token_record_is_named_by_its_redis_key(
    redis_client: redis.Redis, redis_prefix: str
) -> None:
    manager, _ = signed_in_and_expired(RedisStorage(redis_client, prefix=redis_prefix))
    redis_client.set(f"{redis_prefix}{REDIS_SESSION}:tokens", json.dumps({"written-by": "another tool"}))

    with pytest.raises(TokenManagerError) as caught:
        manager.get_access_token()

    assert caught.value.code == "NOT_SIGNED_IN"
    assert str(caught.value) == (
        f"NOT_SIGNED_IN: the stored tokens are unreadable: the value under {redis_prefix}{REDIS_SESSION}:tokens "
        "is not a token record; signing in replaces it"
    )
