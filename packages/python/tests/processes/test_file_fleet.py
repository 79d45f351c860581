"""THE promise of the file storage, shown with real processes: Python processes sharing one token file,
each with its own token manager and ``FileStorage`` (tests/processes/worker.py), released at the same
instant after the access token expired, against the sandbox tenant (a real process) that rotates
refresh tokens and revokes the whole session when a rotated-away one comes back. Every trial must make
exactly one refresh, and every process must get the user.

The 20 processes are started once and serve every trial (a fleet whose tokens expire again and
again): N = 2, 5 and 20 of them are released together, so the ones left idle meet tokens refreshed
by others several times over when their turn comes.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tenant_integration.storage.file import FileStorage
from tenant_integration.testing import SandboxProcess

from .fleet import (
    CLIENT_ID,
    DEMO_USER_ID,
    REDIRECT_URI,
    Member,
    again,
    expire,
    refresh_outcomes,
    release_together,
    served,
    sign_in,
    start_fleet,
    stop_fleet,
)

TRIALS = 20
POOL = 20


@pytest.fixture(scope="module")
def fleet(sandbox: SandboxProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Member]]:
    """20 warmed-up Python processes on one token file, signed in once by this process."""
    token_file = tmp_path_factory.mktemp("file-fleet") / "state" / "tokens.json"
    sign_in(sandbox, FileStorage(token_file))
    env = {
        "STORAGE": "file",
        "TOKEN_FILE": str(token_file),
        "TENANT_URL": sandbox.url,
        "CLIENT_ID": CLIENT_ID,
        "REDIRECT_URI": REDIRECT_URI,
        "CLOCK_OFFSET_MS": str(round(sandbox.clock.offset_seconds * 1000)),
    }
    members = start_fleet("python", POOL, env)
    yield members
    stop_fleet(members)


@pytest.mark.parametrize("size", [2, 5, 20])
def test_n_processes_released_together_after_expiry_make_one_refresh_and_all_get_the_user(
    size: int, sandbox: SandboxProcess, fleet: list[Member]
) -> None:
    members = fleet[:size]
    for trial in range(1, TRIALS + 1):
        label = f"N={size}, trial {trial}"
        seq = sandbox.last_seq()
        results = release_together(members, expire(sandbox))
        assert served(results) == [], label
        assert {r["userId"] for r in results} == {DEMO_USER_ID}, label
        assert refresh_outcomes(sandbox, seq) == ["ok"], label
        assert [r["refreshed"] for r in results].count(True) == 1, label
        # A later call works from memory: no further refresh.
        later = again(members)
        assert served(later) == [], label
        assert not any(r["refreshed"] for r in later), label
        assert refresh_outcomes(sandbox, seq) == ["ok"], label


def test_a_process_left_idle_through_several_refreshes_reads_the_latest_tokens(
    sandbox: SandboxProcess, fleet: list[Member]
) -> None:
    seq = sandbox.last_seq()
    # One process alone goes through three expiries: three rotations the last one of the pool sleeps through...
    for _ in range(3):
        assert served(release_together(fleet[:1], expire(sandbox))) == []
    # ...whose memory now holds a refresh token rotated away three times, which it must never present:
    # on the same clock it reads the stored tokens and refreshes nothing.
    results = release_together(fleet[-1:], round(sandbox.clock.offset_seconds * 1000))
    assert served(results) == []
    assert results[0]["refreshed"] is False
    assert refresh_outcomes(sandbox, seq) == ["ok", "ok", "ok"]
