"""Waking the waiters of a Redis lock when its holder lets it go (issue 28), by pub/sub: the protocol
every kit speaks (``spec/token-store/README.md``, "Redis: waking waiters"), so a Python waiter wakes
on a TypeScript holder's release and the other way round. A message only shortens a wait: a waiter
that cannot subscribe, or whose message never comes, polls as before.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import redis
    import redis.cluster
    from redis.client import PubSub

__all__ = ["ReleaseWatch", "announce_release", "released_channel", "watch_releases"]


def released_channel(key: str) -> str:
    """The channel a lock's release is announced on: the lock key (prefix included) and ``:released``."""
    return f"{key}:released"


def announce_release(client: redis.Redis | redis.cluster.RedisCluster, key: str, *, on_primary: bool = False) -> None:
    """``PUBLISH <key>:released ""`` (the message carries nothing), after this owner's own
    compare-and-``DEL`` deleted the key. A failure (an ACL denying ``PUBLISH``, Redis gone) is
    ignored: the waiters poll. On a cluster (``on_primary``), a ``PUBLISH`` on any node reaches
    subscribers on every node: it goes, as one try, to the primary that just deleted the key, not to a
    node that may have stopped answering, which redis-py would retry ten times."""
    with contextlib.suppress(Exception):
        if on_primary:
            node = client.get_node_from_key(key)  # type: ignore[union-attr]
            client.execute_command("PUBLISH", released_channel(key), "", target_nodes=node)  # type: ignore[no-untyped-call]
        else:
            client.publish(released_channel(key), "")


class ReleaseWatch:
    """A waiter's subscription to one lock's releases, on a connection of its own, open for one wait."""

    def __init__(self, pubsub: PubSub) -> None:
        self._pubsub: PubSub | None = pubsub

    def next(self, seconds: float) -> None:
        """Returns when a release was announced (since the last call) or after ``seconds``."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self._pubsub is None:
                time.sleep(left)
                return
            try:
                message = self._pubsub.get_message(timeout=left)
            except Exception:
                # The connection failed under the wait: the rest of it is a plain poll.
                self.close()
                continue
            if message is not None and message.get("type") == "message":
                return

    def close(self) -> None:
        """Unsubscribes by closing the connection; idempotent."""
        pubsub, self._pubsub = self._pubsub, None
        if pubsub is not None:
            with contextlib.suppress(Exception):
                pubsub.close()


def watch_releases(client: redis.Redis | redis.cluster.RedisCluster, key: str, timeout: float) -> ReleaseWatch | None:
    """Subscribes to the releases of the lock ``key`` (``client.pubsub()``: a connection of its own; on
    a ``RedisCluster``, to the node of the channel's slot)
    and returns once the subscription is confirmed, so that a retry made after it cannot miss a
    release. ``None`` when no subscription is to be had: the connection or the ``SUBSCRIBE`` failed
    (an ACL without it: ``NOPERM``), or no confirmation came within ``timeout`` seconds; the waiter
    then polls. Never raises."""
    try:
        pubsub = client.pubsub()  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated
    except Exception:
        return None
    try:
        pubsub.subscribe(released_channel(key))
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            message = pubsub.get_message(timeout=left)
            if message is not None and message.get("type") == "subscribe":
                return ReleaseWatch(pubsub)
    except Exception:  # noqa: S110 - any failure means: poll instead
        pass
    with contextlib.suppress(Exception):
        pubsub.close()
    return None
