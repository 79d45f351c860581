"""The Python client's overhead per call against bare httpx, sync and async, in-process and over loopback.

Run by python-client.mjs: ``python python-client.py <url> <token> [--quick]``, with <url> a loopback
server in another process (pinned to another core) that answers ``GET /api/v1/auth/user`` to
``Authorization: Bearer <token>``.

Fair setups (tools/bench/README.md, "Fair baselines"; issue 28: the former baseline passed
``headers=`` on every call, which costs httpx about 19 %, and the kit used a static token; issue 41:
the baseline then gave httpx ``base_url=`` and a relative path, whose merge costs httpx itself about
19.5 %, while the kit sends absolute URLs):

- the kit as its README shows it: ``Client(base_url=..., auth=manager)`` with a ``TokenManager``
  (``AsyncClient`` and ``AsyncTokenManager``), default clock and storage, signed in before timing;
  its token endpoint is an ``httpx.MockTransport`` (the sign-in is not measured);
- httpx doing what the kit does per call: ``httpx.Client(headers={"Authorization": ...})``, the
  header set once on the client, then ``get`` of the absolute URL, ``raise_for_status()``, ``json()``.

Four comparisons: sync and async, each in-process (both clients on an ``httpx.MockTransport``
answering the user JSON: what the kit costs) and over loopback (the server: what a user sees);
``--in-process`` runs the first two alone. In each, rounds are paired: every contender (the kit,
httpx, and httpx again in a client of its own: the A/A contender, what the method reports for no
difference) makes CALLS calls per round, in TURNS turns of a new shuffled order each, so drift and
bursts of load hit all alike. In process the clock is the process's CPU time, over loopback wall
time. Prints one JSON line with every contender's µs/call per round; the caller takes the median of
the rounds' ratios and their middle half.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from collections.abc import Awaitable, Callable

import httpx

from tenant_integration import AsyncClient, AsyncTokenManager, Client, TokenManager

QUICK = "--quick" in sys.argv
IN_PROCESS_ONLY = "--in-process" in sys.argv
ROUNDS = 3 if QUICK else 21
CALLS = {"in-process": 300 if QUICK else 2000, "loopback": 100 if QUICK else 300}
#: Each round is cut into turns, every turn running each contender's share in a new order, so that a
#: burst of load from other programs falls on all contenders alike.
TURNS = {"in-process": 10, "loopback": 2}
#: In process, the process's CPU time (user + system: what the kit costs, leaving out the time other
#: programs held the core), as the TypeScript rows; over loopback, wall time (what a caller waits).
CLOCKS = {"in-process": time.process_time, "loopback": time.perf_counter}
WARMUP = 100 if QUICK else 300
REDIRECT = "http://127.0.0.1:53682/callback"
USER_PATH = "/api/v1/auth/user"
USER = {"id": 42, "name": "Ada Lovelace", "email": "ada@example.org", "locale": "en"}


def token_endpoint(token: str) -> httpx.MockTransport:
    """The tenant's token endpoint, in-process: every exchange answers ``token``."""

    def answer(request: httpx.Request) -> httpx.Response:
        body = {"access_token": token, "refresh_token": "rt_bench", "token_type": "Bearer", "expires_in": 900}
        return httpx.Response(200, json=body, headers={"cache-control": "no-store"})

    return httpx.MockTransport(answer)


def api(token: str) -> httpx.MockTransport:
    """The tenant's user endpoint, in-process, answering as the loopback server does."""

    def answer(request: httpx.Request) -> httpx.Response:
        if request.headers.get("authorization") != f"Bearer {token}":
            return httpx.Response(401)
        return httpx.Response(200, json=USER, headers={"cache-control": "no-store"})

    return httpx.MockTransport(answer)


