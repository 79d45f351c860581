"""The Python actor of the conformance suite: drives ``TokenManager`` (target ``python``, one thread per
command) or ``AsyncTokenManager`` (target ``python-async``, one task per command on one event loop)
through the public API of ``tenant_integration`` only, in the line protocol of
``spec/conformance/PROTOCOL.md``: the configuration in ``CONFORMANCE_ACTOR``, commands on stdin,
answers and events on stdout, one JSON object per line.

The faults of ``arm`` are reached through the two seams an application has too: the ``transport`` of
the manager's requests (``sending``, ``in-flight``) and the storage it is given, whose ``lock``
attribute is the documented bring-your-own-lock seam (``locked``, ``answered``, ``"lock": "none"``).

Run: ``.venv/bin/python tools/conformance/actors/python/actor.py`` (from the repository's venv).
Never prints a token, code, verifier or state.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import logging
import os
import platform
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, TypeVar
from urllib.parse import urljoin, urlsplit

import httpx

# The sessions feature (PROTOCOL.md, "Sessions"), beside this file.
from sessions import AsyncSessionsFeature, Counter, SyncSessionsFeature, sessions_of, sessions_options

from tenant_integration import AsyncClient, AsyncTokenManager, Client, HttpError, RunningTimeTransport, TokenManager
from tenant_integration.storage import FileStorage, Lock, MemoryStorage, TokenStorage

T = TypeVar("T")
Message = dict[str, Any]
Then = Literal["stop", "hang", "go"]

#: The header that names the actor on every request to the tenant, for the sandbox's ledger.
ACTOR_HEADER = "Sandbox-Actor"
#: The points of the refresh protocol an ``arm`` may name (spec/token-store/README.md).
POINTS = ("locked", "sending", "in-flight", "answered")
#: The manager's storage key of the token record ends so (``tenant-integration:<origin>:<client_id>:tokens``).
TOKENS_KEY_SUFFIX = ":tokens"
#: The manager's events, by the protocol's ``what`` (``signed-in`` and ``revoked`` are not reported).
SESSION_EVENTS = {
    "tokens-refreshed": "refreshed",
    "session-ended": "ended",
    "signed-out": "signed-out",
    "storage-failed": "storage-failed",
}
#: The protocol's log levels, by :mod:`logging` level (CRITICAL is reported as ``error``).
LOG_LEVELS = ((logging.ERROR, "error"), (logging.WARNING, "warning"), (logging.INFO, "info"))
#: The package's root logger: the manager (``.token_manager``) and the Redis lock (``.storage.redis``) log under it.
SDK_LOGGER = "tenant_integration"


class ActorError(Exception):
    """A failure of the actor itself (a malformed command, an unsupported option), with a protocol ``code``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


# -- output ------------------------------------------------------------------------------------------


class Output:
    """Standard output, one whole JSON line at a time from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def say(self, message: Message) -> None:
        line = json.dumps(message, ensure_ascii=False) + "\n"
        with self._lock:
            sys.stdout.write(line)
            sys.stdout.flush()


def failure(command_id: int, error: BaseException) -> Message:
    """The answer to a command that failed: the kit's stable ``code``, else ``UNEXPECTED``. The kit's
    messages never hold a token; the actor's own never hold one either."""
    code = getattr(error, "code", None)
    return {
        "id": command_id,
        "ok": False,
        "error": {
            "code": code if isinstance(code, str) else "UNEXPECTED",
            "name": type(error).__name__,
            "message": str(error),
        },
    }


class ProtocolLogHandler(logging.Handler):
    """Every record of the kit's loggers as a protocol ``log`` event."""

    def __init__(self, out: Output) -> None:
        super().__init__(logging.DEBUG)
        self._out = out

    def emit(self, record: logging.LogRecord) -> None:
        level = next((name for at_least, name in LOG_LEVELS if record.levelno >= at_least), "debug")
        try:
            self._out.say({"event": "log", "level": level, "message": record.getMessage()})
        except Exception:
            self.handleError(record)


def log_to(out: Output) -> None:
    """Enables the kit's logging at its most verbose level, into protocol ``log`` events."""
    logger = logging.getLogger(SDK_LOGGER)
    logger.setLevel(logging.DEBUG)
    logger.addHandler(ProtocolLogHandler(out))


