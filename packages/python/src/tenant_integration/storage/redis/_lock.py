"""The refresh lock on Redis: a lease (``SET key owner NX PX lease``) that only its owner renews or
releases, with a bounded wait (the TypeScript kit's ``lock.ts``, the Go kit's ``lock.go``).

See RFC 9700 §4.14.2 (refresh token rotation); https://redis.io/docs/latest/develop/clients/patterns/distributed-locks/.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
import secrets
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from ...token_errors import TokenManagerError
from ..errors import LockWaitEnded, RedisStorageError, RedisStorageOptionsError
from ._client import check_client, failed, is_error_reply, is_redis_error, send, text
from ._keys import check_prefix, redis_key
from ._wake import ReleaseWatch, announce_release, watch_releases

if TYPE_CHECKING:
    import redis
    import redis.cluster
    from redis.commands.core import Script

__all__ = ["RedisClusterLock", "RedisLock", "positive", "storage_failed"]

T = TypeVar("T")

_log = logging.getLogger("tenant_integration.storage.redis")

#: Deletes the key only if it still holds this owner's value (the TypeScript kit's script, byte for byte).
_RELEASE = 'if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0'
#: Extends the lease only if the key still holds this owner's value (the TypeScript kit's script).
_RENEW = 'if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0'
#: The most owner values of unanswered SET NX tries remembered per key (the oldest are forgotten).
_MOST_STRAYS = 16


def positive(name: str, value: float) -> float:
    """``value`` as seconds when it is a finite number > 0; else ``INVALID_OPTIONS`` naming the option."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not (math.isfinite(value) and value > 0):
        raise RedisStorageOptionsError(name, "must be a finite number of seconds > 0")
    return float(value)


def storage_failed(error: RedisStorageError) -> TokenManagerError:
    """A lock command's Redis failure as the token manager's ``STORAGE_FAILED`` (issue 27): the code a
    failed read or write of the storage gets, so an outage is one code at every step and in every kit;
    the store's ``LOCK_UNAVAILABLE`` error (which command, which key, why) is the cause."""
    reason = str(error).removeprefix(f"{error.code}: ")
    return TokenManagerError("STORAGE_FAILED", reason, cause=error)


