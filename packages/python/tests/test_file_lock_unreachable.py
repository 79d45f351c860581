"""The lock directory of the token file on a disk that stops answering (issue 36: a network disk): a
holder that lets its lock go while the disk does not answer cannot remove the directory, which names
it, a live owner, that no other process may take over; it removes it itself once the disk answers. The
outage is a symbolic link swapped, in one rename, for a link to a regular file: every access under it
fails (ENOTDIR), as the conformance suite's ``disk: unreachable`` does.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from tenant_integration.storage._dir_lock import hold


class NetworkDisk:
    """``state``, a link to the directory ``disk``, which :meth:`away` makes unreachable and :meth:`back` reachable."""

    def __init__(self, root: Path) -> None:
        self.disk = root / "disk"
        self.dead = root / "unreachable"
        self.state = root / "state"
        self.disk.mkdir()
        self.dead.write_text("")
        self.back()

    def _link(self, target: Path) -> None:
        following = self.state.with_name("state.next")
        following.symlink_to(target)
        following.rename(self.state)

    def away(self) -> None:
        self._link(self.dead)

    def back(self) -> None:
        self._link(self.disk)


def test_a_lock_let_go_while_the_disk_does_not_answer_is_removed_by_its_holder_once_it_answers(tmp_path: Path) -> None:
    disk = NetworkDisk(tmp_path)
    with hold(str(disk.state / "tokens.json.refresh"), stale_after=2, timeout=3):
        disk.away()
    disk.back()
    # Left behind, naming this live process: never taken over by a TypeScript process meanwhile.
    assert os.path.isdir(disk.disk / "tokens.json.refresh.lock")
    time.sleep(1.5)
    assert not os.path.exists(disk.disk / "tokens.json.refresh.lock")


def test_a_lock_let_go_while_the_disk_does_not_answer_is_taken_again_at_once_by_its_holder(tmp_path: Path) -> None:
    disk = NetworkDisk(tmp_path)
    with hold(str(disk.state / "tokens.json.refresh"), stale_after=2, timeout=3):
        disk.away()
    disk.back()
    # Before, it waited for itself, a live owner, and failed with LOCK_TIMEOUT.
    with hold(str(disk.state / "tokens.json.refresh"), stale_after=2, timeout=3) as held:
        assert held.is_held()
