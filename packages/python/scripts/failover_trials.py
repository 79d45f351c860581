"""Failover, measured (issue 31): how often a session survives its Redis Cluster primary being killed
right after a refresh, with the replica promoted by CLUSTER FAILOVER, with and without the
``replicas`` (``WAIT``) option of :class:`RedisClusterStorage`. The protocol of the TypeScript kit's
``packages/token-store-redis/scripts/failover-trials.mjs``, so the kits' figures compare. Not part of
the tests (it is a measurement, not a check); needs redis-server and redis-cli, and the built sandbox
(``packages/sandbox/dist``). From this package, in the repository's venv:

    python scripts/failover_trials.py [--settle connected] [trials per mode, default 50]

Each trial: a token manager signs in on a 3-primary cluster with a replica per primary (the tests'
cluster, ``tests/test_redis_cluster.py``); the sandbox's clock passes the access token's expiry and the
manager refreshes (the tenant rotates the refresh token, the storage writes the new one: ``SET``, and
with ``replicas`` ``WAIT 1``); right after the refresh returned, the primary of the session's slot is
killed (SIGKILL) and its replica promoted (``CLUSTER FAILOVER TAKEOVER``: at once, without the dead
primary's agreement). A second token manager, on cluster connections of its own as another process
would have, then needs a token after the next expiry: the session is kept when it refreshes with the
rotated token the replica holds, and lost when the replica lacked the last write (it presents the
rotated-away token: the sandbox, under strict rotation, revokes the family). The killed node is
restarted as a replica of the new primary, and the next trial waits until the cluster has settled:
every primary's replica has received a probe write made on the primary, so it is sent the primary's
writes as they are made (see :func:`replicated`; ``--settle connected`` waits only for a connected
replica not in a bulk transfer, the earlier protocol, to compare).

Each trial prints the replication offsets at the kill: the primary's ``master_repl_offset`` and the
replica's ``slave_repl_offset`` and link status, read together over open connections right before the
kill, and the replica's offset right after it (what it was promoted with).
"""

from __future__ import annotations

import argparse
import logging
import re
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import redis
from redis.cluster import ClusterNode, RedisCluster

from tenant_integration import TenantIntegrationError, TokenManager, TokenManagerError
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


def field(info: str, name: str) -> str | None:
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
    want = int(field(cluster.run(primary.port, "INFO", "replication"), "master_repl_offset") or "-1")
    theirs = cluster.run(int(replica[1]), "INFO", "replication")
    return field(theirs, "master_link_status") == "up" and int(field(theirs, "slave_repl_offset") or "-1") >= want


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


@dataclass(frozen=True)
class Offsets:
    """The replication offsets at the kill: the primary's ``master_repl_offset`` and the replica's
    ``slave_repl_offset`` and ``master_link_status``, read together right before the kill, and the
    replica's ``slave_repl_offset`` right after it, before its promotion (-1: not read)."""

    primary: int
    replica: int
    link: str
    promoted: int

    def __str__(self) -> str:
        return (
            f"offsets at the kill: primary {self.primary}, replica {self.replica} (link {self.link}), "
            f"replica after the kill {self.promoted} ({self.primary - self.promoted} behind)"
        )


def probe(port: int) -> redis.Redis:
    """A plain client of one node, its connection open, to read ``INFO replication`` without starting a process."""
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=2, socket_connect_timeout=1)
    client.ping()
    return client


def replication(client: redis.Redis, name: str) -> tuple[int, str]:
    """The offset ``name`` and ``master_link_status`` of ``INFO replication``; ``-1`` when it does not answer."""
    try:
        info = client.info("replication")
    except redis.RedisError:
        return -1, "unread"
    return int(info.get(name, -1)), str(info.get("master_link_status", ""))


def connect(cluster: Cluster) -> RedisCluster:
    """A cluster client of its own (its own connections), started from the nodes that are not failed."""
    nodes = [ClusterNode("127.0.0.1", n.port) for n in view(cluster) if not n.failed]  # type: ignore[no-untyped-call]
    return RedisCluster(startup_nodes=nodes, socket_timeout=2, socket_connect_timeout=1)


def manager(storage: RedisClusterStorage, sandbox: SandboxProcess) -> TokenManager:
    return TokenManager(sandbox.url, CLIENT, REDIRECT, ["profile:read"], storage=storage, now=sandbox.clock.now)


@dataclass(frozen=True)
class Trial:
    outcome: str
    """``kept``, ``reuse`` (a token was handed out but the sandbox saw a reuse), or the second manager's error code."""
    refresh_failed: bool
    """The refresh's writes reported ``STORAGE_FAILED`` (with ``replicas``: a ``REPLICATION_TIMEOUT``)."""
    second_failed: bool
    """The second manager's writes did: with ``replicas``, the promoted primary has no replica until the
    killed node rejoins, so its ``WAIT`` times out (its token is handed out all the same)."""
    offsets: Offsets
    killed: int
    """The port of the node killed (and restarted as a replica)."""
    resynced: bool
    """The session's replica was the node the trial before restarted (it had just made a full resync)."""

    def __str__(self) -> str:
        return (
            f"{self.outcome}; {self.offsets}; its replica resynced after the trial before: "
            f"{'yes' if self.resynced else 'no'}"
        )


