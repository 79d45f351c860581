"""Failover, measured (issue 36): whether a session survives a Redis Cluster failover lived through by
long-running processes, with and without the ``replicas`` (``WAIT``) option of
:class:`RedisClusterStorage`. The protocol of the Go kit's ``packages/go/internal/cmd/failover`` and the
TypeScript kit's ``packages/token-store-redis/scripts/failover-trials.mjs``, so the kits' figures compare.
Not part of the tests (it is a measurement, not a check); needs redis-server and redis-cli, and the built
sandbox (``packages/sandbox/dist``). From this package, in the repository's venv:

    python scripts/failover_trials.py [--settle connected] [--processes 3] [trials per mode, default 20]

Each trial, on a 3-primary cluster with a replica per primary (the tests' cluster,
``tests/test_redis_cluster.py``): three token managers (the "processes"), each on a ``RedisCluster`` client
of its own with redis-py's defaults, as three processes would have, sign in (the first) and read the
session (all), so that every client holds connections to the session's primary and its slot map. The
sandbox's clock passes the access token's expiry and the first manager refreshes; when its refresh request
leaves (the managers' transport, before the request is forwarded), the primary of the session's slot is
killed (SIGKILL) and its replica promoted (``CLUSTER FAILOVER TAKEOVER``, until every live node lists it as
a primary); then the tenant answers (it rotates the refresh token) and the refresh writes the new tokens on
a cluster whose primary changed. The same three managers, their clients never remade, then need a token
after the next expiry: each asks, in a thread of its own, and asks again every 0.25 s after a failure, for
at most 30 s. Two modes: the killed node comes back (restarted: it rejoins as a replica of the promoted
one) once the refresh's call has returned, or it stays down until the trial ends. The session is kept when
every manager got a token after the second expiry and the tenant saw no refresh token presented twice.
Then the killed node is restarted if it is down, and the next trial waits until the cluster has settled:
every primary's replica has received a probe write made on its primary (see :func:`replicated`;
``--settle connected`` waits only for a connected replica not in a bulk transfer, the earlier protocol, to
compare).
"""

from __future__ import annotations

import argparse
import logging
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import redis
from redis.cluster import ClusterNode, RedisCluster

from tenant_integration import RunningTimeTransport, TenantIntegrationError, TokenManager
from tenant_integration.storage.redis import RedisClusterStorage, Replicas, redis_key
from tenant_integration.testing import SandboxClient, SandboxProcess, sign_in_through_sandbox

PACKAGE = Path(__file__).resolve().parent.parent
REPO = PACKAGE.parent.parent
sys.path.insert(0, str(PACKAGE / "tests"))
from test_redis_cluster import Cluster  # noqa: E402 (the tests' cluster starter, not a third copy)

CLIENT = "failover-demo"
REDIRECT = "http://127.0.0.1:53682/callback"
#: What the TypeScript trials pass: one replica, at most a second.
REPLICAS = Replicas(count=1, timeout=1.0)
#: How long a manager keeps asking for a token after the second expiry, and how often.
ASK_FOR, ASK_EVERY = 30.0, 0.25


@dataclass(frozen=True)
class Node:
    """One line of ``CLUSTER NODES``: id, port, role, the primary a replica follows, a primary's slot ranges."""

    id: str
    port: int
    primary: bool
    failed: bool
    primary_id: str
    slots: tuple[str, ...]

    def owns(self, slot: int) -> bool:
        for ranges in self.slots:
            low, _, high = ranges.partition("-")
            if ranges[0].isdigit() and int(low) <= slot <= int(high or low):
                return True
        return False


def live(cluster: Cluster) -> list[int]:
    return [port for port, process in cluster.processes.items() if process.poll() is None]


def view(cluster: Cluster) -> list[Node]:
    """The cluster's view from a live node."""
    nodes = []
    for line in cluster.run(live(cluster)[0], "CLUSTER", "NODES").splitlines():
        id_, address, flags, primary_id, *rest = line.split(" ")
        slots = tuple(rest[4:])
        port = int(address.split(":")[1].split("@")[0])
        nodes.append(Node(id_, port, "master" in flags, "fail" in flags, primary_id, slots))
    return nodes


def info_field(info: str, name: str) -> str | None:
    """The ``name`` field of ``INFO replication`` text, or ``None``."""
    for line in info.splitlines():
        key, _, value = line.partition(":")
        if key == name:
            return value.strip()
    return None


_probe_keys: dict[tuple[str, ...], str] = {}