class RedisLock:
    """A refresh lock on Redis: a lease that only its owner renews or releases, with a bounded wait.

    Each call takes the key of ``name`` after ``prefix`` (:func:`redis_key`:
    ``<prefix>tenant-integration:{<origin>:<client_id>}:lock``) with ``SET key owner NX PX lease`` (a random 128-bit
    owner), retrying with exponential backoff and jitter until it gets it or ``wait_timeout`` runs
    out, and at once when the holder announces its release (``PUBLISH <key>:released``, heard on a
    connection of the waiter's own from ``client.pubsub()``, open for the wait only; where
    ``SUBSCRIBE`` is denied it polls); a thread renews the lease every ``renew_every`` seconds while
    the task runs (a Lua compare-and-``PEXPIRE``); and the key is deleted when the task ends only if it still holds this
    owner (a Lua compare-and-``DEL``), so a late holder never releases another's lock. A ``SET NX``
    whose reply never came (no answer within ``socket_timeout``) may still take the lease when the
    server runs it (a stopped primary that resumes): the lock remembers its owner value and, at its
    next try on that key, releases such a lease at once and announces it, so nobody waits it out. The
    same protocol and scripts as ``redisLock`` of ``@tenant-integration/token-store-redis``.

    Args:
        client: a ``redis.Redis`` whose connections have a ``socket_timeout`` (see :class:`RedisStorage`);
            a ``redis.cluster.RedisCluster`` goes to :class:`RedisClusterLock`.
        prefix: put before the lock's key (default ``""``); no ``{`` or ``}`` (it would move the hash tag).
        lease: seconds a lease lasts without renewal (default 10): how long a dead holder blocks the others.
        renew_every: seconds between renewals (default ``lease / 3``); less than ``lease``.
        wait_timeout: seconds to wait for a lock another owner holds, then ``LOCK_TIMEOUT`` (default 45:
            longer than the manager's slowest refresh).
        retry_delay, max_retry_delay: the first and the longest pause between two tries while waiting
            without a subscription to the lock's releases (0.02, 0.5 s): doubles from the first to the
            longest, with jitter. A subscribed waiter tries again when a release is announced, and
            otherwise only every ``max_retry_delay``.
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
        self._socket_timeout = check_client(client, cluster=self._cluster, names=("RedisLock", "RedisClusterLock"))
        self._client = client
        self._prefix = check_prefix(prefix)
        # Whole milliseconds, as PX takes them (the TypeScript kit rounds the lease up too).
        self._lease_ms = math.ceil(positive("lease", lease) * 1000)
        self._renew_every = positive("renew_every", renew_every) if renew_every is not None else lease / 3
        if self._renew_every >= lease:
            raise RedisStorageOptionsError("renew_every", "must be less than lease")
        self._wait_timeout = positive("wait_timeout", wait_timeout)
        self._retry_delay = positive("retry_delay", retry_delay)
        self._max_retry_delay = positive("max_retry_delay", max_retry_delay)
        self._on_lease_lost = on_lease_lost or (lambda e: _log.warning("%s", e))
        self._release: Script = client.register_script(_RELEASE)
        self._renew: Script = client.register_script(_RENEW)
        # The owner value of each lease this lock holds now, by key: what is_held compares with.
        self._owners: dict[str, str] = {}
        # The owner values of SET NX tries whose reply never came (a timeout, a lost connection), by key:
        # the server may have run them, then or later (a stopped primary that resumes), and each such
        # lease is this lock's although no task holds it (see _release_strays).
        self._strays: dict[str, list[str]] = {}
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
            return text(send(self._client, self._cluster, key, "GET", key)) == owner
        except Exception as e:
            if not is_redis_error(e) and not isinstance(e, TypeError | UnicodeDecodeError):
                raise
            return False

    def _take(self, key: str, owner: str) -> bool:
        """One ``SET NX PX``, after this lock's stray leases on ``key`` are released: whether the lock is
        ours now. A Redis failure is ``STORAGE_FAILED``."""
        self._release_strays(key)
        try:
            taken = bool(send(self._client, self._cluster, key, "SET", key, owner, "NX", "PX", self._lease_ms))
        except Exception as e:
            if not is_redis_error(e):
                raise
            if not is_error_reply(e):
                # No reply: the server may still run it and take the lease for this owner.
                self._remember_stray(key, owner)
            failure = failed("LOCK_UNAVAILABLE", "SET NX", key, e)
            raise storage_failed(failure) from failure
        if taken:
            # Redis answered this SET NX: a stray sent before it has been run or never will be.
            with self._owners_guard:
                self._strays.pop(key, None)
        return taken

    def _remember_stray(self, key: str, owner: str) -> None:
        with self._owners_guard:
            strays = self._strays.setdefault(key, [])
            strays.append(owner)
            # A call reads the storage before it takes the lock, so an outage fails most calls before
            # their SET NX: more strays than this are not expected; a forgotten one expires after the lease.
            del strays[:-_MOST_STRAYS]

    def _release_strays(self, key: str) -> None:
        """Releases at once the leases on ``key`` this lock may hold without a task: those of its SET NX
        tries whose reply never came, which the server may have run, then or later (decision D4, as the
        TypeScript kit does when a late reply comes). Each is compare-and-deleted, and the release
        announced to the waiters when it held the lease, so that no process waits out a lease nobody
        holds. A failure leaves them for the next try; the SET NX that follows reports the outage."""
        with self._owners_guard:
            strays = list(self._strays.get(key, ()))
        for stray in strays:
            try:
                released = self._run_script(self._release, key, stray)
            except Exception as e:
                if not is_redis_error(e):
                    raise
                return
            if released == 1:
                with self._owners_guard:
                    if stray in self._strays.get(key, ()):
                        self._strays[key].remove(stray)
                announce_release(self._client, key, on_primary=self._cluster)

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
                # So a subscribed waiter polls only for a release no message tells of (a lease that ran out,
                # a denied PUBLISH), every max_retry_delay: polling on the short backoff as well, a fleet's
                # waiters sent several SETs and reads per wait while the holder refreshed, and that load
                # slowed every holder (issue 39). Unsubscribed, it polls on the backoff.
                backoff = (
                    self._max_retry_delay
                    if watch is not None
                    else min(self._max_retry_delay, self._retry_delay * 2**attempt)
                )
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
        (see :func:`send`)."""
        if self._cluster:
            return send(self._client, True, key, "EVAL", script.script, 1, key, *args)
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
