"""Token storage on Redis: one string key per record, and the lock it brings (the TypeScript kit's
``storage.ts``, the Go kit's ``redisstorage.go``).

See RFC 6749 §6, §10.4; RFC 9700 §4.14.2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..base import Lock
from ..errors import RedisStorageError, RedisStorageOptionsError
from ._client import check_client, failed, is_redis_error, send, text
from ._keys import check_prefix, redis_key
from ._lock import RedisClusterLock, RedisLock, positive

if TYPE_CHECKING:
    import redis
    import redis.cluster

#: ``GETDEL`` for a server before Redis 6.2 (``spec/token-store/README.md``, "Pending sign-ins by state").
_TAKE = "local v = redis.call('GET', KEYS[1]) redis.call('DEL', KEYS[1]) return v"

__all__ = ["RedisClusterStorage", "RedisStorage", "Replicas"]


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


class RedisStorage:
    """Stores the token manager's records in Redis, one string key per record, and brings the Redis
    lock that makes one refresh out of many across every process (Python or TypeScript) sharing it.

    Keys are the manager's own names with the session part in a hash tag, after ``prefix``
    (:func:`redis_key`): ``<prefix>tenant-integration:{<scope>}:tokens`` (and ``:intent``, and ``:lock``
    for the lock), ``<scope>`` being ``<origin>:<client_id>`` and, for a session, ``:<session_id>``
    after it; a pending sign-in's ``<prefix>tenant-integration:{<origin>:<client_id>}:pending:<key>``.
    Values are the manager's JSON strings, stored as they are and never logged. ``get`` is ``GET``,
    ``set`` is ``SET`` (returning once Redis, and with ``replicas`` that many replicas, acknowledged
    it), ``delete`` is ``DEL``; ``set_expiring`` is ``SET … PX`` and ``take`` is ``GETDEL`` (pending
    sign-ins by state). Only pending sign-ins expire.
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
        check_client(client, cluster=self._lock_class._cluster, names=("RedisStorage", "RedisClusterStorage"))
        if replicas is not None:
            count, timeout = (replicas.count, replicas.timeout) if isinstance(replicas, Replicas) else replicas
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise RedisStorageOptionsError("replicas", "count must be an integer >= 0")
            # WAIT takes whole milliseconds, and WAIT with 0 blocks forever.
            if positive("replicas", timeout) * 1000 < 1:
                raise RedisStorageOptionsError("replicas", "timeout must be at least 1 ms (WAIT 0 would block forever)")
        self._replicas = None if replicas is None else Replicas(count, float(timeout))
        self._client = client
        self._prefix = check_prefix(prefix)
        # Whether the server lacks GETDEL (Redis before 6.2): take runs the script instead.
        self._no_getdel = False
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

    def where(self, key: str) -> str:
        """The Redis key of the manager's record ``key``, as a user finds it with ``redis-cli``
        (:func:`redis_key`): the manager names it in its messages.

        Example:
            >>> storage.where("tenant-integration:https://acme.tenant.test:demo:tokens")  # doctest: +SKIP
            'billing:tenant-integration:{https://acme.tenant.test:demo}:tokens'
        """
        return redis_key(self._prefix, key)

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
            if not is_redis_error(e):
                raise
            raise failed("COMMAND_FAILED", "WAIT", key, e) from e
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
            reply: object = send(self._client, self._lock_class._cluster, name, "GET", name)
        except Exception as e:
            if not is_redis_error(e):
                raise
            raise failed("COMMAND_FAILED", "GET", name, e) from e
        try:
            return text(reply)
        except (TypeError, UnicodeDecodeError) as e:
            raise RedisStorageError("UNEXPECTED_REPLY", f"GET of {name} did not answer a string", cause=e) from e

    def set(self, key: str, value: str) -> None:
        """``SET prefix+key value``; returns once Redis (and ``replicas``) acknowledged it.

        Raises:
            RedisStorageError: ``COMMAND_FAILED``, ``UNEXPECTED_REPLY``, ``REPLICATION_TIMEOUT``.
        """
        name = redis_key(self._prefix, key)
        try:
            reply: object = send(self._client, self._lock_class._cluster, name, "SET", name, value)
        except Exception as e:
            if not is_redis_error(e):
                raise
            raise failed("COMMAND_FAILED", "SET", name, e, [value]) from e
        if reply is not True:
            raise RedisStorageError("UNEXPECTED_REPLY", f"SET of {name} was not acknowledged with OK")
        self._replicated("SET", name)

    def set_expiring(self, key: str, value: str, lifetime: float) -> None:
        """``SET prefix+key value PX lifetime``: Redis drops the key once ``lifetime`` seconds passed
        (pending sign-ins by state); returns once Redis (and ``replicas``) acknowledged it.

        Raises:
            RedisStorageError: ``COMMAND_FAILED``, ``UNEXPECTED_REPLY``, ``REPLICATION_TIMEOUT``.
        """
        name = redis_key(self._prefix, key)
        milliseconds = max(1, round(lifetime * 1000))
        try:
            reply: object = send(self._client, self._lock_class._cluster, name, "SET", name, value, "PX", milliseconds)
        except Exception as e:
            if not is_redis_error(e):
                raise
            raise failed("COMMAND_FAILED", "SET", name, e, [value]) from e
        if reply is not True:
            raise RedisStorageError("UNEXPECTED_REPLY", f"SET of {name} was not acknowledged with OK")
        self._replicated("SET", name)

    def take(self, key: str) -> str | None:
        """``GETDEL prefix+key`` (on a server before Redis 6.2, a script of ``GET`` and ``DEL``): the value,
        deleted in one atomic step, so that of concurrent takes in any processes at most one gets it;
        ``None`` when absent.

        Raises:
            RedisStorageError: ``COMMAND_FAILED``, ``UNEXPECTED_REPLY``, ``REPLICATION_TIMEOUT``.
        """
        name = redis_key(self._prefix, key)
        cluster = self._lock_class._cluster
        command = "EVAL" if self._no_getdel else "GETDEL"
        try:
            try:
                reply: object = (
                    send(self._client, cluster, name, "EVAL", _TAKE, 1, name)
                    if self._no_getdel
                    else send(self._client, cluster, name, "GETDEL", name)
                )
            except Exception as e:
                if self._no_getdel or not is_redis_error(e) or "unknown command" not in str(e).lower():
                    raise
                self._no_getdel = True
                command = "EVAL"
                reply = send(self._client, cluster, name, "EVAL", _TAKE, 1, name)
        except Exception as e:
            if not is_redis_error(e):
                raise
            raise failed("COMMAND_FAILED", command, name, e) from e
        try:
            value = text(reply)
        except (TypeError, UnicodeDecodeError) as e:
            raise RedisStorageError("UNEXPECTED_REPLY", f"{command} of {name} did not answer a string", cause=e) from e
        if value is not None:
            self._replicated(command, name)
        return value

    def delete(self, key: str) -> None:
        """``DEL prefix+key``; succeeds when absent.

        Raises:
            RedisStorageError: ``COMMAND_FAILED``, ``REPLICATION_TIMEOUT``.
        """
        name = redis_key(self._prefix, key)
        try:
            send(self._client, self._lock_class._cluster, name, "DEL", name)
        except Exception as e:
            if not is_redis_error(e):
                raise
            raise failed("COMMAND_FAILED", "DEL", name, e) from e
        self._replicated("DEL", name)


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