# -- configuration -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """``CONFORMANCE_ACTOR``, checked; durations in seconds, as the Python kit takes them."""

    target: Literal["python", "python-async"]
    name: str
    tenant: str
    client_id: str
    redirect_uri: str
    scopes: tuple[str, ...]
    storage: Mapping[str, Any]
    clock_offset_ms: float
    request_timeout: float | None
    intent_wait: float | None
    lock_wait: float | None


def seconds(value: object, field: str) -> float | None:
    """A duration in milliseconds from the configuration, in seconds; ``None`` when absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ActorError("UNEXPECTED", f"{field} must be a number of milliseconds")
    return value / 1000


def read_config(raw: str | None) -> Config:
    if not raw:
        raise ActorError("UNEXPECTED", "CONFORMANCE_ACTOR is not set")
    data = json.loads(raw)
    target = data.get("target")
    if target not in ("python", "python-async"):
        raise ActorError("UNSUPPORTED", f"this actor serves the targets python and python-async, not {target!r}")
    manager = data.get("manager") or {}
    return Config(
        target=target,
        name=str(data["name"]),
        tenant=str(data["tenant"]),
        client_id=str(data["clientId"]),
        redirect_uri=str(data["redirectUri"]),
        scopes=tuple(data["scopes"]),
        storage=data["storage"],
        clock_offset_ms=float(data.get("clockOffsetMs") or 0),
        request_timeout=seconds(manager.get("requestTimeoutMs"), "manager.requestTimeoutMs"),
        intent_wait=seconds(manager.get("intentWaitMs"), "manager.intentWaitMs"),
        lock_wait=seconds(manager.get("lockWaitMs"), "manager.lockWaitMs"),
    )


# -- faults ------------------------------------------------------------------------------------------


class Fault:
    """The fault armed for the next refresh: a point and what to do there, taken once.

    ``answered`` needs two sightings: the transport sees the refresh answered 200, then the storage sees
    the manager write the token record (the write that follows that answer).
    """

    def __init__(self, out: Output) -> None:
        self._out = out
        self._guard = threading.Lock()
        self._point: str | None = None
        self._then: Then = "stop"
        self._refresh_answered = False

    def arm(self, point: object, then: object) -> None:
        if point not in POINTS:
            raise ActorError("UNSUPPORTED", f"no such point of the refresh protocol: {point!r}")
        if then not in ("stop", "hang", "go"):
            raise ActorError("UNEXPECTED", f"then must be stop, hang or go, not {then!r}")
        with self._guard:
            self._point, self._then = point, then
            self._refresh_answered = False

    def take(self, point: str) -> Then | None:
        """What to do at ``point`` if it is the one armed (disarming it), else ``None``."""
        with self._guard:
            if self._point != point:
                return None
            self._point = None
            return self._then

    def refresh_leaving(self) -> None:
        with self._guard:
            self._refresh_answered = False

    def refresh_answered(self) -> None:
        with self._guard:
            self._refresh_answered = self._point == "answered"

    def take_answered(self) -> Then | None:
        """What to do at ``answered`` when the manager writes tokens after an answered refresh, else ``None``."""
        with self._guard:
            if not self._refresh_answered:
                return None
            self._refresh_answered = False
        return self.take("answered")

    def halt(self, point: str, then: Then) -> None:
        """Says where, then stops this process until SIGCONT, blocks this thread for good, or goes on."""
        self._out.say({"event": "at", "point": point})
        if then == "go":
            return
        if then == "stop":
            # Directed at this thread: os.kill(getpid()) is process-directed, the kernel hands it to
            # the main thread, and this one could run on (and write the tokens) before the stop.
            signal.pthread_kill(threading.get_ident(), signal.SIGSTOP)
        else:
            threading.Event().wait()  # until the orchestrator's SIGKILL

    async def halt_async(self, point: str, then: Then) -> None:
        """:meth:`halt` on the event loop: SIGSTOP stops the whole process alike; a hang blocks this task only."""
        if then != "hang":
            self.halt(point, then)
            return
        self._out.say({"event": "at", "point": point})
        await hang_forever()

    def reach(self, point: str) -> None:
        then = self.take(point)
        if then is not None:
            self.halt(point, then)

    async def reach_async(self, point: str) -> None:
        then = self.take(point)
        if then is not None:
            await self.halt_async(point, then)


async def hang_forever() -> NoReturn:
    """Never returns, cancelled or not. AsyncTokenManager's request timer, which counts the time the
    process runs, would cancel a plain wait and the manager would go on (dropping its refresh intent);
    a hung process never goes on, so the cancellation is refused. The orchestrator kills the process."""
    while True:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.Event().wait()


def is_refresh(request: httpx.Request) -> bool:
    """A refresh-token grant at the token endpoint (RFC 6749 §6); the body is read, never printed."""
    if request.method != "POST" or not request.url.path.endswith("/oauth/token"):
        return False
    try:
        body = json.loads(request.read())
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("grant_type") == "refresh_token"


class ActorTransport(httpx.BaseTransport):
    """The manager's requests to the tenant: each names the actor; a refresh passes ``sending`` as it is
    about to leave and ``in-flight`` once the tenant has answered."""

    def __init__(self, name: str, fault: Fault) -> None:
        # As an application's own transport must, to keep the timeout counting only running time.
        self._inner = RunningTimeTransport()
        self._name = name
        self._fault = fault

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.headers[ACTOR_HEADER] = self._name
        refresh = is_refresh(request)
        if refresh:
            self._fault.refresh_leaving()
            self._fault.reach("sending")
        response = self._inner.handle_request(request)
        if refresh:
            # in-flight: the tenant has handled the refresh and answered (httpcore has read the status
            # line and headers; the body waits unread), and the manager has not seen the answer yet.
            self._fault.reach("in-flight")
            if response.status_code == 200:
                self._fault.refresh_answered()
        return response

    def close(self) -> None:
        self._inner.close()


class AsyncActorTransport(httpx.AsyncBaseTransport):
    """:class:`ActorTransport` for AsyncTokenManager. At ``in-flight`` the manager's request timer runs
    (it awaits this call under its running-time timeout)."""

    def __init__(self, name: str, fault: Fault) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self._name = name
        self._fault = fault

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.headers[ACTOR_HEADER] = self._name
        refresh = is_refresh(request)
        if refresh:
            self._fault.refresh_leaving()
            await self._fault.reach_async("sending")
        response = await self._inner.handle_async_request(request)
        if refresh:
            # As in ActorTransport: answered by the tenant, not yet read by the manager.
            await self._fault.reach_async("in-flight")
            if response.status_code == 200:
                self._fault.refresh_answered()
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


# -- storage -----------------------------------------------------------------------------------------


def run_unlocked(name: str, task: Callable[[], T]) -> T:
    """A lock that does not lock (``"lock": "none"``): only to prove that the suite can fail."""
    return task()


class ArmedLock:
    """The storage's lock (or :func:`run_unlocked`), counting the tasks that run under it in this process."""

    def __init__(self, inner: Lock) -> None:
        self._inner = inner
        self._guard = threading.Lock()
        self._running = 0
        try:
            self._takes_until = "until" in inspect.signature(inner).parameters
        except (TypeError, ValueError):
            self._takes_until = False

    @property
    def held(self) -> bool:
        return self._running > 0

    def __call__(self, name: str, task: Callable[[], T], *, until: Callable[[], bool] | None = None) -> T:
        def under() -> T:
            with self._guard:
                self._running += 1
            try:
                return task()
            finally:
                with self._guard:
                    self._running -= 1

        # ``until`` passed on as the manager gives it (as the Node actor passes its ``wait``): a wrapper
        # that dropped it would make every waiter of a fleet take the lock in turn, as no application does.
        if until is None or not self._takes_until:
            return self._inner(name, under)
        inner: Callable[..., T] = self._inner
        return inner(name, under, until=until)

    def is_held(self, name: str) -> bool:
        """The inner lock's answer; ``True`` for one that cannot tell (the manager trusts it then)."""
        check = getattr(self._inner, "is_held", None)
        return bool(check(name)) if callable(check) else True


