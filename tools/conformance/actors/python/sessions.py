"""The sessions feature of the Python actor (``spec/conformance/PROTOCOL.md``, "Sessions"): the kit's
``Sessions`` (target ``python``) or ``AsyncSessions`` (``python-async``) beside the actor's manager, on the
same storage, serving the sessions a sign-in or call command names. Each session signs in as its own
sandbox user (``sandbox_user``), and each call checks that the tenant answers a session's token with
that session's user. The Go actor's ``sessions.go``, command for command.

Never prints a token, code, verifier, state or binding.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote, urljoin

import httpx

from tenant_integration import AsyncSessions, HttpError, RunningTimeTransport, Sessions

Message = dict[str, Any]

#: How many sessions one actor serves at once for a command: a server's users come together after an
#: expiry. Each call under way holds a connection of the Redis client's pool, and one waiting for a
#: session's lock one more: 32 keeps them within redis-py's default pool of 100 (the README's "Size
#: the Redis connection pool"). Their requests share CONNECTIONS_PER_TENANT connections to the tenant,
#: as a server's pool to one tenant would: a few hundred connections opened at one instant overflow
#: the sandbox's accept queue, and the connections reset are no test of the kit.
SESSIONS_AT_ONCE = 32
#: The most connections the sessions open to the tenant (the Go actor's bound).
CONNECTIONS_PER_TENANT = 32
#: How many sign-ins of a command are in flight at once.
SIGN_INS_AT_ONCE = 16
#: The code every call of a sessions object gives an id that would break a key.
INVALID_SESSION_ID = "INVALID_SESSION_ID"
#: The pool of the sessions' connections to the tenant.
LIMITS = httpx.Limits(max_connections=CONNECTIONS_PER_TENANT, max_keepalive_connections=CONNECTIONS_PER_TENANT)


class SessionsActorError(Exception):
    """A failure of the actor's sessions, with a protocol ``code``: a malformed command, or the first of
    a command's sessions that failed (its kit's code)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class Counter:
    """The refreshes the tenant answered 200 on the sessions' requests."""

    def __init__(self, is_refresh: Callable[[httpx.Request], bool]) -> None:
        self.is_refresh = is_refresh
        self.refreshes = 0

    def saw(self, response: httpx.Response, refresh: bool) -> None:
        if refresh and response.status_code == 200:
            self.refreshes += 1


class NamingTransport(httpx.BaseTransport):
    """The sessions' requests: each names the actor (``Sandbox-Actor``) and nothing else is added; no
    fault (``arm`` is for the actor's manager). Counts the refreshes answered."""

    def __init__(self, header: str, name: str, counter: Counter) -> None:
        # As an application's own transport must, to keep the timeout counting only running time.
        self._inner = RunningTimeTransport(limits=LIMITS)
        self._header, self._name, self._counter = header, name, counter

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.headers[self._header] = self._name
        refresh = self._counter.is_refresh(request)
        response = self._inner.handle_request(request)
        self._counter.saw(response, refresh)
        return response

    def close(self) -> None:
        self._inner.close()


class AsyncNamingTransport(httpx.AsyncBaseTransport):
    """:class:`NamingTransport` for ``AsyncSessions``."""

    def __init__(self, header: str, name: str, counter: Counter) -> None:
        self._inner = httpx.AsyncHTTPTransport(limits=LIMITS)
        self._header, self._name, self._counter = header, name, counter

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.headers[self._header] = self._name
        refresh = self._counter.is_refresh(request)
        response = await self._inner.handle_async_request(request)
        self._counter.saw(response, refresh)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def sessions_of(command: Message) -> list[tuple[str, str]] | None:
    """A command's ``sessions`` as ``(id, user)`` pairs; ``None`` when it has none."""
    if "sessions" not in command:
        return None
    listed = command["sessions"]
    if (
        not isinstance(listed, list)
        or not listed
        or not all(isinstance(s, dict) and isinstance(s.get("id"), str) and s.get("user") for s in listed)
    ):
        raise SessionsActorError("UNEXPECTED", '"sessions" must be a non-empty list of {"id","user"}')
    return [(s["id"], str(s["user"])) for s in listed]


def ids_of(command: Message) -> list[str]:
    """A ``refuse-ids`` command's ``ids``."""
    ids = command.get("ids")
    if not isinstance(ids, list) or not ids:
        raise SessionsActorError("UNEXPECTED", '"ids" must be a non-empty list of strings')
    return [str(i) for i in ids]


def first_failure(failures: list[tuple[str, BaseException]], of: int) -> SessionsActorError:
    """The answer to a command some of whose sessions failed: the first failure's kit code, how many failed."""
    session_id, error = failures[0]
    code = getattr(error, "code", None)
    return SessionsActorError(
        code if isinstance(code, str) else "UNEXPECTED",
        f"{len(failures)} of {of} sessions failed; the first: session {session_id}: {error}",
    )


def approved(authorize_url: str, user: str) -> str:
    """The authorize URL as the sandbox's ``user`` (the sandbox approves at once)."""
    return f"{authorize_url}&sandbox_user={quote(user, safe='')}"


