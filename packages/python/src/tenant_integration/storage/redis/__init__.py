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
at once instead of at their next poll. See ``_wake`` and ``spec/token-store/README.md``.

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

from ..errors import LockWaitEnded
from ._keys import redis_key
from ._lock import RedisClusterLock, RedisLock
from ._storage import RedisClusterStorage, RedisStorage, Replicas

__all__ = [
    "LockWaitEnded",
    "RedisClusterLock",
    "RedisClusterStorage",
    "RedisLock",
    "RedisStorage",
    "Replicas",
    "redis_key",
]