class ArmedStorage:
    """The storage the manager is given: the real one, passing ``locked`` once the token record was
    read under the refresh lock, and ``answered`` as the tokens of an answered refresh are written."""

    def __init__(self, inner: TokenStorage, lock: Lock, fault: Fault) -> None:
        self._inner = inner
        self._lock = ArmedLock(lock)
        self._fault = fault

    @property
    def lock(self) -> Lock:
        return self._lock

    def get(self, key: str) -> str | None:
        value = self._inner.get(key)
        if key.endswith(TOKENS_KEY_SUFFIX) and self._lock.held:
            self._fault.reach("locked")
        return value

    def set(self, key: str, value: str) -> None:
        if key.endswith(TOKENS_KEY_SUFFIX):
            then = self._fault.take_answered()
            if then is not None:
                self._fault.halt("answered", then)
        self._inner.set(key, value)

    def delete(self, key: str) -> None:
        self._inner.delete(key)


def nothing() -> None:
    return None


def redis_options(config: Config) -> dict[str, Any]:
    """The options of a Redis storage (single server or cluster) from ``config.storage``."""
    lease = seconds(config.storage.get("leaseMs"), "storage.leaseMs")
    options: dict[str, Any] = {"prefix": str(config.storage.get("prefix", ""))}
    if lease is not None:
        options["lease"] = lease
    if config.lock_wait is not None:
        options["wait_timeout"] = config.lock_wait
    return options