def callback_of(answer: httpx.Response) -> str:
    """The callback URL the authorize endpoint redirects to (never printed: it holds the code and state)."""
    location = answer.headers.get("location")
    if answer.status_code not in (302, 303) or not location:
        raise SessionsActorError(
            "UNEXPECTED", f"the authorize request was answered {answer.status_code} without a redirect"
        )
    return urljoin(str(answer.request.url), str(location))


def user_id(user: Mapping[str, Any]) -> str:
    return str(user.get("id"))


def code_of(error: BaseException | None) -> str:
    """The kit's code of a completion's outcome: ``accepted`` when it succeeded."""
    if error is None:
        return "accepted"
    code = getattr(error, "code", None)
    return code if isinstance(code, str) else "UNEXPECTED"


def sessions_options(config: Any, storage: Any, lock: Any, now: Callable[[], float]) -> dict[str, Any]:
    """The options of the actor's sessions, as its manager's: the storage itself (its lock per session,
    its pending sign-ins by state), its ``"lock": "none"`` replacement through ``lock``."""
    options: dict[str, Any] = {"storage": storage, "now": now}
    if lock is not None:
        options["lock"] = lock
    if config.request_timeout is not None:
        options["timeout"] = config.request_timeout
    if config.intent_wait is not None:
        options["intent_wait"] = config.intent_wait
    return options


class SyncSessionsFeature:
    """The sessions of target ``python``: each command's sessions served by a pool of threads."""

    def __init__(self, config: Any, options: Mapping[str, Any], http: httpx.Client, counter: Counter, header: str):
        self._name = config.name
        self._http = http
        self._counter = counter
        transport = NamingTransport(header, config.name, counter)
        base = (config.tenant, config.client_id, config.redirect_uri, list(config.scopes))
        self.sessions = Sessions(*base, **options, transport=transport)

    def _each(self, listed: Iterable[tuple[str, str]], limit: int, task: Callable[[str, str], None]) -> list[Any]:
        def run(pair: tuple[str, str]) -> tuple[str, BaseException] | None:
            try:
                task(*pair)
            except Exception as error:
                return (pair[0], error)
            return None

        with ThreadPoolExecutor(max_workers=limit, thread_name_prefix="session") as pool:
            return [failed for failed in pool.map(run, listed) if failed is not None]

    def _approve(self, url: str, user: str) -> str:
        return callback_of(self._http.get(approved(url, user)))

    def sign_in(self, listed: list[tuple[str, str]]) -> Message:
        def one(session_id: str, user: str) -> None:
            begun = self.sessions.begin_sign_in(session_id)
            callback = self._approve(begun.url, user)
            self.sessions.complete_sign_in(callback, binding=begun.binding, session_id=session_id)

        failures = self._each(listed, SIGN_INS_AT_ONCE, one)
        if failures:
            raise first_failure(failures, len(listed))
        return {"signedIn": len(listed)}

    def call(self, listed: list[tuple[str, str]]) -> Message:
        before = self._counter.refreshes
        statuses: list[int] = []
        crossed: list[Message] = []

        def one(session_id: str, user: str) -> None:
            try:
                got = user_id(self.sessions.client(session_id).get_user())
            except HttpError as error:
                statuses.append(error.status)
                return
            if got != user:
                crossed.append({"id": session_id, "user": user, "got": got})

        failures = self._each(listed, SESSIONS_AT_ONCE, one)
        if failures:
            raise first_failure(failures, len(listed))
        status = statuses[0] if statuses else 200
        return {
            "status": status,
            "refreshed": self._counter.refreshes > before,
            "sessions": len(listed),
            "crossed": crossed,
        }

    def refuse_ids(self, command: Message) -> Message:
        refused, accepted = 0, []
        for session_id in ids_of(command):
            if all(refuses(call) for call in calls_taking(self.sessions, session_id)):
                refused += 1
            else:
                accepted.append(session_id)
        return {"refused": refused, "accepted": accepted}

    def replay_callback(self, command: Message) -> Message:
        session_id = f"replayed.{self._name}"
        begun = self.sessions.begin_sign_in(session_id)
        callback = self._approve(begun.url, str(command.get("user")))
        other = attempt(
            lambda: self.sessions.complete_sign_in(callback, binding=another_browser(), session_id=session_id)
        )
        own = attempt(lambda: self.sessions.complete_sign_in(callback, binding=begun.binding, session_id=session_id))
        return {"refused": code_of(other), "after": code_of(own), "signedIn": self.sessions.is_signed_in(session_id)}

    def close(self) -> None:
        """Closes the sessions: every session's manager (its intent's beats and retried writes stop),
        then the shared connections."""
        self.sessions.close()


