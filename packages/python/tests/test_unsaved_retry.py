"""The background write of tokens whose write failed (spec/token-store/README.md, step 7; issue 36):
a holder whose rotated tokens could not be stored writes them again every second, even when no call
comes, until they are stored. Others honour its intent and wait for exactly this write, and its beats
tell them it lives, so a retry that stops early leaves every other process waiting (or, without beats,
presenting the rotated-away token)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from fake_tenant import BASE_URL, CLIENT_ID, LIFETIME, REDIRECT_URI, FakeTenant, manager_of, signed_in_to
from tenant_integration import AsyncTokenManager
from tenant_integration.storage.file import FileStorage

T = TypeVar("T")
TOKENS = f"tenant-integration:{BASE_URL}:{CLIENT_ID}:tokens"


class UnwritableTokens(FileStorage):
    """A token file whose writes of the tokens fail while ``failing`` is set (a storage outage)."""

    failing = False

    def set(self, key: str, value: str) -> None:
        if key == TOKENS and self.failing:
            raise OSError(5, "Input/output error")
        super().set(key, value)


class SlowRelease:
    """The token file's lock, whose release takes ``delay`` seconds while it is set (a Redis lock whose
    compare-and-delete waits out a hung node): the pass under the lock ends that much later."""

    def __init__(self, storage: FileStorage) -> None:
        self._lock: Any = storage.lock  # the file's lock takes ``until``, which the Lock protocol leaves out
        self.delay = 0.0

    def __call__(self, name: str, task: Callable[[], T], *, until: Callable[[], bool] | None = None) -> T:
        result: T = self._lock(name, task, until=until)
        time.sleep(self.delay)
        return result


class Wall:
    """The wall clock, moved forward by ``offset`` seconds (the background retry runs on real time)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


def stored_refresh_token(storage: FileStorage) -> str:
    raw = storage.get(TOKENS)
    assert raw is not None
    token: str = json.loads(raw)["refresh_token"]
    return token


def setup(tmp_path: Path) -> tuple[FakeTenant, UnwritableTokens, SlowRelease, Wall, dict[str, Any]]:
    tenant = FakeTenant()
    storage = UnwritableTokens(tmp_path / "tokens.json")
    clock = Wall()
    signed_in_to(tenant, now=clock, storage=storage)
    lock = SlowRelease(storage)
    options: dict[str, Any] = {"now": clock, "storage": storage, "lock": lock}
    return tenant, storage, lock, clock, options


def test_the_write_is_retried_until_stored_even_when_a_retry_joins_the_pass_that_failed_it(tmp_path: Path) -> None:
    """The pass that failed to write the tokens is still under way (its lock's release hangs) when the
    retry comes a second later: the retry gets that pass's token, and the write is tried again later."""
    tenant, storage, lock, clock, options = setup(tmp_path)
    manager = manager_of(tenant, **options)
    clock.offset = LIFETIME + 1
    storage.failing = True
    lock.delay = 1.5
    token = manager.get_access_token()
    storage.failing = False
    lock.delay = 0.0
    rotated = tenant.grants("refresh_token")
    assert len(rotated) == 1
    deadline = time.monotonic() + 10
    while stored_refresh_token(storage) == rotated[0].body["refresh_token"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stored_refresh_token(storage) != rotated[0].body["refresh_token"]
    assert manager.get_access_token() == token
    assert len(tenant.grants("refresh_token")) == 1


async def test_the_async_manager_retries_the_write_until_stored_too(tmp_path: Path) -> None:
    tenant, storage, lock, clock, options = setup(tmp_path)
    manager = AsyncTokenManager(
        BASE_URL, CLIENT_ID, REDIRECT_URI, ["profile:read"], transport=tenant.async_transport, **options
    )
    clock.offset = LIFETIME + 1
    storage.failing = True
    lock.delay = 1.5
    token = await manager.get_access_token()
    storage.failing = False
    lock.delay = 0.0
    presented = tenant.grants("refresh_token")[0].body["refresh_token"]
    for _ in range(200):  # up to 10 s: the retries come every second
        if stored_refresh_token(storage) != presented:
            break
        await asyncio.sleep(0.05)
    assert stored_refresh_token(storage) != presented
    assert await manager.get_access_token() == token
    assert len(tenant.grants("refresh_token")) == 1
