"""The Redis keys of the token manager's records: the manager's name, the session part in a hash tag,
after the user's prefix (the TypeScript kit's ``keys.ts``, the Go kit's ``keys.go``)."""

from __future__ import annotations

import re

from ..errors import RedisStorageOptionsError

__all__ = ["check_prefix", "redis_key"]

#: The manager's names: ``tenant-integration:<scope>:<kind>``; the hash tag is everything between.
_MANAGER_NAME = re.compile(r"tenant-integration:(.+):(tokens|pending|intent|lock)")
#: A pending sign-in's name: ``tenant-integration:<origin>:<client_id>:pending:<key>``; the hash tag is
#: what lies between ``tenant-integration:`` and ``:pending:``.
_PENDING_NAME = re.compile(r"tenant-integration:(.+):pending:([0-9a-f]{32})")


def redis_key(prefix: str, name: str) -> str:
    """The Redis key of the manager's ``name`` after ``prefix``, the scope in a hash tag:
    ``<prefix>tenant-integration:{<scope>}:<kind>`` (``<scope>`` is ``<origin>:<client_id>``, and
    ``:<session>`` after it for a session), and a pending sign-in's
    ``<prefix>tenant-integration:{<origin>:<client_id>}:pending:<key>``. A cluster hashes only the text
    between the first ``{`` and the next ``}``, so ``:tokens``, ``:intent`` and ``:lock`` of one session
    share one slot, and sessions spread over the cluster. A name not of the manager's form is used as
    it is, after the prefix. The same keys as ``redisKey`` of ``@tenant-integration/token-store-redis``
    and the Go kit's (``spec/token-store/README.md``, "Names and keys").

    Example:
        >>> redis_key("billing:", "tenant-integration:https://acme.tenant.test:demo:tokens")
        'billing:tenant-integration:{https://acme.tenant.test:demo}:tokens'
        >>> redis_key("billing:", "tenant-integration:https://acme.tenant.test:demo:42:lock")
        'billing:tenant-integration:{https://acme.tenant.test:demo:42}:lock'

    See https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags.
    """
    pending = _PENDING_NAME.fullmatch(name)
    if pending:
        return f"{prefix}tenant-integration:{{{pending[1]}}}:pending:{pending[2]}"
    match = _MANAGER_NAME.fullmatch(name)
    return f"{prefix}tenant-integration:{{{match[1]}}}:{match[2]}" if match else prefix + name


def check_prefix(prefix: object) -> str:
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