@dataclass(frozen=True)
class Opened:
    """A storage, what closes it (a coroutine function for an asyncio pool), and what opens it first (an
    ``AsyncConnectionPool`` opens on its loop: :meth:`AsyncActor.open`)."""

    storage: TokenStorage
    close: Callable[[], object]
    open: Callable[[], Awaitable[None]] | None = None


def open_storage(config: Config) -> Opened:
    """The storage of ``config.storage``, and what closes it. ``lockWaitMs`` is the storage lock's bounded
    wait (the Python manager has no such option: its storages do)."""
    spec = config.storage
    kind = spec.get("kind")
    waits = {} if config.lock_wait is None else {"lock_timeout": config.lock_wait}
    if kind == "memory":
        return Opened(MemoryStorage(**waits), nothing)
    if kind == "file":
        stale = seconds(spec.get("staleMs"), "storage.staleMs")
        stale_after = {} if stale is None else {"stale_after": stale}
        return Opened(FileStorage(str(spec["path"]), **stale_after, **waits), nothing)
    if kind == "redis":
        # The redis extra: imported only for this kind, as an application without it would.
        import redis

        from tenant_integration.storage.redis import RedisStorage

        client = redis.Redis.from_url(str(spec["url"]), socket_timeout=5)
        return Opened(RedisStorage(client, **redis_options(config)), client.close)
    if kind == "redis-cluster":
        from redis.cluster import ClusterNode, RedisCluster

        from tenant_integration.storage.redis import RedisClusterStorage

        # The cluster's nodes are the client's seeds; it learns the slots from them.
        seeds = [urlsplit(str(url)) for url in spec["urls"]]
        nodes = [ClusterNode(seed.hostname, seed.port) for seed in seeds]  # type: ignore[no-untyped-call]
        cluster = RedisCluster(startup_nodes=nodes, socket_timeout=5)
        return Opened(RedisClusterStorage(cluster, **redis_options(config)), cluster.close)
    if kind == "postgres":
        return open_postgres(config)
    raise ActorError("UNSUPPORTED", f"the Python kit has no storage of kind {kind!r}")


def open_postgres(config: Config) -> Opened:
    """A ``PostgresStorage`` on the app's pool, as a user makes it (node-postgres's default size, 10; a
    connect timeout, so a server that is down fails a call in time): a ``ConnectionPool`` for ``python``,
    an ``AsyncConnectionPool`` for ``python-async`` (made on the running loop, opened by
    :meth:`AsyncActor.open`); what closes it (a coroutine for the asyncio one)."""
    # The postgres extra: imported only for this kind, as an application without it would.
    from psycopg_pool import AsyncConnectionPool, ConnectionPool

    from tenant_integration.storage.postgres import PostgresStorage

    spec = config.storage
    options: dict[str, Any] = {
        "min_size": 1,
        "max_size": 10,
        "kwargs": {"application_name": config.name, "connect_timeout": 5},
    }
    waits = {} if config.lock_wait is None else {"wait_timeout": config.lock_wait}
    if config.target == "python":
        pool: ConnectionPool[Any] = ConnectionPool(str(spec["url"]), open=True, **options)
        storage = PostgresStorage(
            pool, base_url=config.tenant, client_id=config.client_id, table=str(spec["table"]), **waits
        )
        return Opened(storage, lambda: pool.close(timeout=1))
    async_pool: AsyncConnectionPool[Any] = AsyncConnectionPool(str(spec["url"]), open=False, **options)
    storage = PostgresStorage(
        async_pool, base_url=config.tenant, client_id=config.client_id, table=str(spec["table"]), **waits
    )
    return Opened(storage, lambda: async_pool.close(timeout=1), async_pool.open)


