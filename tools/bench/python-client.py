"""The Python client's overhead per call against bare httpx sending the same Authorization header.

Run by python-client.mjs: ``python python-client.py <url> <token>``, with <url> a loopback server in
another process (pinned to another core). Both contenders call ``GET /api/v1/auth/user`` and parse the
JSON body: the SDK's ``Client`` (with a static token source), and a bare ``httpx.Client`` with the
header set by hand. Rounds are paired (both contenders run in each round, in a shuffled order) so that
drift hits both alike; each round gives one ratio, and the median ratio counts. Prints one JSON line.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from collections.abc import Callable

import httpx

from tenant_integration import Client

CALLS = 300
ROUNDS = 21
WARMUP = 300


class StaticToken:
    """A token source that always gives the same token (the bench measures the client, not the manager)."""

    def __init__(self, token: str) -> None:
        self._token = token

    def get_access_token(self) -> str:
        return self._token


def main() -> None:
    url, token = sys.argv[1], sys.argv[2]
    bare = httpx.Client(base_url=url, trust_env=False)
    sdk = Client(base_url=url, auth=StaticToken(token))
    header = {"Authorization": f"Bearer {token}"}

    def run_bare() -> None:
        response = bare.get("/api/v1/auth/user", headers=header)
        response.raise_for_status()
        response.json()

    def run_sdk() -> None:
        sdk.get_user()

    contenders: dict[str, Callable[[], None]] = {"bare": run_bare, "sdk": run_sdk}
    for run in contenders.values():
        for _ in range(WARMUP):
            run()
    wall: dict[str, list[float]] = {name: [] for name in contenders}
    cpu: dict[str, list[float]] = {name: [] for name in contenders}
    rng = random.Random(7)  # noqa: S311 (an order of contenders, no secret)
    for _ in range(ROUNDS):
        order = list(contenders)
        rng.shuffle(order)
        for name in order:
            run = contenders[name]
            wall_start, cpu_start = time.perf_counter(), time.process_time()
            for _ in range(CALLS):
                run()
            cpu[name].append((time.process_time() - cpu_start) / CALLS * 1e6)
            wall[name].append((time.perf_counter() - wall_start) / CALLS * 1e6)

    def overhead(times: dict[str, list[float]]) -> float:
        return statistics.median(s / b - 1 for s, b in zip(times["sdk"], times["bare"], strict=True)) * 100

    print(
        json.dumps(
            {
                "rounds": ROUNDS,
                "calls": CALLS,
                "wallOverheadPct": overhead(wall),
                "cpuOverheadPct": overhead(cpu),
                "sdkWallUs": statistics.median(wall["sdk"]),
                "bareWallUs": statistics.median(wall["bare"]),
                "sdkCpuUs": statistics.median(cpu["sdk"]),
                "bareCpuUs": statistics.median(cpu["bare"]),
            }
        )
    )
    sdk.close()
    bare.close()


main()
