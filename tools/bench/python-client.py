"""The Python client's overhead per call against bare httpx, sync and async, in-process and over loopback.

Run by python-client.mjs: ``python python-client.py <url> <token> [--quick]``, with <url> a loopback
server in another process (pinned to another core) that answers ``GET /api/v1/auth/user`` to
``Authorization: Bearer <token>``.

Fair setups (tools/bench/README.md, "Fair baselines"; issue 28: the former baseline passed
``headers=`` on every call, which costs httpx about 19 %, and the kit used a static token):

- the kit as its README shows it: ``Client(base_url=..., auth=manager)`` with a ``TokenManager``
  (``AsyncClient`` and ``AsyncTokenManager``), default clock and storage, signed in before timing;
  its token endpoint is an ``httpx.MockTransport`` (the sign-in is not measured);
- httpx as its README shows it: ``httpx.Client(base_url=..., headers={"Authorization": ...})``, the
  header set once on the client, then ``get``, ``raise_for_status()``, ``json()``.

Four comparisons: sync and async, each in-process (both clients on an ``httpx.MockTransport``
answering the user JSON: what the kit costs) and over loopback (the server: what a user sees). In
each, rounds are paired: both contenders run CALLS calls in each round, in a shuffled order, so drift
hits both alike. Prints one JSON line with every contender's µs/call per round (wall time); the
caller takes the median of the rounds' ratios.
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
ROUNDS = 3 if QUICK else 21
CALLS = {"in-process": 300 if QUICK else 2000, "loopback": 100 if QUICK else 300}
WARMUP = 100 if QUICK else 300
REDIRECT = "http://127.0.0.1:53682/callback"
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


def sync_contenders(url: str, token: str, in_process: bool) -> tuple[dict[str, Callable[[], None]], Callable[[], None]]:
    manager = TokenManager(url, "bench", REDIRECT, ["profile:read"], transport=token_endpoint(token))
    manager.complete_authorization(f"{REDIRECT}?code=bench&state={manager.begin_authorization().state}")
    sdk = Client(base_url=url, auth=manager, transport=api(token) if in_process else None)
    bare = httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {token}"}, transport=api(token) if in_process else None
    )

    def run_bare() -> None:
        response = bare.get("/api/v1/auth/user")
        response.raise_for_status()
        response.json()

    def run_sdk() -> None:
        sdk.get_user()

    def close() -> None:
        sdk.close()
        bare.close()
        manager.close()

    return {"bare": run_bare, "sdk": run_sdk}, close


def sync_rounds(url: str, token: str, in_process: bool, rng: random.Random) -> dict[str, list[float]]:
    contenders, close = sync_contenders(url, token, in_process)
    calls = CALLS["in-process" if in_process else "loopback"]
    try:
        for run in contenders.values():
            for _ in range(WARMUP):
                run()
        wall: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(ROUNDS):
            order = list(contenders)
            rng.shuffle(order)
            for name in order:
                run = contenders[name]
                start = time.perf_counter()
                for _ in range(calls):
                    run()
                wall[name].append((time.perf_counter() - start) / calls * 1e6)
        return wall
    finally:
        close()


async def async_rounds(url: str, token: str, in_process: bool, rng: random.Random) -> dict[str, list[float]]:
    manager = AsyncTokenManager(url, "bench", REDIRECT, ["profile:read"], transport=token_endpoint(token))
    pending = await manager.begin_authorization()
    await manager.complete_authorization(f"{REDIRECT}?code=bench&state={pending.state}")
    sdk = AsyncClient(base_url=url, auth=manager, transport=api(token) if in_process else None)
    bare = httpx.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {token}"}, transport=api(token) if in_process else None
    )

    async def run_bare() -> None:
        response = await bare.get("/api/v1/auth/user")
        response.raise_for_status()
        response.json()

    async def run_sdk() -> None:
        await sdk.get_user()

    contenders: dict[str, Callable[[], Awaitable[None]]] = {"bare": run_bare, "sdk": run_sdk}
    calls = CALLS["in-process" if in_process else "loopback"]
    try:
        for run in contenders.values():
            for _ in range(WARMUP):
                await run()
        wall: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(ROUNDS):
            order = list(contenders)
            rng.shuffle(order)
            for name in order:
                run = contenders[name]
                start = time.perf_counter()
                for _ in range(calls):
                    await run()
                wall[name].append((time.perf_counter() - start) / calls * 1e6)
        return wall
    finally:
        await sdk.aclose()
        await bare.aclose()
        await manager.aclose()


def main() -> None:
    url, token = sys.argv[1], sys.argv[2]
    rng = random.Random(7)  # noqa: S311 (an order of contenders, no secret)
    results = {
        "sync in-process": sync_rounds(url, token, True, rng),
        "async in-process": asyncio.run(async_rounds(url, token, True, rng)),
        "sync loopback": sync_rounds(url, token, False, rng),
        "async loopback": asyncio.run(async_rounds(url, token, False, rng)),
    }
    print(json.dumps({"rounds": ROUNDS, "calls": CALLS, "results": results}))


main()
