"""FileStorage in one process: the file format shared with the TypeScript kit, modes, durability,
faults (corrupt, foreign, unsafe, read-only), symlinks, and the lock's directory protocol.

The cross-process proofs (Python and Node processes, SIGKILL) are in test_file_storage_processes.py.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tenant_integration.errors import InvalidOptionsError
from tenant_integration.storage import FileStorage, FileStorageError, Lock, TokenStorage

KEY = "tenant-integration:https://acme.tenant.test:demo:tokens"


class Disk:
    """A small tmpfs of its own, which can be remounted read-only: root ignores file modes, so a
    chmod cannot fake a read-only directory (as packages/token-manager/src/test-support/disks.ts)."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        directory.mkdir()
        self._mount("-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(directory))

    def _mount(self, *args: str) -> None:
        result = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
        if result.returncode != 0:
            if os.environ.get("CI") == "true":
                pytest.fail(f"mount {' '.join(args)} failed (this test needs root, as CI runs): {result.stderr}")
            pytest.skip(f"mounting a tmpfs needs root: {result.stderr.strip()}")

    def read_only(self) -> None:
        self._mount("-o", "remount,ro", str(self.dir))

    def writable(self) -> None:
        self._mount("-o", "remount,rw", str(self.dir))

    def remove(self) -> None:
        subprocess.run(["umount", str(self.dir)], check=True)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    made = Disk(tmp_path / "disk")
    yield made
    made.remove()


def lock_leftovers(directory: Path) -> list[str]:
    """What a released lock may leave: the kernel lock files (kept on purpose: unlinking a flock'd file
    splits waiters across inodes), and nothing else."""
    return sorted(p.name for p in directory.iterdir() if not p.name.endswith(".flock"))


class TestBasics:
    def test_treats_an_absent_file_as_empty_storage(self, tmp_path: Path) -> None:
        storage = FileStorage(tmp_path / "tokens.json")
        assert storage.get(KEY) is None
        storage.delete(KEY)
        assert not (tmp_path / "tokens.json").exists()

    def test_reads_back_what_it_wrote_across_instances_and_forgets_deleted_keys(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        FileStorage(path).set("a", "1")
        FileStorage(path).set("b", "2")
        FileStorage(path).set("a", "3")
        assert (FileStorage(path).get("a"), FileStorage(path).get("b")) == ("3", "2")
        FileStorage(path).delete("a")
        assert FileStorage(path).get("a") is None
        assert FileStorage(path).get("b") == "2"

    def test_writes_the_typescript_format_one_compact_json_object_of_strings(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        storage = FileStorage(path)
        storage.set("k1", '{"access_token":"at"}')
        storage.set("k2", "é ✓")
        # What JSON.stringify writes: no spaces, non-ASCII as is, UTF-8.
        assert path.read_bytes() == '{"k1":"{\\"access_token\\":\\"at\\"}","k2":"é ✓"}'.encode()

    def test_reads_a_file_as_the_typescript_kit_writes_it(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        path.write_text(json.dumps({KEY: '{"a":1}', "other": "x"}, separators=(",", ":")))
        path.chmod(0o600)
        assert FileStorage(path).get(KEY) == '{"a":1}'

    def test_is_a_token_storage_whose_lock_is_on_by_default(self, tmp_path: Path) -> None:
        storage = FileStorage(tmp_path / "tokens.json")
        assert isinstance(storage, TokenStorage)
        assert isinstance(storage.lock, Lock)
        assert storage.lock("any name", lambda: 42) == 42

    def test_writes_the_file_0600_in_new_directories_0700(self, tmp_path: Path) -> None:
        path = tmp_path / "a" / "b" / "tokens.json"
        old = os.umask(0o022)
        try:
            FileStorage(path).set("k", "v")
        finally:
            os.umask(old)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
        assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o700

    def test_keeps_every_one_of_25_concurrent_writes_of_one_process_and_leaves_no_temporary_file(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "tokens.json"
        threads = [threading.Thread(target=FileStorage(path).set, args=(f"k{i}", str(i))) for i in range(25)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert json.loads(path.read_text()) == {f"k{i}": str(i) for i in range(25)}
        assert lock_leftovers(tmp_path) == ["tokens.json"]

    def test_removes_the_temporary_files_that_killed_writers_left_on_the_next_write(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        (tmp_path / "tokens.json.0123456789ab.tmp").write_text('{"half":')
        (tmp_path / "tokens.json.not-ours.tmp").write_text("kept")
        FileStorage(path).set("k", "v")
        assert lock_leftovers(tmp_path) == ["tokens.json", "tokens.json.not-ours.tmp"]

    def test_expands_the_home_directory(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("HOME", str(tmp_path))
        assert FileStorage("~/cli/tokens.json").path == str(tmp_path / "cli" / "tokens.json")

    @pytest.mark.parametrize(
        ("option", "value"),
        [("stale_after", 0), ("stale_after", float("nan")), ("lock_timeout", -1), ("lock_timeout", float("inf"))],
    )
    def test_refuses_a_bad_duration_with_invalid_options(self, tmp_path: Path, option: str, value: float) -> None:
        with pytest.raises(InvalidOptionsError) as caught:
            FileStorage(tmp_path / "t.json", **{option: value})
        assert caught.value.option == option
        assert caught.value.code == "INVALID_OPTIONS"


CORRUPT = [
    ("empty", b""),
    ("empty", b"  \n"),
    ("not valid JSON", b'{"tenant-integration:x:tokens": "rt_secret'),
    ("not valid JSON", b"\xff\xfe not text"),
    ("not valid JSON", b'{"k": NaN}'),
    ("not a JSON object", b'["rt_secret"]'),
    ("not a JSON object of strings", b'{"theme": "dark", "size": 12}'),
]


class TestCorruptOrForeignFile:
    @pytest.mark.parametrize(("what", "content"), CORRUPT)
    def test_is_moved_aside_and_kept_and_reported_once_as_file_corrupt_with_reset(
        self, tmp_path: Path, what: str, content: bytes
    ) -> None:
        path = tmp_path / "tokens.json"
        path.write_bytes(content)
        path.chmod(0o600)
        with pytest.raises(FileStorageError) as caught:
            FileStorage(path).get(KEY)
        error = caught.value
        assert error.code == "FILE_CORRUPT"
        assert error.reset is True
        assert error.path == str(path)
        assert error.moved_to is not None
        assert error.moved_to.startswith(f"{path}.corrupt-")
        assert Path(error.moved_to).read_bytes() == content
        assert (
            str(error)
            == f"FILE_CORRUPT: the token file {path} was {what}; moved aside to {error.moved_to}: sign in again"
        )
        assert "rt_secret" not in str(error)
        assert not path.exists()
        # Reported once: the storage is empty now, and a write makes a good file.
        assert FileStorage(path).get(KEY) is None
        FileStorage(path).set(KEY, "v")
        assert json.loads(path.read_text()) == {KEY: "v"}

    def test_moved_aside_name_has_the_typescript_shape(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        path.write_text("oops")
        with pytest.raises(FileStorageError) as caught:
            FileStorage(path).get(KEY)
        suffix = str(caught.value.moved_to)[len(str(path)) :]
        # `.corrupt-` + new Date().toISOString() with ":" and "." as "-" + 6 hex, as file-storage.ts.
        assert suffix[:9] == ".corrupt-"
        stamp, rand = suffix[9:].rsplit("-", 1)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z", stamp)
        assert re.fullmatch(r"[0-9a-f]{6}", rand)

    def test_is_moved_aside_by_a_write_too_which_then_writes_a_good_file(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        path.write_text("garbage")
        FileStorage(path).set(KEY, "v")
        assert json.loads(path.read_text()) == {KEY: "v"}
        assert [p.read_text() for p in tmp_path.glob("tokens.json.corrupt-*")] == ["garbage"]


class TestSymlinks:
    def test_a_symlinked_file_is_written_through_to_its_target_and_the_link_stays(self, tmp_path: Path) -> None:
        real = tmp_path / "real" / "tokens.json"
        link = tmp_path / "link.json"
        link.symlink_to(real)
        FileStorage(link).set("k", "v")
        assert link.is_symlink()
        assert json.loads(real.read_text()) == {"k": "v"}
        assert FileStorage(link).get("k") == "v"
        # The lock files are beside the target: every process locks the same file.
        assert (tmp_path / "real" / "tokens.json.write.flock").exists()

    def test_a_link_to_something_that_is_not_a_regular_file_is_refused(self, tmp_path: Path) -> None:
        (tmp_path / "dir").mkdir()
        link = tmp_path / "link.json"
        link.symlink_to(tmp_path / "dir")
        with pytest.raises(FileStorageError) as caught:
            FileStorage(link).get("k")
        assert caught.value.code == "FILE_UNSAFE"
        assert str(caught.value) == f"FILE_UNSAFE: the token file {tmp_path / 'dir'} is not a regular file"

    def test_a_loop_of_symlinks_is_refused(self, tmp_path: Path) -> None:
        (tmp_path / "a").symlink_to(tmp_path / "b")
        (tmp_path / "b").symlink_to(tmp_path / "a")
        with pytest.raises(FileStorageError) as caught:
            FileStorage(tmp_path / "a").set("k", "v")
        assert caught.value.code == "FILE_UNSAFE"
        assert "loop of symlinks" in str(caught.value)


class TestModes:
    def test_a_looser_file_is_tightened_to_0600_on_first_read(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        path.write_text('{"k":"v"}')
        path.chmod(0o644)
        assert FileStorage(path).get("k") == "v"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600

    def test_a_looser_file_that_cannot_be_tightened_is_refused_naming_the_file_and_its_mode(self, disk: Disk) -> None:
        path = disk.dir / "tokens.json"
        path.write_text('{"k":"v"}')
        path.chmod(0o644)
        disk.read_only()
        with pytest.raises(FileStorageError) as caught:
            FileStorage(path).get("k")
        assert caught.value.code == "FILE_UNSAFE"
        assert str(caught.value) == (
            f"FILE_UNSAFE: the token file {path} may be read by others (mode 0644) and cannot be tightened to 0600"
        )
        assert isinstance(caught.value.cause, OSError)


class TestReadOnlyDirectory:
    def test_a_write_fails_with_io_failed_naming_the_file_and_errno_and_nothing_is_lost(self, disk: Disk) -> None:
        path = disk.dir / "tokens.json"
        FileStorage(path).set(KEY, "the only copy")
        disk.read_only()
        storage = FileStorage(path)
        with pytest.raises(FileStorageError) as caught:
            storage.set(KEY, "new")
        assert caught.value.code == "IO_FAILED"
        assert caught.value.path == str(path)
        assert str(caught.value) == f"IO_FAILED: cannot write the token file {path} (EROFS)"
        assert isinstance(caught.value.cause, OSError)
        # Reading still works, the old value is there, and the lock still runs (process-local, as TS).
        assert storage.get(KEY) == "the only copy"
        assert storage.lock("x", lambda: "ran") == "ran"
        disk.writable()
        storage.set(KEY, "new")
        assert storage.get(KEY) == "new"

    def test_a_lock_that_cannot_be_created_runs_under_this_process_lock_only(self, disk: Disk) -> None:
        path = disk.dir / "tokens.json"
        disk.read_only()
        order: list[str] = []

        def task(name: str) -> None:
            order.append(f"{name} in")
            time.sleep(0.05)
            order.append(f"{name} out")

        threads = [threading.Thread(target=FileStorage(path).lock, args=("x", lambda n=n: task(n))) for n in "ab"]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert order in (["a in", "a out", "b in", "b out"], ["b in", "b out", "a in", "a out"])


class TestLockDirectoryProtocol:
    """The directory part of the lock, as proper-lockfile and dir-lock.ts speak it."""

    def test_holds_the_typescript_lock_directory_and_removes_it_on_release(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        seen = FileStorage(path).lock("x", lambda: (tmp_path / "tokens.json.refresh.lock").is_dir())
        assert seen is True
        assert lock_leftovers(tmp_path) == []

    def test_serializes_tasks_across_storages_of_one_file_in_threads(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        order: list[str] = []

        def task(name: str) -> None:
            order.append(f"{name} in")
            time.sleep(0.05)
            order.append(f"{name} out")

        threads = [threading.Thread(target=FileStorage(path).lock, args=("x", lambda n=n: task(n))) for n in "abc"]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(order) == 6
        assert all(order[i][0] == order[i + 1][0] and order[i].endswith("in") for i in range(0, 6, 2))

    def test_fails_with_lock_timeout_naming_the_lock_while_another_process_keeps_it_fresh(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        # What a live TypeScript holder looks like: the lock directory, with a fresh mtime.
        (tmp_path / "tokens.json.refresh.lock").mkdir()
        with pytest.raises(FileStorageError) as caught:
            FileStorage(path, lock_timeout=0.3).lock("x", lambda: "never")
        assert caught.value.code == "LOCK_TIMEOUT"
        assert caught.value.path == f"{path}.refresh.lock"
        assert (
            str(caught.value) == f"LOCK_TIMEOUT: the lock {path}.refresh.lock stayed held for 0.3 s by another process"
        )

    def test_takes_over_a_lock_directory_whose_holder_stopped_touching_it_for_stale_after(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        lock = tmp_path / "tokens.json.refresh.lock"
        lock.mkdir()
        old = time.time() - 5
        os.utime(lock, (old, old))
        assert FileStorage(path, stale_after=2, lock_timeout=1).lock("x", lambda: "taken over") == "taken over"
        assert lock_leftovers(tmp_path) == []

    def test_a_steal_gate_left_by_a_killed_stealer_is_cleared_once_stale(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        old = time.time() - 5
        for name in ("tokens.json.refresh.lock", "tokens.json.refresh.lock.steal"):
            (tmp_path / name).mkdir()
            os.utime(tmp_path / name, (old, old))
        assert FileStorage(path, stale_after=2, lock_timeout=2).lock("x", lambda: "taken over") == "taken over"
        assert lock_leftovers(tmp_path) == []

    def test_a_stale_directory_is_not_taken_over_while_the_steal_gate_is_fresh(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        old = time.time() - 5
        (tmp_path / "tokens.json.refresh.lock").mkdir()
        os.utime(tmp_path / "tokens.json.refresh.lock", (old, old))
        (tmp_path / "tokens.json.refresh.lock.steal").mkdir()  # another process is taking it over right now
        with pytest.raises(FileStorageError) as caught:
            FileStorage(path, stale_after=2, lock_timeout=0.3).lock("x", lambda: "never")
        assert caught.value.code == "LOCK_TIMEOUT"

    def test_a_holder_touches_its_directory_so_it_never_looks_stale(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        lock = tmp_path / "tokens.json.refresh.lock"
        mtimes: list[float] = []
        ages: list[float] = []

        def task() -> None:
            # stale_after 2 s: touched every second (max(stale/4, 1 s)); held past the stale time.
            for _ in range(6):
                mtime = lock.stat().st_mtime
                mtimes.append(mtime)
                ages.append(time.time() - mtime)
                time.sleep(0.5)

        FileStorage(path, stale_after=2).lock("x", task)
        assert len(set(mtimes)) >= 2
        assert all(age < 2 for age in ages), ages

    def test_a_holder_whose_directory_was_taken_over_leaves_the_new_owners_lock_alone(self, tmp_path: Path) -> None:
        path = tmp_path / "tokens.json"
        lock = tmp_path / "tokens.json.refresh.lock"

        storage = FileStorage(path, stale_after=2)
        new_owner = '{"pid":1,"host":"elsewhere","id":"theirs","since":0}'

        def task() -> list[bool]:
            held = [storage.lock.is_held("x")]  # type: ignore[attr-defined]
            # This process was frozen past the stale time and a TypeScript process took the lock over.
            (lock / "owner").unlink()
            lock.rmdir()
            lock.mkdir()
            (lock / "owner").write_text(new_owner)
            os.utime(lock, (time.time() + 1, time.time() + 1))
            return [*held, storage.lock.is_held("x")]  # type: ignore[attr-defined]

        assert storage.lock("x", task) == [True, False]
        assert lock.is_dir()
        assert (lock / "owner").read_text() == new_owner