def probe_key(cluster: Cluster, primary: Node) -> str:
    """A key in one of ``primary``'s slots, by its slot ranges (found with ``CLUSTER KEYSLOT`` once per range)."""
    i = 0
    while primary.slots not in _probe_keys:
        key = f"failover-trials:settled:{{{i}}}"
        if primary.owns(int(cluster.run(primary.port, "CLUSTER", "KEYSLOT", key))):
            _probe_keys[primary.slots] = key
        i += 1
    return _probe_keys[primary.slots]


def replicated(cluster: Cluster, primary: Node, caught_up: bool) -> bool:
    """Whether ``primary`` has a replica that has caught up and receives its writes: after a probe write on
    the primary, the replica's link is up and its processed offset (``slave_repl_offset``) has reached the
    primary's ``master_repl_offset``. A replica that is connected, even one whose acknowledged offset equals
    the primary's, may not be sent writes yet: after a full resync the primary starts sending them only on
    an acknowledgement (``REPLCONF ACK``, sent once a second) that comes after it has put the replica
    online, and the writes made until then wait in its buffer, lost with the primary. With ``--settle
    connected``: a connected replica not in a bulk transfer (the earlier protocol)."""
    info = cluster.run(primary.port, "INFO", "replication")
    if "connected_slaves:1" not in info:
        return False
    if not caught_up:
        return "state=wait_bgsave" not in info and "state=send_bulk" not in info
    # The replica as the primary knows it (the view of another node may not list it yet).
    replica = re.search(r"^slave0:.*\bport=(\d+),state=(\w+)", info, re.MULTILINE)
    if replica is None or replica[2] != "online":
        return False
    cluster.run(primary.port, "SET", probe_key(cluster, primary), str(time.time()))
    want = int(info_field(cluster.run(primary.port, "INFO", "replication"), "master_repl_offset") or "-1")
    theirs = cluster.run(int(replica[1]), "INFO", "replication")
    return (
        info_field(theirs, "master_link_status") == "up"
        and int(info_field(theirs, "slave_repl_offset") or "-1") >= want
    )


def settled(cluster: Cluster, caught_up: bool) -> None:
    """Waits until every node answers and says the cluster is ok, and each primary's replica has caught up
    (see :func:`replicated`)."""
    for _ in range(600):
        ports = live(cluster)
        ok = len(ports) == len(cluster.processes) and all(
            "cluster_state:ok" in cluster.run(port, "CLUSTER", "INFO") for port in ports
        )
        if ok and all(replicated(cluster, n, caught_up) for n in view(cluster) if n.primary):
            return
        time.sleep(0.1)
    raise RuntimeError(f"the cluster did not settle:\n{cluster.run(live(cluster)[0], 'CLUSTER', 'NODES')}")


def promote(cluster: Cluster, port: int) -> None:
    """Promotes the replica at ``port`` in place of its primary (``CLUSTER FAILOVER TAKEOVER``: at once,
    without the primary's agreement or a vote, so also when the primary is dead) and returns once every
    live node's ``CLUSTER NODES`` lists it as a primary."""
    cluster.run(port, "CLUSTER", "FAILOVER", "TAKEOVER")
    node_id = cluster.run(port, "CLUSTER", "MYID")

    def lists_as_primary(node: int) -> bool:
        for line in cluster.run(node, "CLUSTER", "NODES").splitlines():
            fields = line.split(" ")
            if fields[0] == node_id:
                return "master" in fields[2]
        return False

    for _ in range(600):
        if all(lists_as_primary(node) for node in live(cluster)):
            return
        time.sleep(0.05)
    raise RuntimeError(f"the promotion of 127.0.0.1:{port} was not seen within 30 s")


def connect(cluster: Cluster) -> RedisCluster:
    """A cluster client of its own (its own connections, redis-py's defaults but the storage's required
    socket timeout, the 5 s of redis-py 8), started from the nodes that are not failed."""
    nodes = [ClusterNode("127.0.0.1", n.port) for n in view(cluster) if not n.failed]  # type: ignore[no-untyped-call]
    return RedisCluster(startup_nodes=nodes, socket_timeout=5)


