"""The conformance suite's Python actor (tools/conformance/actors/python/actor.py, target ``python``) with
a stamp on standard error at each stage of a call, for ``fleet-stages.mjs``: ``STAGE {"t": <ns>, "s":
<stage>}``, ``t`` from ``time.monotonic_ns()`` (CLOCK_MONOTONIC, the clock of Node's
``process.hrtime``, so the driver can compare it with the instant it released the fleet).

A diagnostic, not a measurement of the kit: the stamps wrap private functions of the SDK (named
below), and their writes cost a little. When one of those names is gone, it stops at once saying which.

Run by fleet-stages.mjs: ``.venv/bin/python tools/bench/fleet-stages.py``.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ACTOR = Path(__file__).resolve().parents[1] / "conformance" / "actors" / "python" / "actor.py"


def stamp(stage: str, **fields: object) -> None:
    sys.stderr.write("STAGE " + json.dumps({"t": time.monotonic_ns(), "s": stage, **fields}) + "\n")
    sys.stderr.flush()


def wrap(owner: Any, name: str, stage: str, result: Callable[[Any], object] | None = None) -> None:
    """Stamps ``<stage>>`` as ``owner.name`` is called and ``<stage><`` as it returns (with ``r``, its
    result through ``result``), or ``<stage>!`` as it raises."""
    inner = getattr(owner, name, None)
    if inner is None:
        raise SystemExit(f"fleet-stages: {owner.__name__}.{name} is gone; update tools/bench/fleet-stages.py")

    @functools.wraps(inner)
    def stamped(*args: Any, **kwargs: Any) -> Any:
        stamp(stage + ">")
        try:
            value = inner(*args, **kwargs)
        except BaseException:
            stamp(stage + "!")
            raise
        stamp(stage + "<", **({"r": result(value)} if result else {}))
        return value

    setattr(owner, name, stamped)


def main() -> int:
    import httpx

    import tenant_integration._manager_core as core
    import tenant_integration._sync.token_manager as manager
    import tenant_integration.storage.redis._lock as redis_lock
    import tenant_integration.storage.redis._wake as redis_wake

    spec = importlib.util.spec_from_file_location("actor", ACTOR)
    assert spec is not None
    assert spec.loader is not None
    actor = importlib.util.module_from_spec(spec)
    sys.modules["actor"] = actor
    spec.loader.exec_module(actor)

    wrap(actor, "parse_command", "command-read")
    wrap(actor.SyncActor, "call", "call")
    wrap(core.ManagerCore, "_read_first", "read-first", lambda stored: stored is not None)
    wrap(core.StoredFresh, "__call__", "until", bool)
    wrap(redis_lock.RedisLock, "_take", "lock-try", bool)
    wrap(redis_lock, "watch_releases", "subscribe", lambda watch: watch is not None)
    wrap(redis_wake.ReleaseWatch, "next", "wait")
    wrap(redis_lock, "announce_release", "publish")
    wrap(manager.TokenManager, "_obtain", "under-lock")
    wrap(manager.TokenManager, "_send", "refresh-request")
    wrap(manager.TokenManager, "_commit", "tokens-written")
    wrap(httpx.Client, "get", "get-user")
    return int(actor.main())


if __name__ == "__main__":
    sys.exit(main())