# -- the actor ---------------------------------------------------------------------------------------


def parse_command(line: str) -> Message | None:
    """A command line; ``None`` (said on stderr) for one that is not a command."""
    try:
        command = json.loads(line)
    except ValueError:
        command = None
    if not isinstance(command, dict) or not isinstance(command.get("id"), int) or "cmd" not in command:
        if line.strip():
            print(f"ignored a line that is not a command ({len(line)} characters)", file=sys.stderr)
        return None
    return command


class Actor:
    """What both targets share: the configuration, the clock, the armed fault, the storage, the events."""

    def __init__(self, config: Config, out: Output) -> None:
        self.config = config
        self.out = out
        self.fault = Fault(out)
        self.offset_ms = config.clock_offset_ms
        self.refreshes = 0
        opened = open_storage(config)
        inner, self._close_storage, self._open_storage = opened.storage, opened.close, opened.open
        unlocked = config.storage.get("lock") == "none"
        lock = run_unlocked if unlocked else inner.lock
        if lock is None:
            raise ActorError("UNEXPECTED", "the storage brings no lock")
        self.storage = ArmedStorage(inner, lock, self.fault)
        # The sessions get the storage itself (its lock per session, its pending sign-ins by state).
        self.sessions_options = sessions_options(config, inner, run_unlocked if unlocked else None, self.now)
        self.sessions_counter = Counter(is_refresh)

    def now(self) -> float:
        return time.time() + self.offset_ms / 1000

    def manager_options(self) -> dict[str, Any]:
        """The options both managers take; those the configuration leaves out keep the kit's defaults."""
        config = self.config
        options: dict[str, Any] = {
            "base_url": config.tenant,
            "client_id": config.client_id,
            "redirect_uri": config.redirect_uri,
            "scopes": list(config.scopes),
            "storage": self.storage,
            "now": self.now,
        }
        if config.request_timeout is not None:
            options["timeout"] = config.request_timeout
        if config.intent_wait is not None:
            options["intent_wait"] = config.intent_wait
        return options

    def listen(self, manager: TokenManager | AsyncTokenManager) -> None:
        for event, what in SESSION_EVENTS.items():
            # on()'s overloads type each event name's payload; this listener takes any payload.
            manager.on(event, functools.partial(self.session_event, what))  # type: ignore[call-overload]

    def session_event(self, what: str, payload: object) -> None:
        if what == "refreshed":
            self.refreshes += 1
        code = getattr(payload, "code", None)
        self.out.say({"event": "session", "what": what, **({"code": code} if isinstance(code, str) else {})})

    def ready(self) -> None:
        self.out.say(
            {
                "event": "ready",
                "pid": os.getpid(),
                "target": self.config.target,
                "runtime": f"python {platform.python_version()}",
                "features": ["sessions"],
            }
        )

    def clock(self, command: Message) -> Message:
        offset = command.get("offsetMs")
        if isinstance(offset, bool) or not isinstance(offset, int | float):
            raise ActorError("UNEXPECTED", "clock: offsetMs must be a number")
        self.offset_ms = float(offset)
        return {}

    def arm(self, command: Message) -> Message:
        self.fault.arm(command.get("point"), command.get("then"))
        return {}

    def closed(self, exit_id: int | None, error: BaseException | None) -> int:
        """Answers ``exit`` once the kit's objects are closed (``error``: the close that failed, said on
        stderr at the end of input); the exit status."""
        if exit_id is not None:
            self.out.say(failure(exit_id, error) if error else {"id": exit_id, "ok": True, "result": {}})
        elif error:
            print(f"the kit did not close: {type(error).__name__}: {error}", file=sys.stderr)
        return 1 if error else 0

    def close_storage(self) -> object:
        """Closes the storage's client or pool; for an ``AsyncConnectionPool``, a coroutine doing so."""
        return self._close_storage()


