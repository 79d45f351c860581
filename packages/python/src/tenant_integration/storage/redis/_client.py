"""The Redis client the storage and the lock send their commands through: which clients are taken (a
``socket_timeout`` is required), one command as one try on its key's node, the reply as text, and a
failure's reason (the TypeScript kit's ``client.ts``)."""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..._redact import redact
from ..errors import RedisStorageError, RedisStorageErrorCode, RedisStorageOptionsError

if TYPE_CHECKING:
    import redis
    import redis.cluster

__all__ = ["check_client", "failed", "is_error_reply", "is_redis_error", "send", "text", "why"]


def _redis() -> object:
    """The ``redis`` module, imported on first use so the SDK works without it."""
    try:
        import redis
    except ImportError as e:  # pragma: no cover - the test environment has it
        raise ImportError(
            'RedisStorage needs the redis package: pip install "tenant-integration[redis]"', name="redis"
        ) from e
    return redis


def why(error: BaseException, secrets_: Sequence[str]) -> str:
    """redis-py's reason (``ConnectionError: Error 111 connecting to …``), with any value scrubbed, after
    plain words for the two ways Redis cannot be reached (refused or lost, and no answer in time) and
    for a key holding a value of another type (``WRONGTYPE``: not the kit's, so never overwritten)."""
    import redis.exceptions

    reason = redact(f"{type(error).__name__}: {error}", secrets_)
    if isinstance(error, redis.exceptions.TimeoutError):
        return f"timed out: Redis stopped answering, or could not be reached; {reason}"
    if isinstance(error, redis.exceptions.ConnectionError):
        return f"Redis could not be reached; {reason}"
    if isinstance(error, redis.exceptions.ResponseError) and str(error).startswith("WRONGTYPE"):
        return (
            "the key holds a value of another Redis type, which this kit did not write (another "
            f"application's data?); it is left as it is; {reason}"
        )
    return reason


def failed(
    code: RedisStorageErrorCode, command: str, key: str, error: BaseException, secrets_: Sequence[str] = ()
) -> RedisStorageError:
    """The error of ``command`` on ``key``: which command, which key, and why (``secrets_`` scrubbed)."""
    return RedisStorageError(code, f"Redis {command} of {key} failed ({why(error, secrets_)})", cause=error)


def send(client: redis.Redis | redis.cluster.RedisCluster, cluster: bool, key: str, *command: object) -> object:
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


def text(reply: object) -> str | None:
    """A bulk-string reply as text (redis-py answers bytes unless ``decode_responses=True``)."""
    if reply is None or isinstance(reply, str):
        return reply
    if isinstance(reply, bytes):
        return reply.decode("utf-8")
    raise TypeError(type(reply).__name__)


def is_redis_error(error: BaseException) -> bool:
    """Whether ``error`` is redis-py's (a failed command, connection or cluster), not a bug of the caller."""
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


def is_error_reply(error: BaseException) -> bool:
    """Whether ``error`` is Redis's answer to the command (``WRONGTYPE``, ``NOPERM``…): it was not run. Any
    other failure (no reply in time, a lost connection) leaves open whether the server ran it, or will."""
    import redis.exceptions

    return isinstance(error, redis.exceptions.ResponseError)


def check_client(client: object, *, cluster: bool, names: tuple[str, str]) -> float:
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