class Failover:
    """While armed, the first token request runs the failover before it is forwarded (it has left the
    manager, the tenant has not answered)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failover: Callable[[], None] | None = None
        self.fired = False
        self.error: BaseException | None = None

    def arm(self, failover: Callable[[], None]) -> None:
        with self._lock:
            self._failover, self.fired, self.error = failover, False, None

    def on_request(self, request: httpx.Request) -> None:
        if request.method != "POST" or not request.url.path.endswith("/oauth/token"):
            return
        with self._lock:
            failover, self._failover = self._failover, None
            if failover is not None:
                self.fired = True
                try:
                    failover()
                except Exception as error:  # reported by the trial
                    self.error = error


class FailoverTransport(httpx.BaseTransport):
    """A manager's transport: the shared :class:`Failover` sees each request, then the kit's own transport sends it."""

    def __init__(self, failover: Failover) -> None:
        self._failover = failover
        self._inner = RunningTimeTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self._failover.on_request(request)
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


@dataclass
class Process:
    """One long-lived token manager on a cluster client of its own."""

    manager: TokenManager
    client: RedisCluster


@dataclass
class Trial:
    outcome: str
    """``kept``, ``reuse`` (a refresh token was presented twice and the tenant revoked the session), or
    ``no token: <codes>`` when a manager got none within ``ASK_FOR``."""
    first: str | None
    """The error code of the call that refreshed through the failover (``None``: it got a token)."""
    refresh_took: float
    storage_failed: int
    """The managers' ``storage-failed`` events (a write that failed, the tokens kept in memory)."""
    all_had_token: float
    """Seconds after the second expiry until every manager had a token."""
    second_failed: list[str] = field(default_factory=list)
    """The codes of the calls that failed after the second expiry."""

    def __str__(self) -> str:
        return (
            f"{self.outcome}; the refresh through the failover: {self.first or 'a token'} in "
            f"{self.refresh_took:.3f}s; storage-failed events: {self.storage_failed}; after the next expiry "
            f"every manager had a token in {self.all_had_token:.3f}s "
            f"(calls failed before: {counted(self.second_failed)})"
        )


def counted(codes: list[str]) -> str:
    """``n (CODE: n, …)`` of a list of codes."""
    by = Counter(codes)
    return f"{len(codes)}" + (f" ({', '.join(f'{code}: {n}' for code, n in by.items())})" if by else "")


def ask(manager: TokenManager) -> str | None:
    """The error code of a call, or ``None`` when it got a token."""
    try:
        manager.get_access_token()
        return None
    except TenantIntegrationError as error:
        return error.code


def ask_until_served(manager: TokenManager, start: float) -> tuple[list[str], str | None]:
    """Asks for a token, and again every ``ASK_EVERY`` after a failure, for at most ``ASK_FOR``: the codes
    of the failed calls, and the last one if it got none."""
    failed: list[str] = []
    while True:
        code = ask(manager)
        if code is None:
            return failed, None
        failed.append(code)
        if time.monotonic() - start > ASK_FOR:
            return failed, code
        time.sleep(ASK_EVERY)


def make_processes(
    cluster: Cluster, sandbox: SandboxProcess, storage: Callable[[RedisCluster], RedisClusterStorage],
    failover: Failover, count: int, failures: list[object],
) -> list[Process]:  # fmt: skip
    processes = []
    for _ in range(count):
        client = connect(cluster)
        manager = TokenManager(
            sandbox.url, CLIENT, REDIRECT, ["profile:read"], storage=storage(client), now=sandbox.clock.now,
            transport=FailoverTransport(failover),
        )  # fmt: skip
        manager.on("storage-failed", failures.append)
        processes.append(Process(manager, client))
    return processes