def callback_from(answer: httpx.Response) -> str:
    """The callback URL the authorize endpoint redirects to (never printed: it holds the code and state)."""
    location = answer.headers.get("location")
    if answer.status_code not in (302, 303) or not location:
        raise ActorError("UNEXPECTED", f"the authorize request was answered {answer.status_code} without a redirect")
    return urljoin(str(answer.request.url), str(location))


class SyncActor(Actor):
    """Target ``python``: one ``TokenManager``, each command in a thread of its own."""

    def __init__(self, config: Config, out: Output) -> None:
        super().__init__(config, out)
        self.manager = TokenManager(**self.manager_options(), transport=ActorTransport(config.name, self.fault))
        # The API through the kit's client, as a user calls it: the actor adds only Sandbox-Actor.
        self.api = Client(config.tenant, auth=self.manager, transport=ActorTransport(config.name, self.fault))
        self.http = httpx.Client(headers={ACTOR_HEADER: config.name}, trust_env=False, timeout=30.0)
        self.listen(self.manager)
        self.feature = SyncSessionsFeature(
            config, self.sessions_options, self.http, self.sessions_counter, ACTOR_HEADER
        )

    def sign_in(self, command: Message) -> Message:
        listed = sessions_of(command)
        if listed is not None:
            return self.feature.sign_in(listed)
        request = self.manager.begin_authorization()
        self.manager.complete_authorization(callback_from(self.http.get(request.url)))
        return {}

    def call(self, command: Message) -> Message:
        """The user through the kit's client (its auth refreshes and retries once after a 401); with
        ``sessions``, through every session's client (sessions.py)."""
        listed = sessions_of(command)
        if listed is not None:
            return self.feature.call(listed)
        before = self.refreshes
        try:
            self.api.get_user()
            status = 200
        except HttpError as error:
            status = error.status
        return {"status": status, "refreshed": self.refreshes > before}

    def status(self, _: Message) -> Message:
        return {"signedIn": self.manager.is_signed_in()}

    def revoke(self, _: Message) -> Message:
        self.manager.revoke()
        return {}

    def sign_out(self, _: Message) -> Message:
        self.manager.sign_out()
        return {}

    def run(self, command: Message) -> None:
        commands: dict[str, Callable[[Message], Message]] = {
            "sign-in": self.sign_in,
            "call": self.call,
            "clock": self.clock,
            "arm": self.arm,
            "status": self.status,
            "revoke": self.revoke,
            "sign-out": self.sign_out,
            "refuse-ids": self.feature.refuse_ids,
            "replay-callback": self.feature.replay_callback,
        }
        try:
            work = commands.get(command["cmd"])
            if work is None:
                raise ActorError("UNEXPECTED", f"unknown command {command['cmd']!r}")
            result = work(command)
        except Exception as error:
            self.out.say(failure(command["id"], error))
        else:
            self.out.say({"id": command["id"], "ok": True, "result": result})

    def serve(self, lines: Iterable[str]) -> int:
        """Runs each command in a daemon thread until ``exit`` (or the end of input), then closes what
        it opened and answers ``exit`` (a close that failed is the answer); the exit status."""
        exit_id = None
        for line in lines:
            command = parse_command(line)
            if command is None:
                continue
            if command["cmd"] == "exit":
                exit_id = command["id"]
                break
            threading.Thread(target=self.run, args=(command,), name=f"command {command['id']}", daemon=True).start()
        try:
            self.feature.close()
            self.api.close()
            self.manager.close()
            self.http.close()
        except Exception as error:
            return self.closed(exit_id, error)
        self.closed(exit_id, None)
        self.close_storage()
        return 0


