"""This process's host, and the liveness test of another process on the same host: what tells a paused
lock or intent holder (alive, waited for) from a dead one (taken over at once).

The refresh intent (:mod:`._refresh_intent`) and the file lock (:mod:`.storage._dir_lock`) both ask
it; it lives apart from the file lock so that the token manager loads it without ``filelock``. The
TypeScript kit's ``process-identity.ts`` and the Go kit's ``internal/procid`` keep the same rule.

See RFC 9700 §4.14.2 (one refresh at a time under rotation).
"""

from __future__ import annotations

import os
import socket

__all__ = ["is_gone", "this_host"]


def this_host() -> str:
    """This machine's host name: the kernel's node name, as Node's ``os.hostname()`` returns it (both
    call ``uname``/``gethostname``), so records written by either kit name the same host."""
    return socket.gethostname()


def is_gone(host_name: str, pid: int) -> bool:
    """Whether process ``pid`` on ``host_name`` has exited: ``True`` only when ``host_name`` is this
    machine and ``kill(pid, 0)`` fails with ``ESRCH``. A process of another user (``EPERM``), this
    process, or one on another host cannot be proven dead: it counts as alive, and is waited for within
    the bounded waits (the TypeScript kit's ``isGone``).

    Example:
        >>> is_gone(this_host(), os.getpid())
        False

    See https://man7.org/linux/man-pages/man2/kill.2.html (signal 0: an existence check).
    """
    if host_name != this_host() or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False
