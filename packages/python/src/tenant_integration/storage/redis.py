"""Token storage and refresh lock on Redis (or Valkey), interchangeable with
``@tenant-integration/token-store-redis``: the same keys, the same values, the same lease lock, so
Python and TypeScript processes sharing one Redis make one refresh per expiry between them.

Synchronous, over a ``redis.Redis`` client (redis-py, the ``redis`` extra:
``pip install "tenant-integration[redis]"``). ``AsyncTokenManager`` runs it in a worker thread like
every storage, so no asyncio variant is needed; redis-py's client is thread-safe.

**The bound on a Redis that stops answering** (a stopped server, a lost network: connections open,
no reply) is the client's ``socket_timeout``, per command: a synchronous redis-py call cannot be
abandoned from outside, so the storage cannot set a deadline of its own the way the TypeScript kit
does (``commandTimeoutMs``). Hence it requires one: a client whose connections have no
``socket_timeout`` (redis-py 5 to 7 create them so; redis-py 8 gives 5 s) is refused at
construction with ``INVALID_OPTIONS``, saying what to pass. Requiring it, rather than raising the
minimum redis-py version, also covers a client built with ``socket_timeout=None`` on redis-py 8; and
setting one on the user's client behind their back would change it for their other commands. With
it, every call settles within ``socket_timeout`` per command it sends (a client built with
``retry_on_timeout=True`` retries a timed-out command, multiplying that), on every redis-py version
the ``redis`` extra allows (checked with 5.0, 6.4, 7.4 and 8.1 against a ``SIGSTOP``-ed redis-server).

**One code for an outage** (issue 27): a failed read or write raises ``COMMAND_FAILED``, which the
token manager reports as ``STORAGE_FAILED``; the lock raises ``STORAGE_FAILED`` itself (cause
``LOCK_UNAVAILABLE``), so whichever step meets the outage, the caller sees ``STORAGE_FAILED``, as in
the TypeScript kit.

**Waking waiters** (issue 28): a holder announces its release on ``<lock key>:released``; waiters
subscribed there (``client.pubsub()``, one connection per waiting call, for the wait only) try again
at once instead of at their next poll. See ``_redis_wake`` and ``spec/token-store/README.md``.

**Keys and Redis Cluster** (issue 31): the Redis key of the manager's name
``tenant-integration:<origin>:<client_id>:<kind>`` is ``<prefix>tenant-integration:{<origin>:<client_id>}:<kind>``
(:func:`redis_key`): the hash tag keeps the keys of a session in one cluster slot, on one node, on
a single server and a cluster alike, in every kit. :class:`RedisClusterStorage` and
:class:`RedisClusterLock` take a ``redis.cluster.RedisCluster``; each command goes to the primary of
its key's slot as one try (redis-py follows ``MOVED`` and ``ASK``, but does not repeat it on a node that
failed or gave no answer, as its cluster client otherwise does up to 10 times), so the bound above holds
on a cluster too.

See RFC 9700 §4.14.2 (refresh token rotation), RFC 6749 §6, §10.4.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import math
import random
import re
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from .._redact import redact
from ..token_errors import TokenManagerError
from ._redis_wake import ReleaseWatch, announce_release, watch_releases
from .base import Lock
from .errors import LockWaitEnded, RedisStorageError, RedisStorageErrorCode, RedisStorageOptionsError

if TYPE_CHECKING:
    import redis
    import redis.cluster
    from redis.commands.core import Script

__all__ = [
    "LockWaitEnded",
    "RedisClusterLock",
    "RedisClusterStorage",
    "RedisLock",
    "RedisStorage",
    "Replicas",
    "redis_key",
]

T = TypeVar("T")

_log = logging.getLogger("tenant_integration.storage.redis")

#: Deletes the key only if it still holds this owner's value (the TypeScript kit's script, byte for byte).
_RELEASE = 'if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0'
#: Extends the lease only if the key still holds this owner's value (the TypeScript kit's script).
_RENEW = 'if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0'


#: The manager's names: ``tenant-integration:<origin>:<client_id>:<kind>``; the session part is everything between.
_MANAGER_NAME = re.compile(r"tenant-integration:(.+):(tokens|pending|intent|lock)")


def redis_key(prefix: str, name: str) -> str:
    """The Redis key of the manager's ``name`` after ``prefix``, the session part in a hash tag:
    ``<prefix>tenant-integration:{<origin>:<client_id>}:<kind>``. A cluster hashes only the text
    between the first ``{`` and the next ``}``, so ``:tokens``, ``:pending``, ``:intent`` and ``:lock``
    of one session share one slot. A name not of the manager's form is used as it is, after the
    prefix. The same keys as ``redisKey`` of ``@tenant-integration/token-store-redis`` and the Go kit's.

    Example:
        >>> redis_key("billing:", "tenant-integration:https://acme.tenant.test:demo:tokens")
        'billing:tenant-integration:{https://acme.tenant.test:demo}:tokens'

    See https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags.
    """
    match = _MANAGER_NAME.fullmatch(name)
    return f"{prefix}tenant-integration:{{{match[1]}}}:{match[2]}" if match else prefix + name


def _check_prefix(prefix: object) -> str:
    """Refuses a prefix holding ``{`` or ``}``: it would move the hash tag (a cluster takes the first
    ``{``), so the keys of one session could hash to different slots."""
    if not isinstance(prefix, str):
        raise RedisStorageOptionsError("prefix", "must be a string")
    if "{" in prefix or "}" in prefix:
        raise RedisStorageOptionsError(
            "prefix",
            f"{prefix!r} holds '{{' or '}}': a brace would move the hash tag that keeps the keys of one "
            "session in one Redis Cluster slot, and split the session across slots",
        )
    return prefix


def _redis() -> object:
    """The ``redis`` module, imported on first use so the SDK works without it."""
    try:
        import redis
    except ImportError as e:  # pragma: no cover - the test environment has it
        raise ImportError(
            'RedisStorage needs the redis package: pip install "tenant-integration[redis]"', name="redis"
        ) from e
    return redis


@dataclass(frozen=True)
class Replicas:
    """After each write, wait (``WAIT``) until ``count`` replicas acknowledged it, at most ``timeout`` seconds.

    Example:
        >>> Replicas(count=1, timeout=0.5)
        Replicas(count=1, timeout=0.5)

    See https://redis.io/docs/latest/commands/wait/.
    """

    count: int
    timeout: float


def _positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not (math.isfinite(value) and value > 0):
        raise RedisStorageOptionsError(name, "must be a finite number of seconds > 0")
    return float(value)


def _why(error: BaseException, secrets_: Sequence[str]) -> str:
    """redis-py's reason (``ConnectionError: Error 111 connecting to …``), with any value scrubbed, after
    plain words for the two ways Redis cannot be reached: refused or lost, and no answer in time."""
    import redis.exceptions

    reason = redact(f"{type(error).__name__}: {error}", secrets_)
    if isinstance(error, redis.exceptions.TimeoutError):
        return f"timed out: Redis stopped answering, or could not be reached; {reason}"
    if isinstance(error, redis.exceptions.ConnectionError):
        return f"Redis could not be reached; {reason}"
    return reason


def _failed(
    code: RedisStorageErrorCode, command: str, key: str, error: BaseException, secrets_: Sequence[str] = ()
) -> RedisStorageError:
    return RedisStorageError(code, f"Redis {command} of {key} failed ({_why(error, secrets_)})", cause=error)


def _storage_failed(error: RedisStorageError) -> TokenManagerError:
    """A lock command's Redis failure as the token manager's ``STORAGE_FAILED`` (issue 27): the code a
    failed read or write of the storage gets, so an outage is one code at every step and in every kit;
    the store's ``LOCK_UNAVAILABLE`` error (which command, which key, why) is the cause."""
    reason = str(error).removeprefix(f"{error.code}: ")
    return TokenManagerError("STORAGE_FAILED", reason, cause=error)


def _send(client: redis.Redis | redis.cluster.RedisCluster, cluster: bool, key: str, *command: object) -> object:
    """``command`` about ``key`` (``"GET", key``…) through ``client.execute_command``. On a cluster it goes
    to the primary of the key's slot as one try: redis-py's cluster client retries a command whose node
    failed or gave no answer (10 times by default, each after a re-read of the slot table), which would
    stretch a command on a primary that stopped answering to about 11 times ``socket_timeout``. A command
    given its node is not retried (redis-py still follows ``MOVED`` and ``ASK``), so a call settles
    within ``socket_timeout`` per command on a cluster as on a single server; the failed try re-reads the
    slot table, so the next call reaches a replica promoted meanwhile."""
    if cluster:
        node = client.get_node_from_key(key)  # type: ignore[union-attr]
        return client.execute_command(*command, target_nodes=node)  # type: ignore[no-untyped-call]
    return client.execute_command(*command)  # type: ignore[no-untyped-call]


def _text(reply: object) -> str | None:
    """A bulk-string reply as text (redis-py answers bytes unless ``decode_responses=True``)."""
    if reply is None or isinstance(reply, str):
        return reply
    if isinstance(reply, bytes):
        return reply.decode("utf-8")
    raise TypeError(type(reply).__name__)


class RedisLock:
    """A refresh lock on Redis: a lease that only its owner renews or releases, with a bounded wait.

    Each call takes the key of ``name`` after ``prefix`` (:func:`redis_key`:
    ``<prefix>tenant-integration:{<origin>:<client_id>}:lock``) with ``SET key owner NX PX lease`` (a random 128-bit
    owner), retrying with exponential backoff and jitter until it gets it or ``wait_timeout`` runs
    out, and at once when the holder announces its release (``PUBLISH <key>:released``, heard on a
    connection of the waiter's own from ``client.pubsub()``, open for the wait only; where
    ``SUBSCRIBE`` is denied it polls); a thread renews the lease every ``renew_every`` seconds while
    the task runs (a Lua compare-and-``PEXPIRE``); and the key is deleted when the task ends only if it still holds this
    owner (a Lua compare-and-``DEL``), so a late holder never releases another's lock. The same
    protocol and scripts as ``redisLock`` of ``@tenant-integration/token-store-redis``.

    Args:
        client: a ``redis.Redis`` whose connections have a ``socket_timeout`` (see :class:`RedisStorage`);
            a ``redis.cluster.RedisCluster`` goes to :class:`RedisClusterLock`.
        prefix: put before the lock's key (default ``""``); no ``{`` or ``}`` (it would move the hash tag).
        lease: seconds a lease lasts without renewal (default 10): how long a dead holder blocks the others.
        renew_every: seconds between renewals (default ``lease / 3``); less than ``lease``.
        wait_timeout: seconds to wait for a lock another owner holds, then ``LOCK_TIMEOUT`` (default 45:
            longer than the manager's slowest refresh).
        retry_delay, max_retry_delay: the first and the longest pause between two tries (0.02, 0.5 s).
        on_lease_lost: called with a ``LEASE_LOST`` error when a running task's lease was lost (a
            renewal found another owner or none, no renewal succeeded for a whole lease, or the release
            found the key no longer this owner's). The task is not stopped. Default: a warning on the
            ``tenant_integration.storage.redis`` logger (a key name, never a value).

    Raises:
        RedisStorageOptionsError: at construction, for a bad option (code ``INVALID_OPTIONS``), a prefix
            holding a brace, or a cluster client (use :class:`RedisClusterLock`).
        RedisStorageError: from a call: ``LOCK_TIMEOUT`` when the wait runs out.
        TokenManagerError: from a call: ``STORAGE_FAILED`` when Redis fails, or gives no answer within
            the client's ``socket_timeout``, while the lock is taken: the code a failed read or write
            gets, so an outage is one code at every step; the cause is a ``RedisStorageError``
            ``LOCK_UNAVAILABLE`` saying which command failed and why. Otherwise what the task raises.

    Example:
        >>> import redis  # doctest: +SKIP
        >>> lock = RedisLock(redis.Redis(), lease=15)  # doctest: +SKIP
        >>> lock("tenant-integration:https://acme.tenant.test:demo:lock", lambda: "refreshed")  # doctest: +SKIP
        'refreshed'

    See RFC 9700 §4.14.2; https://redis.io/docs/latest/develop/clients/patterns/distributed-locks/.
    """

    #: Whether the client must be a ``redis.cluster.RedisCluster`` (:class:`RedisClusterLock`).
    _cluster = False

    def __init__(
        self,
        client: redis.Redis | redis.cluster.RedisCluster,
        *,
        prefix: str = "",
        lease: float = 10.0,
        renew_every: float | None = None,
        wait_timeout: float = 45.0,
        retry_delay: float = 0.02,
        max_retry_delay: float = 0.5,
        on_lease_lost: Callable[[RedisStorageError], None] | None = None,
    ) -> None:
        self._socket_timeout = _check_client(client, cluster=self._cluster, names=("RedisLock", "RedisClusterLock"))
        self._client = client
        self._prefix = _check_prefix(prefix)
        # Whole milliseconds, as PX takes them (the TypeScript kit rounds the lease up too).
        self._lease_ms = math.ceil(_positive("lease", lease) * 1000)
        self._renew_every = _positive("renew_every", renew_every) if renew_every is not None else lease / 3
        if self._renew_every >= lease:
            raise RedisStorageOptionsError("renew_every", "must be less than lease")
        self._wait_timeout = _positive("wait_timeout", wait_timeout)
        self._retry_delay = _positive("retry_delay", retry_delay)
        self._max_retry_delay = _positive("max_retry_delay", max_retry_delay)
        self._on_lease_lost = on_lease_lost or (lambda e: _log.warning("%s", e))
        self._release: Script = client.register_script(_RELEASE)
        self._renew: Script = client.register_script(_RENEW)
        # The owner value of each lease this lock holds now, by key: what is_held compares with.
        self._owners: dict[str, str] = {}
        self._owners_guard = threading.Lock()

    def __call__(self, name: str, task: Callable[[], T], *, until: Callable[[], bool] | None = None) -> T:
        """Runs ``task`` holding the lock ``prefix + name``; see the class.

        ``until``, when given, is called each time a wait for the lock wakes (a release was announced,
        or a poll pause passed), before the lock is tried again; when it returns ``True`` the wait ends
        without the lock, raising :class:`LockWaitEnded`, and ``task`` never runs. The TypeScript
        manager passes one that re-reads the tokens, so that its waiters stop waiting (in parallel)
        once another process stored fresh ones, instead of each taking the lock in turn. It must not
        raise.
        """
        key = redis_key(self._prefix, name)
        owner = secrets.token_hex(16)
        self._acquire(key, owner, until)
        holder = _Holder(self, key, owner)
        with self._owners_guard:
            self._owners[key] = owner
        try:
            return task()
        finally:
            with self._owners_guard:
                if self._owners.get(key) == owner:
                    del self._owners[key]
            holder.release()

    def is_held(self, name: str) -> bool:
        """Whether the lease ``prefix + name`` that a task of this lock runs under is still that task's:
        a fresh ``GET`` compared with its owner value, not a cached flag. ``False`` when no task of this
        lock holds it, when the lease expired or another owner took it (this process was paused past
        the lease), and when Redis cannot answer (ownership cannot be proven).

        The token manager asks right before a refresh request leaves, and sends nothing when the
        answer is no (a refresh token presented by two holders revokes the family).

        Example:
            >>> lock("tenant-integration:https://acme.tenant.test:demo:lock",  # doctest: +SKIP
            ...      lambda: lock.is_held("tenant-integration:https://acme.tenant.test:demo:lock"))
            True

        See RFC 9700 §4.14.2.
        """
        key = redis_key(self._prefix, name)
        with self._owners_guard:
            owner = self._owners.get(key)
        if owner is None:
            return False
        try:
            return _text(_send(self._client, self._cluster, key, "GET", key)) == owner
        except Exception as e:
            if not _is_redis_error(e) and not isinstance(e, TypeError | UnicodeDecodeError):
                raise
            return False

    def _take(self, key: str, owner: str) -> bool:
        """One ``SET NX PX``: whether the lock is ours now. A Redis failure is ``STORAGE_FAILED``."""
        try:
            # A SET whose reply is lost may still have taken the lock: it then expires after the lease.
            return bool(_send(self._client, self._cluster, key, "SET", key, owner, "NX", "PX", self._lease_ms))
        except Exception as e:
            if not _is_redis_error(e):
                raise
            failure = _failed("LOCK_UNAVAILABLE", "SET NX", key, e)
            raise _storage_failed(failure) from failure

    def _acquire(self, key: str, owner: str, until: Callable[[], bool] | None = None) -> None:
        # Monotonic: a wall clock moved by NTP (or by a test) does not bend the wait.
        deadline = time.monotonic() + self._wait_timeout
        watch: ReleaseWatch | None = None
        attempt = 0
        try:
            while not self._take(key, owner):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RedisStorageError(
                        "LOCK_TIMEOUT", f"{key} still held by another owner after {self._wait_timeout:g} s"
                    )
                if attempt == 0:
                    # Subscribed before the next try, so a release between the two tries is not missed.
                    watch = watch_releases(self._client, key, min(self._socket_timeout, left))
                    if watch is not None:
                        attempt = 1
                        continue
                # Full backoff, then jitter in its upper half, so a fleet released together does not retry
                # in step. A release message ends the pause at once: one SET per waiter per release, one wins.
                backoff = min(self._max_retry_delay, self._retry_delay * 2**attempt)
                pause = min(deadline - time.monotonic(), backoff / 2 + random.random() * backoff / 2)  # noqa: S311 - jitter
                if watch is not None:
                    watch.next(pause)
                else:
                    time.sleep(max(0.0, pause))
                if until is not None and until():
                    raise LockWaitEnded(key)
                attempt += 1
        finally:
            if watch is not None:
                watch.close()

    def _run_script(self, script: Script, key: str, *args: str | int) -> object:
        """One of the lock's scripts on ``key``; on a cluster an ``EVAL`` on the primary of its slot, one try
        (see :func:`_send`)."""
        if self._cluster:
            return _send(self._client, True, key, "EVAL", script.script, 1, key, *args)
        return script(keys=[key], args=list(args))

    def _lost(self, key: str, why: str, cause: BaseException | None = None) -> None:
        error = RedisStorageError("LEASE_LOST", f"{key}: {why}; the task under the lock was not stopped", cause=cause)
        # A throwing callback must not kill the renewal thread or the task.
        with contextlib.suppress(Exception):
            self._on_lease_lost(error)


class _Holder:
    """Holds a taken lease: renews it from a thread until :meth:`release`, which deletes it if still ours.

    A loss is reported once: by a renewal finding another owner (or none), by renewals failing for a
    whole lease, or by the release finding the key no longer ours.
    """

    def __init__(self, lock: RedisLock, key: str, owner: str) -> None:
        self._lock, self._key, self._owner = lock, key, owner
        self._stop = threading.Event()
        self._reported = False
        self._thread = threading.Thread(target=self._run, name=f"renew {key}", daemon=True)
        self._thread.start()

    def _report(self, why: str, cause: BaseException | None = None) -> None:
        if not self._reported:
            self._reported = True
            self._lock._lost(self._key, why, cause)

    def _run(self) -> None:
        lock = self._lock
        renewed_at = time.monotonic()
        lease = lock._lease_ms / 1000
        # A chain of waits, not a fixed rate: a slow renewal never overlaps the next one.
        while not self._stop.wait(lock._renew_every):
            try:
                reply = lock._run_script(lock._renew, self._key, self._owner, lock._lease_ms)
            except Exception as e:
                if self._stop.is_set():
                    return
                # A failed renewal is tried again; once a whole lease passed without one, the lease is gone.
                if time.monotonic() - renewed_at >= lease:
                    self._report(f"no renewal succeeded for {lease:g} s", e)
                    return
                continue
            if self._stop.is_set():
                return
            if reply != 1:
                self._report("a renewal found another owner, or no lock")
                return
            renewed_at = time.monotonic()

    def release(self) -> None:
        self._stop.set()
        self._thread.join()
        try:
            released = self._lock._run_script(self._lock._release, self._key, self._owner)
        except Exception:
            # A failed release only leaves the lease to expire (at most the lease): the task's outcome stands.
            return
        if released != 1:
            self._report("at release the lock was no longer this owner's (the lease expired under the task)")
            return
        announce_release(self._lock._client, self._key, on_primary=self._lock._cluster)


def _is_redis_error(error: BaseException) -> bool:
    import redis.exceptions

    # RedisClusterException: a slot the client's table does not cover (SlotNotCoveredError), no node to ask.
    return isinstance(error, redis.exceptions.RedisError | redis.exceptions.RedisClusterException)


def _socket_timeout(client: object) -> object:
    """The ``socket_timeout`` the client's connections get: the pool's keyword when given (``redis.Redis()``
    always passes one), else the connection class's default (``from_url`` leaves it out): 5 s in
    redis-py 8, none in 5 to 7."""
    pool = getattr(client, "connection_pool", None)
    kwargs = getattr(pool, "connection_kwargs", None)
    connection_class = getattr(pool, "connection_class", None)
    cluster_kwargs = getattr(client, "get_connection_kwargs", None)
    if pool is None and callable(cluster_kwargs):
        # A RedisCluster: the keywords every node's connections get.
        import redis.connection

        kwargs = cluster_kwargs()
        connection_class = kwargs.get("connection_class", redis.connection.Connection)
    if isinstance(kwargs, dict) and "socket_timeout" in kwargs:
        return kwargs["socket_timeout"]
    for klass in getattr(connection_class, "__mro__", ()):
        init = vars(klass).get("__init__")
        if init is None:
            continue
        with contextlib.suppress(TypeError, ValueError):
            parameter = inspect.signature(init).parameters.get("socket_timeout")
            if parameter is not None:
                return None if parameter.default is inspect.Parameter.empty else parameter.default
    return None


def _check_client(client: object, *, cluster: bool, names: tuple[str, str]) -> float:
    """Refuses what is not a synchronous ``redis.Redis`` (``cluster``: ``redis.cluster.RedisCluster``,
    read from primaries only) with a ``socket_timeout``; returns that timeout. ``names``: the
    single-server and the cluster class, for the message."""
    _redis()
    import redis.asyncio
    import redis.cluster

    single_name, cluster_name = names
    if isinstance(client, redis.asyncio.Redis | redis.asyncio.RedisCluster):
        raise RedisStorageOptionsError(
            "client",
            f"is an asyncio client: pass a {'redis.cluster.RedisCluster' if cluster else 'redis.Redis'} "
            "(the storage is synchronous; AsyncTokenManager runs it in a thread)",
        )
    if not cluster and isinstance(client, redis.cluster.RedisCluster):
        raise RedisStorageOptionsError(
            "client",
            f"is a redis.cluster.RedisCluster: use {cluster_name}, which sends each command to the node of "
            "its key's slot",
        )
    if cluster and not isinstance(client, redis.cluster.RedisCluster):
        raise RedisStorageOptionsError(
            "client", f"must be a redis.cluster.RedisCluster: use {single_name} for a single Redis server"
        )
    if cluster and (
        getattr(client, "read_from_replicas", False) or getattr(client, "load_balancing_strategy", None) is not None
    ):
        # A replica's copy may lag its primary: the lock's is_held and the refresh's re-read must see the last write.
        raise RedisStorageOptionsError(
            "client",
            "reads from replicas (read_from_replicas or load_balancing_strategy): their copy may lag the "
            "primary, and the lock and the refresh must read the last write; create it without either",
        )
    if not callable(getattr(client, "set", None)) or not callable(getattr(client, "register_script", None)):
        raise RedisStorageOptionsError("client", "must be a redis.Redis")
    timeout = _socket_timeout(client)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not (math.isfinite(timeout) and timeout > 0)
    ):
        # Without one, a command written to a Redis that stopped answering (SIGSTOP, a lost network)
        # waits for as long as the connection stays open: the storage's bound is this timeout.
        raise RedisStorageOptionsError(
            "client",
            "has no socket_timeout, so a Redis that stops answering would block a call for as long as the "
            "connection stays open: create it with one, e.g. redis.Redis.from_url(url, socket_timeout=5) "
            "(redis-py 8 sets 5 s by default, redis-py 5 to 7 none)",
        )
    return float(timeout)