class AsyncActor(Actor):
    """Target ``python-async``: one ``AsyncTokenManager``, each command a task on one event loop."""

    def __init__(self, config: Config, out: Output) -> None:
        super().__init__(config, out)
        self.manager = AsyncTokenManager(
            **self.manager_options(), transport=AsyncActorTransport(config.name, self.fault)
        )
        self.api = AsyncClient(config.tenant, auth=self.manager, transport=AsyncActorTransport(config.name, self.fault))
        self.http = httpx.AsyncClient(headers={ACTOR_HEADER: config.name}, trust_env=False, timeout=30.0)
        self.listen(self.manager)
        self.feature = AsyncSessionsFeature(
            config, self.sessions_options, self.http, self.sessions_counter, ACTOR_HEADER
        )

    async def sign_in(self, command: Message) -> Message:
        listed = sessions_of(command)
        if listed is not None:
            return await self.feature.sign_in(listed)
        request = await self.manager.begin_authorization()
        await self.manager.complete_authorization(callback_from(await self.http.get(request.url)))
        return {}

    async def call(self, command: Message) -> Message:
        """:meth:`SyncActor.call` on asyncio."""
        listed = sessions_of(command)
        if listed is not None:
            return await self.feature.call(listed)
        before = self.refreshes
        try:
            await self.api.get_user()
            status = 200
        except HttpError as error:
            status = error.status
        return {"status": status, "refreshed": self.refreshes > before}

    async def status(self, _: Message) -> Message:
        return {"signedIn": await self.manager.is_signed_in()}

    async def revoke(self, _: Message) -> Message:
        await self.manager.revoke()
        return {}

    async def sign_out(self, _: Message) -> Message:
        await self.manager.sign_out()
        return {}

    async def clock_now(self, command: Message) -> Message:
        return self.clock(command)

    async def arm_now(self, command: Message) -> Message:
        return self.arm(command)

    async def run(self, command: Message) -> None:
        commands: dict[str, Callable[[Message], Awaitable[Message]]] = {
            "sign-in": self.sign_in,
            "call": self.call,
            "clock": self.clock_now,
            "arm": self.arm_now,
            "status": self.status,
            "revoke": self.revoke,
            "sign-out": self.sign_out,
            "refuse-ids": self.feature.refuse_ids,
            "replay-callback": self.feature.replay_callback,
        }
        try:
            work = commands.get(command["cmd"])
            if work is None:
                raise ActorError("UNEXPECTED", f"unknown command {command['cmd']!r}")
            result = await work(command)
        except Exception as error:
            self.out.say(failure(command["id"], error))
        else:
            self.out.say({"id": command["id"], "ok": True, "result": result})

    async def serve(self) -> int:
        """Reads stdin in a thread of its own (the loop never blocks on it), runs each command as a task
        until ``exit`` (or the end of input), then closes."""
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[str | None] = asyncio.Queue()

        def feed() -> None:
            for line in sys.stdin:
                loop.call_soon_threadsafe(lines.put_nowait, line)
            loop.call_soon_threadsafe(lines.put_nowait, None)

        threading.Thread(target=feed, name="stdin", daemon=True).start()
        running: set[asyncio.Task[None]] = set()
        exit_id = None
        while (line := await lines.get()) is not None:
            command = parse_command(line)
            if command is None:
                continue
            if command["cmd"] == "exit":
                exit_id = command["id"]
                break
            task = asyncio.create_task(self.run(command))
            running.add(task)
            task.add_done_callback(running.discard)
        try:
            await self.feature.aclose()
            await self.api.aclose()
            await self.manager.aclose()
            await self.http.aclose()
        except Exception as error:
            return self.closed(exit_id, error)
        self.closed(exit_id, None)
        closing = self.close_storage()
        if inspect.isawaitable(closing):
            await closing
        return 0

    async def open(self) -> None:
        """Opens the ``AsyncConnectionPool`` of a PostgreSQL storage (an async pool opens on its loop)."""
        if self._open_storage is not None:
            await self._open_storage()


async def serve_async(config: Config, out: Output) -> int:
    """Target ``python-async``: the actor made on the event loop (a storage on an ``AsyncConnectionPool`` is
    made where its pool runs), said ready, then served."""
    try:
        actor = AsyncActor(config, out)
        await actor.open()
        actor.ready()
    except Exception as error:
        print(f"the actor cannot start: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    return await actor.serve()


def main() -> int:
    out = Output()
    try:
        config = read_config(os.environ.get("CONFORMANCE_ACTOR"))
        log_to(out)
        if config.target == "python-async":
            return asyncio.run(serve_async(config, out))
        actor = SyncActor(config, out)
        actor.ready()
    except Exception as error:
        print(f"the actor cannot start: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    return actor.serve(sys.stdin)


if __name__ == "__main__":
    sys.exit(main())