class AsyncSessionsFeature:
    """The sessions of target ``python-async``: each command's sessions as tasks, a bounded number at once."""

    def __init__(self, config: Any, options: Mapping[str, Any], http: httpx.AsyncClient, counter: Counter, header: str):
        self._name = config.name
        self._http = http
        self._counter = counter
        transport = AsyncNamingTransport(header, config.name, counter)
        base = (config.tenant, config.client_id, config.redirect_uri, list(config.scopes))
        self.sessions = AsyncSessions(*base, **options, transport=transport)

    async def _each(
        self, listed: Iterable[tuple[str, str]], limit: int, task: Callable[[str, str], Awaitable[None]]
    ) -> list[Any]:
        gate = asyncio.Semaphore(limit)

        async def run(session_id: str, user: str) -> tuple[str, BaseException] | None:
            async with gate:
                try:
                    await task(session_id, user)
                except Exception as error:
                    return (session_id, error)
                return None

        outcomes = await asyncio.gather(*(run(*pair) for pair in listed))
        return [failed for failed in outcomes if failed is not None]

    async def _approve(self, url: str, user: str) -> str:
        return callback_of(await self._http.get(approved(url, user)))

    async def sign_in(self, listed: list[tuple[str, str]]) -> Message:
        async def one(session_id: str, user: str) -> None:
            begun = await self.sessions.begin_sign_in(session_id)
            callback = await self._approve(begun.url, user)
            await self.sessions.complete_sign_in(callback, binding=begun.binding, session_id=session_id)

        failures = await self._each(listed, SIGN_INS_AT_ONCE, one)
        if failures:
            raise first_failure(failures, len(listed))
        return {"signedIn": len(listed)}

    async def call(self, listed: list[tuple[str, str]]) -> Message:
        before = self._counter.refreshes
        statuses: list[int] = []
        crossed: list[Message] = []

        async def one(session_id: str, user: str) -> None:
            try:
                got = user_id(await self.sessions.client(session_id).get_user())
            except HttpError as error:
                statuses.append(error.status)
                return
            if got != user:
                crossed.append({"id": session_id, "user": user, "got": got})

        failures = await self._each(listed, SESSIONS_AT_ONCE, one)
        if failures:
            raise first_failure(failures, len(listed))
        status = statuses[0] if statuses else 200
        return {
            "status": status,
            "refreshed": self._counter.refreshes > before,
            "sessions": len(listed),
            "crossed": crossed,
        }

    async def refuse_ids(self, command: Message) -> Message:
        refused, accepted = 0, []
        for session_id in ids_of(command):
            if all([await refuses_async(call) for call in calls_taking(self.sessions, session_id)]):
                refused += 1
            else:
                accepted.append(session_id)
        return {"refused": refused, "accepted": accepted}

    async def replay_callback(self, command: Message) -> Message:
        session_id = f"replayed.{self._name}"
        begun = await self.sessions.begin_sign_in(session_id)
        callback = await self._approve(begun.url, str(command.get("user")))
        other = await attempt_async(
            self.sessions.complete_sign_in(callback, binding=another_browser(), session_id=session_id)
        )
        own = await attempt_async(
            self.sessions.complete_sign_in(callback, binding=begun.binding, session_id=session_id)
        )
        signed_in = await self.sessions.is_signed_in(session_id)
        return {"refused": code_of(other), "after": code_of(own), "signedIn": signed_in}

    async def aclose(self) -> None:
        """:meth:`SyncSessionsFeature.close` for ``AsyncSessions``."""
        await self.sessions.aclose()


def calls_taking(s: Sessions | AsyncSessions, session_id: str) -> list[Callable[[], object]]:
    """Every call of a sessions object that takes a session id, given ``session_id`` (a completion with
    no callback to find: the id is checked first)."""
    return [
        lambda: s.manager(session_id),
        lambda: s.begin_sign_in(session_id),
        lambda: s.complete_sign_in(s.redirect_uri, binding=None, session_id=session_id),
        lambda: s.client(session_id),
        lambda: s.token_source(session_id),
        lambda: s.is_signed_in(session_id),
        lambda: s.get_access_token(session_id),
        lambda: s.sign_out(session_id),
        lambda: s.revoke(session_id),
    ]


def another_browser() -> str:
    """A binding of another browser: 32 random bytes, base64url, as a kit makes one."""
    return secrets.token_urlsafe(32)


def refuses(call: Callable[[], object]) -> bool:
    """Whether ``call`` fails with ``INVALID_SESSION_ID``."""
    try:
        call()
    except Exception as error:
        return getattr(error, "code", None) == INVALID_SESSION_ID
    return False


async def refuses_async(call: Callable[[], object]) -> bool:
    """:func:`refuses` for a call that may return an awaitable (the awaited call must fail)."""
    try:
        result = call()
        if asyncio.iscoroutine(result):
            await result
    except Exception as error:
        return getattr(error, "code", None) == INVALID_SESSION_ID
    return False


def attempt(call: Callable[[], object]) -> BaseException | None:
    """The error ``call`` raised, ``None`` when it succeeded."""
    try:
        call()
    except Exception as error:
        return error
    return None


async def attempt_async(completion: Awaitable[object]) -> BaseException | None:
    """:func:`attempt` for an awaitable."""
    try:
        await completion
    except Exception as error:
        return error
    return None
