"""The storage and lock protocols: what a token storage must provide, in the TypeScript kit's shape.

A storage holds string values under string keys; the token manager stores one JSON record per key
(the tokens, and the pending sign-in), in the format of ``spec/token-store/`` shared with the
TypeScript manager, so that a Python and a TypeScript process sharing one storage stay signed in
together. Values are secrets (they hold refresh tokens): a storage must never log them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar, runtime_checkable

__all__ = ["Lock", "TokenStorage"]

T = TypeVar("T")


@runtime_checkable
class Lock(Protocol):
    """A mutual-exclusion lock by name: runs ``task`` while holding the lock ``name``.

    It makes one refresh out of many callers (RFC 9700 §4.14.2): every holder re-reads the storage
    under it and refreshes only if the stored tokens are still not usable. A lock shared across
    processes must be released when its holder dies (a lease, a lock the kernel drops, or stale
    detection) and must bound its wait, raising an error that says what it waited for.
    """

    def __call__(self, name: str, task: Callable[[], T]) -> T: ...


@runtime_checkable
class TokenStorage(Protocol):
    """Three methods over string keys and string values, plus an optional ``lock``.

    ``get`` returns ``None`` when the key is absent. ``set`` returns only once the value is durable
    (the manager relies on it before it hands out rotated tokens). ``delete`` succeeds when absent.
    A storage that finds its data unreadable may move it aside and raise an error whose ``reset``
    attribute is ``True``: the manager then treats the tokens as absent (``NOT_SIGNED_IN``, with that
    error as cause). A storage may also have ``where(key)``, returning where a user finds ``key`` in
    it (``RedisStorage``: the Redis key, prefix and hash tag included): the manager's messages name that.

    Example:
        >>> class DictStorage:
        ...     lock = None
        ...     def __init__(self) -> None: self.data: dict[str, str] = {}
        ...     def get(self, key: str) -> str | None: return self.data.get(key)
        ...     def set(self, key: str, value: str) -> None: self.data[key] = value
        ...     def delete(self, key: str) -> None: self.data.pop(key, None)
        >>> isinstance(DictStorage(), TokenStorage)
        True
    """

    @property
    def lock(self) -> Lock | None:
        """The lock that coordinates refreshes among everyone sharing this storage, if any."""
        ...

    def get(self, key: str) -> str | None: ...

    def set(self, key: str, value: str) -> None: ...

    def delete(self, key: str) -> None: ...