def trial(
    cluster: Cluster, sandbox: SandboxProcess, replicas: Replicas | None, caught_up: bool, restarted: int | None
) -> Trial:
    prefix = f"trial-{uuid.uuid4()}:"
    first = connect(cluster)
    a = manager(RedisClusterStorage(first, prefix=prefix, replicas=replicas), sandbox)
    sign_in_through_sandbox(a)
    slot = int(first.keyslot(redis_key(prefix, f"tenant-integration:{sandbox.url}:{CLIENT}:tokens")))  # type: ignore[no-untyped-call]
    nodes = view(cluster)
    primary = next(n for n in nodes if n.primary and n.owns(slot))
    replica = next(n for n in nodes if not n.primary and n.primary_id == primary.id)
    # Connections of their own to read the offsets at the kill, opened now so that reading them
    # delays the kill by one round trip.
    primary_probe, replica_probe = probe(primary.port), probe(replica.port)

    sandbox.advance(16 * 60)
    # A refresh hands out its tokens even when their write failed, and reports that as an event.
    refresh_failures: list[TokenManagerError] = []
    a.on("storage-failed", refresh_failures.append)
    try:
        a.get_access_token()  # the refresh: the rotated token written (with replicas, acknowledged by the replica)
    except TokenManagerError as error:
        refresh_failures.append(error)
    with ThreadPoolExecutor(2) as both:
        at_primary = both.submit(replication, primary_probe, "master_repl_offset")
        at_replica = both.submit(replication, replica_probe, "slave_repl_offset")
        (primary_offset, _), (replica_offset, link) = at_primary.result(), at_replica.result()
    killed = cluster.processes[primary.port]
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    first.close()
    promoted, _ = replication(replica_probe, "slave_repl_offset")
    primary_probe.close()
    replica_probe.close()
    offsets = Offsets(primary_offset, replica_offset, link, promoted)
    cluster.run(replica.port, "CLUSTER", "FAILOVER", "TAKEOVER")
    for _ in range(100):
        if cluster.run(replica.port, "ROLE").startswith("master"):
            break
        time.sleep(0.05)

    sandbox.advance(16 * 60)
    since = sandbox.last_seq()
    second = connect(cluster)
    b = manager(RedisClusterStorage(second, prefix=prefix, replicas=replicas), sandbox)
    second_failures: list[TokenManagerError] = []
    b.on("storage-failed", second_failures.append)
    try:
        b.get_access_token()
        reused = any(e["detail"] == "refresh_token_reused" for e in sandbox.events(after=since))
        outcome = "reuse" if reused else "kept"
    except TenantIntegrationError as error:
        # SESSION_ENDED: the replica lacked the rotated token, the rotated-away one was presented.
        outcome = error.code
    second.close()
    # The killed node comes back on its port with its cluster config file: a replica of the promoted one.
    cluster.processes[primary.port] = subprocess.Popen(  # noqa: S603 (the argv the tests' starter used)
        killed.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    settled(cluster, caught_up)
    return Trial(
        outcome,
        bool(refresh_failures),
        bool(second_failures),
        offsets,
        killed=primary.port,
        resynced=replica.port == restarted,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="Failover, measured (issue 31).")
    parser.add_argument("trials", nargs="?", type=int, default=50, help="trials per mode (default 50)")
    parser.add_argument(
        "--settle",
        choices=("caught-up", "connected"),
        default="caught-up",
        help="what the next trial waits for: caught-up (every replica's offset has reached its primary's) "
        "or connected (the earlier protocol)",
    )
    args = parser.parse_args()
    if args.trials < 1:
        parser.error("the number of trials per mode is a positive integer")
    caught_up = args.settle == "caught-up"
    # The second manager's failed writes (see Trial.second_failed) are counted, not logged each time.
    logging.getLogger("tenant_integration").setLevel(logging.CRITICAL)
    cluster = Cluster(primaries=3, replicas=1)
    try:
        settle = (
            "settled: every replica has received a probe write made on its primary"
            if caught_up
            else "settled (earlier protocol): every primary has a connected replica not in a bulk transfer"
        )
        print(f"{cluster.version}; redis-py {redis.__version__}; {settle}", flush=True)
        with SandboxProcess(
            clients=(SandboxClient(id=CLIENT, redirect_uris=(REDIRECT,)),),
            command=["node", str(REPO / "packages" / "sandbox" / "dist" / "cli.js")],
        ) as sandbox:
            settled(cluster, caught_up)
            restarted: int | None = None
            for replicas in (None, REPLICAS):
                mode = "replicas=Replicas(1, 1.0)" if replicas else "no replicas option"
                results = []
                for i in range(args.trials):
                    result = trial(cluster, sandbox, replicas, caught_up, restarted)
                    restarted = result.killed
                    print(f"  {mode}, trial {i + 1}: {result}", flush=True)
                    results.append(result)
                outcomes = Counter(result.outcome for result in results)
                others = ", ".join(f"{what}: {n}" for what, n in outcomes.items() if what != "kept")
                lost = [r for r in results if r.outcome != "kept"]
                behind = [r for r in results if r.offsets.promoted < r.offsets.primary]
                print(
                    f"{mode}: session kept in {outcomes['kept']} of {args.trials} trials"
                    f"{f' (otherwise {others})' if others else ''}; "
                    f"{sum(r.refresh_failed for r in results)} refreshes reported STORAGE_FAILED; "
                    f"the second manager's writes failed in {sum(r.second_failed for r in results)}; "
                    f"the promoted replica was behind the killed primary in {len(behind)} trials "
                    f"({sum(r.outcome != 'kept' for r in behind)} of the {len(lost)} lost); "
                    f"{sum(r.resynced for r in lost)} of the lost trials were on the pair the trial before "
                    "had resynced",
                    flush=True,
                )
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