def trial(cluster: Cluster, sandbox: SandboxProcess, back: bool, replicas: Replicas | None, count: int) -> Trial:
    prefix = f"trial-{uuid.uuid4()}:"
    failover = Failover()
    failures: list[object] = []
    processes = make_processes(
        cluster, sandbox, lambda client: RedisClusterStorage(client, prefix=prefix, replicas=replicas), failover,
        count, failures,
    )  # fmt: skip
    try:
        sign_in_through_sandbox(processes[0].manager)
        for process in processes:  # every client talks to the session's primary
            process.manager.get_access_token()
        slot = int(processes[0].client.keyslot(redis_key(prefix, f"tenant-integration:{sandbox.url}:{CLIENT}:tokens")))  # type: ignore[no-untyped-call]
        nodes = view(cluster)
        primary = next(n for n in nodes if n.primary and n.owns(slot))
        replica = next(n for n in nodes if not n.primary and n.primary_id == primary.id)
        killed = cluster.processes[primary.port]
        since = sandbox.last_seq()

        def kill_and_promote() -> None:
            killed.send_signal(signal.SIGKILL)
            killed.wait()
            promote(cluster, replica.port)

        def restart() -> None:
            # The killed node comes back on its port with its cluster config file: a replica of the promoted one.
            cluster.processes[primary.port] = subprocess.Popen(  # noqa: S603 (the argv the tests' starter used)
                killed.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )

        sandbox.advance(16 * 60)
        failover.arm(kill_and_promote)
        refreshed = time.monotonic()
        first = ask(processes[0].manager)  # the refresh, by the first manager alone
        refresh_took = time.monotonic() - refreshed
        if not failover.fired or failover.error is not None:
            raise RuntimeError(f"the failover at the refresh (run: {failover.fired}): {failover.error}")
        if back:
            restart()

        sandbox.advance(16 * 60)
        start = time.monotonic()
        with ThreadPoolExecutor(len(processes)) as pool:
            served = list(pool.map(lambda p: ask_until_served(p.manager, start), processes))
        all_had_token = time.monotonic() - start
        missing = sorted(code for _, code in served if code is not None)
        outcome = f"no token: {', '.join(missing)}" if missing else "kept"
        if any(e["detail"] == "refresh_token_reused" for e in sandbox.events(after=since)):
            outcome = "reuse"
        if not back:
            restart()
        return Trial(
            outcome, first, refresh_took, len(failures), all_had_token, [c for failed, _ in served for c in failed]
        )
    finally:
        for process in processes:
            process.client.close()


def summary(results: list[Trial]) -> str:
    outcomes = Counter(r.outcome for r in results)
    others = ", ".join(f"{what}: {n}" for what, n in outcomes.items() if what != "kept")
    refreshes = sorted(r.refresh_took for r in results)
    times = sorted(r.all_had_token for r in results if r.outcome == "kept")
    timing = (
        f"; after the next expiry every manager had a token within {times[len(times) // 2]:.3f}s (median), "
        f"{times[-1]:.3f}s (longest)"
        if times
        else ""
    )
    return (
        f"session kept in {outcomes['kept']} of {len(results)} trials{f' (otherwise {others})' if others else ''}; "
        f"the refresh through the failover failed in {sum(r.first is not None for r in results)} and took "
        f"{refreshes[len(refreshes) // 2]:.3f}s (median), {refreshes[-1]:.3f}s (longest); "
        f"{sum(r.storage_failed for r in results)} storage-failed events; calls failed after the next expiry: "
        f"{counted([c for r in results for c in r.second_failed])}{timing}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Failover lived through by long-running processes, measured (issue 36)."
    )
    parser.add_argument("trials", nargs="?", type=int, default=20, help="trials per mode (default 20)")
    parser.add_argument("--processes", type=int, default=3, help="the long-lived token managers of each trial")
    parser.add_argument(
        "--settle",
        choices=("caught-up", "connected"),
        default="caught-up",
        help="what the next trial waits for: caught-up (every replica's offset has reached its primary's) "
        "or connected (the earlier protocol)",
    )
    args = parser.parse_args()
    if args.trials < 1 or args.processes < 1:
        parser.error("the number of trials per mode and --processes are positive integers")
    caught_up = args.settle == "caught-up"
    # The managers' failed writes are counted, not logged each time.
    logging.getLogger("tenant_integration").setLevel(logging.CRITICAL)
    cluster = Cluster(primaries=3, replicas=1)
    try:
        settle = (
            "settled: every replica has received a probe write made on its primary"
            if caught_up
            else "settled (earlier protocol): every primary has a connected replica not in a bulk transfer"
        )
        print(
            f"{cluster.version}; redis-py {redis.__version__}; "
            f"{args.processes} long-lived token managers per trial; {settle}",
            flush=True,
        )
        with SandboxProcess(
            clients=(SandboxClient(id=CLIENT, redirect_uris=(REDIRECT,)),),
            command=["node", str(REPO / "packages" / "sandbox" / "dist" / "cli.js")],
        ) as sandbox:
            settled(cluster, caught_up)
            for back, replicas in ((True, None), (False, None), (True, REPLICAS), (False, REPLICAS)):
                mode = (
                    f"{'dead node back after the first calls' if back else 'dead node stays down'}, "
                    f"{'replicas=Replicas(1, 1.0)' if replicas else 'no replicas option'}"
                )
                results = []
                for i in range(args.trials):
                    result = trial(cluster, sandbox, back, replicas, args.processes)
                    settled(cluster, caught_up)
                    print(f"  {mode}, trial {i + 1}: {result}", flush=True)
                    results.append(result)
                print(f"{mode}: {summary(results)}", flush=True)
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
