"""FileStorage and the token manager under faults (issue 27): a full disk, a corrupt or foreign token
record read by ``is_signed_in()``, a token file others could read, a token file deleted while idle.

The full disk is a real tmpfs filled to the last page (``disk`` fixture of test_file_storage.py; root).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_tenant import BASE_URL, CLIENT_ID, LIFETIME, REDIRECT_URI, Clock, FakeTenant
from tenant_integration import AsyncTokenManager, TokenManager, TokenManagerError
from tenant_integration.storage import FileStorage, FileStorageError
from test_file_storage import Disk

TOKENS = f"tenant-integration:{BASE_URL}:{CLIENT_ID}:tokens"


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    made = Disk(tmp_path / "disk")
    yield made
    made.remove()


def fill(disk: Disk) -> None:
    """Writes until the disk refuses (ENOSPC), in big pieces and then in pages, so no page is left."""
    index = 0
    for size in (64 * 1024, 4 * 1024):
        while True:
            try:
                (disk.dir / f"filler-{index}").write_bytes(bytes(size))
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                break
            index += 1


def empty(disk: Disk) -> None:
    for filler in disk.dir.glob("filler-*"):
        filler.unlink()


def lock_directories(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".lock"))


def make(tenant: FakeTenant, clock: Clock, **options: Any) -> TokenManager:
    return TokenManager(
        BASE_URL,
        CLIENT_ID,
        REDIRECT_URI,
        ["profile:read"],
        now=clock,
        transport=tenant.transport,
        retry_delay=0,
        **options,
    )


def signed_in(tenant: FakeTenant, clock: Clock, **options: Any) -> TokenManager:
    manager = make(tenant, clock, **options)
    manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
    return manager


class TestAFullDisk:
    """Issue 27: each access took about 10 s and a refresh about 30 s, because every lock directory
    was left behind with an empty owner file and waited out as stale."""

    def test_a_failed_write_leaves_no_lock_directory_and_the_next_accesses_fail_at_once(self, disk: Disk) -> None:
        path = disk.dir / "tokens.json"
        storage = FileStorage(path)
        storage.set(TOKENS, "before")
        fill(disk)
        for _ in range(3):
            started = time.monotonic()
            with pytest.raises(FileStorageError) as caught:
                storage.set(TOKENS, "after")
            assert time.monotonic() - started < 1.0
            assert caught.value.code == "IO_FAILED"
            assert str(caught.value) == f"IO_FAILED: cannot write the token file {path} (ENOSPC)"
            assert lock_directories(disk.dir) == []
        started = time.monotonic()
        assert storage.lock("refresh", lambda: storage.get(TOKENS)) == "before"
        assert time.monotonic() - started < 1.0
        assert lock_directories(disk.dir) == []
        empty(disk)
        storage.set(TOKENS, "after")
        assert storage.get(TOKENS) == "after"

    def test_no_intent_no_send_a_refresh_fails_at_once_with_storage_failed_and_goes_out_once_there_is_room(
        self, disk: Disk
    ) -> None:
        """Decision D6: the intent cannot be written, so the refresh is not sent; the lock is released,
        the stored tokens are untouched, and the next call tries again."""
        path = disk.dir / "tokens.json"
        tenant, clock = FakeTenant(), Clock()
        manager = signed_in(tenant, clock, storage=FileStorage(path))
        stored = json.loads(path.read_text())[TOKENS]
        fill(disk)
        clock.advance(LIFETIME + 1)
        for _ in range(2):
            started = time.monotonic()
            with pytest.raises(TokenManagerError) as caught:
                manager.get_access_token()
            assert time.monotonic() - started < 2.0
            assert caught.value.code == "STORAGE_FAILED"
            assert str(caught.value) == (
                "STORAGE_FAILED: the refresh intent could not be written (cannot write the token file "
                f"{path} (ENOSPC)), so the refresh was not sent; the stored tokens are unchanged and the next call "
                "tries again"
            )
            assert getattr(caught.value.cause, "code", None) == "IO_FAILED"
        assert tenant.refreshes == 0
        assert lock_directories(disk.dir) == []
        assert json.loads(path.read_text())[TOKENS] == stored
        empty(disk)
        token = manager.get_access_token()
        assert tenant.refreshes == 1
        assert json.loads(json.loads(path.read_text())[TOKENS])["access_token"] == token

    def test_full_while_the_refresh_is_in_flight_takes_no_stale_wait_and_its_tokens_are_written_once_there_is_room(
        self, disk: Disk
    ) -> None:
        path = disk.dir / "tokens.json"
        tenant, clock = FakeTenant(), Clock()
        manager = signed_in(tenant, clock, storage=FileStorage(path))
        failures: list[TokenManagerError] = []
        manager.on("storage-failed", failures.append)
        tenant.on_refresh = lambda: fill(disk)
        clock.advance(LIFETIME + 1)
        started = time.monotonic()
        token = manager.get_access_token()
        assert time.monotonic() - started < 2.0
        assert tenant.refreshes == 1
        assert [f.code for f in failures] == ["STORAGE_FAILED"]
        assert f"cannot write the token file {path} (ENOSPC)" in str(failures[0].cause)
        assert lock_directories(disk.dir) == []
        empty(disk)
        clock.advance(1.5)
        assert manager.get_access_token() == token
        assert json.loads(json.loads(path.read_text())[TOKENS])["access_token"] == token


class TestIsSignedInWithAnUnreadableRecord:
    """Issue 27: ``is_signed_in()``, the README CLI's first call, set a corrupt file aside silently."""

    def test_a_corrupt_file_is_reported_by_a_warning_and_storage_failed_naming_where_it_went(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        path = tmp_path / "tokens.json"
        path.write_text("{not json")
        path.chmod(0o600)
        manager = make(FakeTenant(), Clock(), storage=FileStorage(path))
        failures: list[TokenManagerError] = []
        manager.on("storage-failed", failures.append)
        with caplog.at_level(logging.WARNING, logger="tenant_integration"):
            assert manager.is_signed_in() is False
        (moved,) = tmp_path.glob("tokens.json.corrupt-*")
        assert not path.exists()
        assert [f.code for f in failures] == ["STORAGE_FAILED"]
        assert getattr(failures[0].cause, "code", None) == "FILE_CORRUPT"
        assert str(moved) in str(failures[0].cause)
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert any(str(path) in w and str(moved) in w for w in warnings), warnings

    async def test_the_async_manager_reports_it_too(self, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
        path = tmp_path / "tokens.json"
        path.write_text("")
        path.chmod(0o600)
        tenant = FakeTenant()
        manager = AsyncTokenManager(
            BASE_URL,
            CLIENT_ID,
            REDIRECT_URI,
            ["profile:read"],
            storage=FileStorage(path),
            transport=tenant.async_transport,
        )
        failures: list[TokenManagerError] = []
        manager.on("storage-failed", failures.append)
        with caplog.at_level(logging.WARNING, logger="tenant_integration"):
            assert await manager.is_signed_in() is False
        assert [getattr(f.cause, "code", None) for f in failures] == ["FILE_CORRUPT"]
        assert any("moved aside" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)

    def test_a_record_of_valid_json_but_the_wrong_shape_is_reported_not_taken_for_no_tokens(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        path = tmp_path / "tokens.json"
        path.write_text(json.dumps({TOKENS: json.dumps({"access": "x", "expires": 900})}))
        path.chmod(0o600)
        manager = make(FakeTenant(), Clock(), storage=FileStorage(path))
        failures: list[TokenManagerError] = []
        manager.on("storage-failed", failures.append)
        with caplog.at_level(logging.WARNING, logger="tenant_integration"):
            assert manager.is_signed_in() is False
        with pytest.raises(TokenManagerError) as caught:
            manager.get_access_token()
        assert caught.value.code == "NOT_SIGNED_IN"
        assert "there are no tokens" not in str(caught.value)
        assert "not a token record" in str(caught.value)
        assert [f.code for f in failures] == ["STORAGE_FAILED", "STORAGE_FAILED"]
        assert any("not a token record" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)

    def test_a_sign_in_replaces_the_record_of_the_wrong_shape(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        path.write_text(json.dumps({TOKENS: "[1, 2]"}))
        path.chmod(0o600)
        tenant, clock = FakeTenant(), Clock()
        manager = make(tenant, clock, storage=FileStorage(path))
        assert manager.is_signed_in() is False
        manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
        assert manager.is_signed_in() is True
        assert "access_token" in json.loads(json.loads(path.read_text())[TOKENS])


class TestATokenFileOthersCouldRead:
    def test_is_tightened_with_a_warning_that_the_tokens_were_readable_by_others(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        path = tmp_path / "tokens.json"
        FileStorage(path).set("k", "v")
        path.chmod(0o644)
        with caplog.at_level(logging.WARNING, logger="tenant_integration"):
            assert FileStorage(path).get("k") == "v"
        assert os.stat(path).st_mode & 0o777 == 0o600
        (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert warning == (
            f"the token file {path} was readable by others (mode 0644); tightened to 0600. "
            "The tokens in it may have been read: sign out and sign in again to replace them"
        )
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="tenant_integration"):
            assert FileStorage(path).get("k") == "v"
        assert caplog.records == []


class TestATokenFileDeletedWhileIdle:
    def test_is_a_sign_out_that_every_process_sees_at_the_next_expiry(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        tenant, clock = FakeTenant(), Clock()
        first = signed_in(tenant, clock, storage=FileStorage(path))
        second = make(tenant, clock, storage=FileStorage(path))
        token = first.get_access_token()
        assert second.get_access_token() == token
        path.unlink()
        # Until the expiry the tokens held in memory are served (no read of the file).
        assert first.get_access_token() == token
        clock.advance(LIFETIME + 1)
        for manager in (first, second):
            with pytest.raises(TokenManagerError) as caught:
                manager.get_access_token()
            assert caught.value.code == "NOT_SIGNED_IN"
            assert manager.is_signed_in() is False
        assert tenant.refreshes == 0