class RedisStorage:
    """Stores the token manager's records in Redis, one string key per record, and brings the Redis
    lock that makes one refresh out of many across every process (Python or TypeScript) sharing it.

    Keys are the manager's own names with the session part in a hash tag, after ``prefix``
    (:func:`redis_key`): ``<prefix>tenant-integration:{<origin>:<client_id>}:tokens`` (and ``:pending``,
    ``:intent``, and ``:lock`` for the lock); values are the manager's JSON strings, stored as
    they are and never logged. ``get`` is ``GET``, ``set`` is ``SET`` (returning once Redis, and with
    ``replicas`` that many replicas, acknowledged it), ``delete`` is ``DEL``. Keys have no expiry.
    The same keys, values and lock as ``redisStorage`` of ``@tenant-integration/token-store-redis``.

    Args:
        client: a connected ``redis.Redis`` (``decode_responses`` either way) whose connections have a
            ``socket_timeout`` (the bound on a Redis that stops answering; redis-py 8 gives 5 s, 5 to 7
            none: pass ``socket_timeout=5``). For a fast failure while Redis is down, give it
            ``retry=Retry(NoBackoff(), 0)`` and a ``socket_connect_timeout``; redis-py's default
            retries a refused connection with backoff.
        prefix, lease, renew_every, wait_timeout, retry_delay, max_retry_delay, on_lease_lost: the
            lock's, see :class:`RedisLock`.
        replicas: ``Replicas(count, timeout)``: after each write, ``WAIT`` for that many replicas, at
            most ``timeout`` seconds; fewer is ``REPLICATION_TIMEOUT``. Narrows, does not close, the
            window in which a failover loses a rotated refresh token.

    Raises:
        ImportError: when the ``redis`` package is not installed (naming the extra to install).
        RedisStorageOptionsError: at construction, for a bad option (code ``INVALID_OPTIONS``), a prefix
            holding ``{`` or ``}`` (it would split a session across cluster slots), a client without a
            ``socket_timeout``, or a ``redis.cluster.RedisCluster`` (use :class:`RedisClusterStorage`;
            ``option`` is ``"client"``).
        RedisStorageError: from the methods: ``COMMAND_FAILED`` (cause: redis-py's error; the message
            says which command on which key failed and why, never the value), ``UNEXPECTED_REPLY``,
            ``REPLICATION_TIMEOUT``; the token manager reports them as ``STORAGE_FAILED``.

    Example:
        >>> import redis  # doctest: +SKIP
        >>> storage = RedisStorage(redis.Redis.from_url("redis://127.0.0.1:6379"), prefix="billing:")  # doctest: +SKIP
        >>> storage.set("k", "v"); storage.get("k")  # doctest: +SKIP
        'v'

    See RFC 6749 §6, §10.4; RFC 9700 §4.14.2.
    """

    #: The lock it brings: :class:`RedisClusterLock` for :class:`RedisClusterStorage`.
    _lock_class: type[RedisLock] = RedisLock

    def __init__(
        self,
        client: redis.Redis | redis.cluster.RedisCluster,
        *,
        prefix: str = "",
        lease: float = 10.0,
        renew_every: float | None = None,
        wait_timeout: float = 45.0,
        retry_delay: float = 0.02,
        max_retry_delay: float = 0.5,
        replicas: Replicas | tuple[int, float] | None = None,
        on_lease_lost: Callable[[RedisStorageError], None] | None = None,
    ) -> None:
        _check_client(client, cluster=self._lock_class._cluster, names=("RedisStorage", "RedisClusterStorage"))
        if replicas is not None:
            count, timeout = (replicas.count, replicas.timeout) if isinstance(replicas, Replicas) else replicas
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise RedisStorageOptionsError("replicas", "count must be an integer >= 0")
            # WAIT takes whole milliseconds, and WAIT with 0 blocks forever.
            if _positive("replicas", timeout) * 1000 < 1:
                raise RedisStorageOptionsError("replicas", "timeout must be at least 1 ms (WAIT 0 would block forever)")
        self._replicas = None if replicas is None else Replicas(count, float(timeout))
        self._client = client
        self._prefix = _check_prefix(prefix)
        self._lock = self._lock_class(
            client,
            prefix=prefix,
            lease=lease,
            renew_every=renew_every,
            wait_timeout=wait_timeout,
            retry_delay=retry_delay,
            max_retry_delay=max_retry_delay,
            on_lease_lost=on_lease_lost,
        )

    @property
    def lock(self) -> Lock:
        """The Redis lock on ``prefix + name``, which the token manager uses unless given its own ``lock``."""
        return self._lock

    def _replicated(self, command: str, key: str) -> None:
        if self._replicas is None:
            return
        count, timeout = self._replicas.count, self._replicas.timeout
        try:
            if self._lock_class._cluster:
                # On the primary that took the write (redis-py would ask every primary and add up).
                node = self._client.get_node_from_key(key)  # type: ignore[union-attr]
                acknowledged = int(
                    self._client.execute_command("WAIT", count, round(timeout * 1000), target_nodes=node)  # type: ignore[no-untyped-call]
                )
            else:
                acknowledged = int(self._client.wait(count, round(timeout * 1000)))
        except Exception as e:
            if not _is_redis_error(e):
                raise
            raise _failed("COMMAND_FAILED", "WAIT", key, e) from e
        if acknowledged < count:
            raise RedisStorageError(
                "REPLICATION_TIMEOUT",
                f"{acknowledged} of {count} replicas acknowledged the {command} of {key} within {timeout:g} s",
            )

    def get(self, key: str) -> str | None:
        """``GET prefix+key``: the value, or ``None`` when absent.

        Raises:
            RedisStorageError: ``COMMAND_FAILED``, ``UNEXPECTED_REPLY``.
        """
        name = redis_key(self._prefix, key)
        try:
            reply: object = _send(self._client, self._lock_class._cluster, name, "GET", name)
        except Exception as e:
            if not _is_redis_error(e):
                raise
            raise _failed("COMMAND_FAILED", "GET", name, e) from e
        try:
            return _text(reply)
        except (TypeError, UnicodeDecodeError) as e:
            raise RedisStorageError("UNEXPECTED_REPLY", f"GET of {name} did not answer a string", cause=e) from e

    def set(self, key: str, value: str) -> None:
        """``SET prefix+key value``; returns once Redis (and ``replicas``) acknowledged it.

        Raises:
            RedisStorageError: ``COMMAND_FAILED``, ``UNEXPECTED_REPLY``, ``REPLICATION_TIMEOUT``.
        """
        name = redis_key(self._prefix, key)
        try:
            reply: object = _send(self._client, self._lock_class._cluster, name, "SET", name, value)
        except Exception as e:
            if not _is_redis_error(e):
                raise
            raise _failed("COMMAND_FAILED", "SET", name, e, [value]) from e
        if reply is not True:
            raise RedisStorageError("UNEXPECTED_REPLY", f"SET of {name} was not acknowledged with OK")
        self._replicated("SET", name)

    def delete(self, key: str) -> None:
        """``DEL prefix+key``; succeeds when absent.

        Raises:
            RedisStorageError: ``COMMAND_FAILED``, ``REPLICATION_TIMEOUT``.
        """
        name = redis_key(self._prefix, key)
        try:
            _send(self._client, self._lock_class._cluster, name, "DEL", name)
        except Exception as e:
            if not _is_redis_error(e):
                raise
            raise _failed("COMMAND_FAILED", "DEL", name, e) from e
        self._replicated("DEL", name)