def sync_contenders(
    url: str, token: str, in_process: bool
) -> tuple[dict[str, Callable[[], object]], Callable[[], None]]:
    manager = TokenManager(url, "bench", REDIRECT, ["profile:read"], transport=token_endpoint(token))
    manager.complete_authorization(f"{REDIRECT}?code=bench&state={manager.begin_authorization().state}")
    sdk = Client(base_url=url, auth=manager, transport=api(token) if in_process else None)
    # Two httpx clients alike: the second is the A/A contender, what the method reports for no difference.
    bares = [
        httpx.Client(headers={"Authorization": f"Bearer {token}"}, transport=api(token) if in_process else None)
        for _ in range(2)
    ]
    user_url = url + USER_PATH

    def bare_call(bare: httpx.Client) -> Callable[[], None]:
        def run() -> None:
            response = bare.get(user_url)
            response.raise_for_status()
            response.json()

        return run

    def close() -> None:
        sdk.close()
        for bare in bares:
            bare.close()
        manager.close()

    return {"bare": bare_call(bares[0]), "sdk": sdk.get_user, "bareAgain": bare_call(bares[1])}, close


def schedule(names: list[str], turns: int, rng: random.Random) -> list[list[str]]:
    """One round: ``turns`` turns, each running every contender's share of the calls in a new order."""
    return [rng.sample(names, len(names)) for _ in range(turns)]


def sync_rounds(url: str, token: str, in_process: bool, rng: random.Random) -> dict[str, list[float]]:
    contenders, close = sync_contenders(url, token, in_process)
    where = "in-process" if in_process else "loopback"
    calls, turns, clock = CALLS[where], TURNS[where], CLOCKS[where]
    try:
        for run in contenders.values():
            for _ in range(WARMUP):
                run()
        per_call: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(ROUNDS):
            spent = dict.fromkeys(contenders, 0.0)
            for order in schedule(list(contenders), turns, rng):
                for name in order:
                    run = contenders[name]
                    start = clock()
                    for _ in range(calls // turns):
                        run()
                    spent[name] += clock() - start
            for name, seconds in spent.items():
                per_call[name].append(seconds / calls * 1e6)
        return per_call
    finally:
        close()


async def async_rounds(url: str, token: str, in_process: bool, rng: random.Random) -> dict[str, list[float]]:
    manager = AsyncTokenManager(url, "bench", REDIRECT, ["profile:read"], transport=token_endpoint(token))
    pending = await manager.begin_authorization()
    await manager.complete_authorization(f"{REDIRECT}?code=bench&state={pending.state}")
    sdk = AsyncClient(base_url=url, auth=manager, transport=api(token) if in_process else None)
    bares = [
        httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, transport=api(token) if in_process else None)
        for _ in range(2)
    ]
    user_url = url + USER_PATH

    def bare_call(bare: httpx.AsyncClient) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            response = await bare.get(user_url)
            response.raise_for_status()
            response.json()

        return run

    contenders: dict[str, Callable[[], Awaitable[object]]] = {
        "bare": bare_call(bares[0]),
        "sdk": sdk.get_user,
        "bareAgain": bare_call(bares[1]),
    }
    where = "in-process" if in_process else "loopback"
    calls, turns, clock = CALLS[where], TURNS[where], CLOCKS[where]
    try:
        for run in contenders.values():
            for _ in range(WARMUP):
                await run()
        per_call: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(ROUNDS):
            spent = dict.fromkeys(contenders, 0.0)
            for order in schedule(list(contenders), turns, rng):
                for name in order:
                    run = contenders[name]
                    start = clock()
                    for _ in range(calls // turns):
                        await run()
                    spent[name] += clock() - start
            for name, seconds in spent.items():
                per_call[name].append(seconds / calls * 1e6)
        return per_call
    finally:
        await sdk.aclose()
        for bare in bares:
            await bare.aclose()
        await manager.aclose()


def main() -> None:
    url, token = sys.argv[1], sys.argv[2]
    rng = random.Random(7)  # noqa: S311 (an order of contenders, no secret)
    results = {
        "sync in-process": sync_rounds(url, token, True, rng),
        "async in-process": asyncio.run(async_rounds(url, token, True, rng)),
    }
    if not IN_PROCESS_ONLY:
        results["sync loopback"] = sync_rounds(url, token, False, rng)
        results["async loopback"] = asyncio.run(async_rounds(url, token, False, rng))
    print(json.dumps({"rounds": ROUNDS, "calls": CALLS, "turns": TURNS, "results": results}))


main()
