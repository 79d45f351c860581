"""The Python rows of a server acting for many users (sessions-memory.mjs runs this in the repository's
venv and says how they are measured): the memory per cached and per dropped session of the sync
``Sessions`` (one shared transport for every session, as the kit does), and a request for a user
through ``Sessions.client(id)`` against a ``TokenManager(session_id=...)`` and a ``Client`` built by
hand, with a second ``Sessions`` as the A/A. The tenant is an ``httpx.MockTransport``.

Usage: python sessions-memory.py SESSIONS MEMORY_ROUNDS CLIENT_ROUNDS CALLS; prints one JSON line:
{"memory": {"cached": [bytes…], "dropped": [bytes…]}, "times": {"sessions": [µs…], "sessionsAgain": […],
"byHand": […]}}.
"""

from __future__ import annotations

import gc
import json
import random
import sys
import time
import tracemalloc
from itertools import count
from urllib.parse import parse_qs, urlsplit

import httpx

import tenant_integration._sync.sessions as sessions_module
from tenant_integration import Client, MemoryStorage, Sessions, TokenManager

BASE_URL = "https://acme.tenant.test"
REDIRECT = "https://app.example.org/callback"
SCOPES = ["profile:read"]
USER = b'{"id": 42, "name": "Bench User"}'


def tenant() -> httpx.MockTransport:
    """New tokens at each token request, the user at the API."""
    issued = count(1)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/oauth/token":
            n = next(issued)
            return httpx.Response(
                200,
                json={
                    "access_token": f"at_bench_{n:020d}",
                    "refresh_token": f"rt_bench_{n:020d}",
                    "token_type": "Bearer",
                    "expires_in": 3600,
                    "scope": "profile:read",
                },
            )
        return httpx.Response(200, content=USER, headers={"content-type": "application/json"})

    return httpx.MockTransport(answer)


def session_id(i: int) -> str:
    """The id of session i: an e-mail address, as many apps' user ids are."""
    return f"user{i:06d}@example.org"


def signed_in_storage(n: int, transport: httpx.MockTransport) -> MemoryStorage:
    """A memory storage holding ``n`` signed-in sessions, signed in through a Sessions then dropped."""
    storage = MemoryStorage()
    sessions = Sessions(BASE_URL, "bench", REDIRECT, SCOPES, storage=storage, transport=transport)
    for i in range(n):
        sign_in = sessions.begin_sign_in(session_id(i))
        state = parse_qs(urlsplit(sign_in.url).query)["state"][0]
        sessions.complete_sign_in(f"{REDIRECT}?code=bench&state={state}", binding=sign_in.binding)
    sessions.close()
    return storage


def traced() -> int:
    """Python's traced allocations after a full collection, in bytes."""
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


class IdleClock:
    """The sessions module's ``time``, its monotonic clock moved on at will: the idle managers are
    dropped at once instead of after a wait (which a busy machine would stretch past any bound)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.offset

    def __getattr__(self, name: str) -> object:
        return getattr(time, name)


def memory_round(n: int, clock: IdleClock) -> tuple[float, float]:
    """Bytes per cached session once each made one request, and per session once all were dropped."""
    transport = tenant()
    storage = signed_in_storage(n, transport)
    # Longer than any machine takes for the requests: the idle clock, moved on below, drops them.
    max_idle = 3600.0
    sessions = Sessions(BASE_URL, "bench", REDIRECT, SCOPES, storage=storage, transport=transport, max_idle=max_idle)
    # The one HTTP client every session's API client shares is made at the first client(): before the base.
    sessions.client("warm.up")
    base = traced()
    for i in range(n):
        sessions.client(session_id(i)).get_authenticated_user()
    cached = (traced() - base) / n
    # Managers are dropped only when another is asked for: none was, if all n are cached.
    if sessions.cached != n:
        raise SystemExit(f"the sessions were dropped while they were measured ({sessions.cached} cached)")
    clock.offset += max_idle + 1
    # The sessions object drops idle managers when another is asked for: ask for one (it stays, counted).
    sessions.manager("trigger.the.sweep")
    if sessions.cached != 1:
        raise SystemExit(f"{sessions.cached} sessions are still cached after {max_idle} s idle")
    dropped = (traced() - base) / n
    sessions.close()
    return cached, dropped


def client_rounds(n: int, rounds: int, calls: int) -> dict[str, list[float]]:
    """A request for a user, the user changing at each call: three contenders in paired rounds, µs CPU per call."""
    transport = tenant()
    storage = signed_in_storage(n, transport)
    sessions = Sessions(BASE_URL, "bench", REDIRECT, SCOPES, storage=storage, transport=transport)
    again = Sessions(BASE_URL, "bench", REDIRECT, SCOPES, storage=storage, transport=transport)
    shared = httpx.Client(transport=transport)
    position = count()

    def by_hand() -> None:
        manager = TokenManager(
            BASE_URL, "bench", REDIRECT, SCOPES, storage=storage, transport=transport,
            session_id=session_id(next(position) % n),
        )
        Client(BASE_URL, auth=manager, http_client=shared).get_authenticated_user()

    contenders = {
        "sessions": lambda: sessions.client(session_id(next(position) % n)).get_authenticated_user(),
        "sessionsAgain": lambda: again.client(session_id(next(position) % n)).get_authenticated_user(),
        "byHand": by_hand,
    }

    def per_call(name: str) -> float:
        start = time.process_time()
        for _ in range(calls):
            contenders[name]()
        return (time.process_time() - start) / calls * 1e6

    for name in contenders:  # untimed: every session's manager cached in both sessions objects
        for _ in range(max(1, n // calls)):
            per_call(name)
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        order = list(contenders)
        random.shuffle(order)
        for name in order:
            gc.collect()
            times[name].append(per_call(name))
    return times


def main() -> None:
    n, memory_rounds, rounds, calls = (int(x) for x in sys.argv[1:5])
    tracemalloc.start()
    memory: dict[str, list[float]] = {"cached": [], "dropped": []}
    clock = IdleClock()
    sessions_module.time = clock  # type: ignore[assignment]
    for round_ in range(memory_rounds + 1):
        cached, dropped = memory_round(n, clock)
        if round_ > 0:  # the first round is untimed: imports and caches warmed
            memory["cached"].append(cached)
            memory["dropped"].append(dropped)
    sessions_module.time = time
    tracemalloc.stop()
    print(json.dumps({"memory": memory, "times": client_rounds(n, rounds, calls)}))


if __name__ == "__main__":
    main()
