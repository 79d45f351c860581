"""Pending sign-ins by state (``spec/token-store/README.md``, "Pending sign-ins by state"): each sign-in
begun is stored under a name of its own, found at the callback by its state and taken once, so that any
number may be in flight (two tabs, a double click, thousands of users of one server). Written with a
lifetime where the storage can (``set_expiring``), taken atomically where it can (``take``); otherwise
the documented fallback, with a warning once per storage. Blocking: the async manager runs these in a
worker thread.

The Go kit's ``tokenmanager/pending.go``.
"""

from __future__ import annotations

import threading
import weakref

from ._session_id import Log
from ._token_record import PendingRecord, parse_pending
from .storage.base import TokenStorage

__all__ = ["put_pending", "take_pending"]

# The storages already warned about (weakly: a storage of the app's that cannot be is warned per call site).
_warned: weakref.WeakSet[object] = weakref.WeakSet()
_warned_lock = threading.Lock()


def _warn_once(storage: TokenStorage, log: Log) -> None:
    """At a storage's first sign-in: what it lacks of what pending sign-ins use."""
    expiring, taking = callable(getattr(storage, "set_expiring", None)), callable(getattr(storage, "take", None))
    if expiring and taking:
        return
    with _warned_lock:
        try:
            if storage in _warned:
                return
            _warned.add(storage)
        except TypeError:
            pass
    if not expiring:
        log.warning(
            "The storage has no set_expiring: a sign-in begun and never completed stays in it until removed "
            "(its expiry still refuses it)"
        )
    if not taking:
        log.warning(
            "The storage has no take: a pending sign-in is read, then deleted, which is not atomic: two callbacks "
            "of one state arriving at once may both exchange the code (a storage several processes share needs take)"
        )


def put_pending(storage: TokenStorage, name: str, text: str, lifetime: float, log: Log) -> None:
    """Stores a pending record's ``text`` under ``name`` for ``lifetime`` seconds (``set_expiring``),
    or without a lifetime (``set``) where the storage cannot."""
    _warn_once(storage, log)
    set_expiring = getattr(storage, "set_expiring", None)
    if callable(set_expiring):
        set_expiring(name, text, lifetime)
    else:
        storage.set(name, text)


def take_pending(storage: TokenStorage, name: str, log: Log) -> PendingRecord | None:
    """Reads and deletes the pending sign-in under ``name`` in one step (``take``); where the storage
    cannot, ``get`` then ``delete``, which is not atomic. ``None`` when there is none, or when the value
    does not validate (dropped, with a warning naming the key)."""
    take = getattr(storage, "take", None)
    if callable(take):
        raw = take(name)
    else:
        raw = storage.get(name)
        if raw is not None:
            storage.delete(name)
    if raw is None:
        return None
    record = parse_pending(raw)
    if record is None:
        where = getattr(storage, "where", None)
        found = where(name) if callable(where) else name
        log.warning("The pending sign-in found for the callback's state is not a valid record; dropped: %s", found)
    return record