class RedisClusterLock(RedisLock):
    """:class:`RedisLock` on a Redis Cluster (or a Valkey cluster): the same lock, over a
    ``redis.cluster.RedisCluster`` reading from primaries only (its default). Each command goes to the
    primary of the lock key's slot; waiters subscribe through ``client.pubsub()`` (a ``PUBLISH`` on any
    node reaches them).

    Raises:
        RedisStorageOptionsError: at construction, as :class:`RedisLock`, and for a client that is not a
            ``RedisCluster`` (use :class:`RedisLock`) or that reads from replicas.

    Example:
        >>> from redis.cluster import RedisCluster  # doctest: +SKIP
        >>> lock = RedisClusterLock(RedisCluster.from_url("redis://127.0.0.1:7000"))  # doctest: +SKIP

    See RFC 9700 §4.14.2; https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/.
    """

    _cluster = True


class RedisClusterStorage(RedisStorage):
    """:class:`RedisStorage` on a Redis Cluster (or a Valkey cluster), with its :class:`RedisClusterLock`:
    the same keys, values and lock, interchangeable with ``redisClusterStorage`` of
    ``@tenant-integration/token-store-redis``. The keys of a session share one hash tag, so one slot on
    one primary; ``replicas`` (``WAIT``) is asked of that primary. A cluster that is down, or a primary
    that stops answering, is ``COMMAND_FAILED`` (the manager's ``STORAGE_FAILED``) within the client's
    ``socket_timeout`` per command, whatever its ``retry`` (each command is one try on the slot's
    primary), and nothing stored is lost.

    Raises:
        RedisStorageOptionsError: at construction, as :class:`RedisStorage`, and for a client that is not
            a ``redis.cluster.RedisCluster`` (use :class:`RedisStorage`) or that reads from replicas.

    Example:
        >>> from redis.cluster import RedisCluster  # doctest: +SKIP
        >>> cluster = RedisCluster.from_url("redis://127.0.0.1:7000", socket_timeout=5)  # doctest: +SKIP
        >>> storage = RedisClusterStorage(cluster, prefix="billing:")  # doctest: +SKIP

    See RFC 6749 §10.4; https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags.
    """

    _lock_class = RedisClusterLock
