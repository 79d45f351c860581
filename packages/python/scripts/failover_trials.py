"""Failover, measured (issue 31): how often a session survives its Redis Cluster primary being killed
right after a refresh, with the replica promoted by CLUSTER FAILOVER, with and without the
``replicas`` (``WAIT``) option of :class:`RedisClusterStorage`. The protocol of the TypeScript kit's
``packages/token-store-redis/scripts/failover-trials.mjs``, so the kits' figures compare. Not part of
the tests (it is a measurement, not a check); needs redis-server and redis-cli, and the built sandbox
(``packages/sandbox/dist``). From this package, in the repository's venv:

    python scripts/failover_trials.py [trials per mode, default 50]

Each trial: a manager signs in on a 3-primary cluster with a replica per primary (the tests' cluster,
``tests/test_redis_cluster.py``); the sandbox's clock passes the access token's expiry and the manager
refreshes (the tenant rotates the refresh token, the storage writes the new one: ``SET``, and with
``replicas`` ``WAIT 1``); right after the refresh returned, the primary of the session's slot is
killed (SIGKILL) and its replica promoted (``CLUSTER FAILOVER TAKEOVER``: at once, without the dead
primary's agreement). A second manager, on its own cluster connections, then needs a token after the
next expiry: the session is kept when it refreshes with the rotated token the replica holds, and lost
when the replica lacked the last write (it presents the rotated-away token: the sandbox, under strict
rotation, revokes the family). The killed node is restarted as a replica of the new primary, and the
next trial waits until every primary has a replica in sync.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
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


def settled(cluster: Cluster) -> None:
    """Waits until every node answers, says the cluster is ok, and each primary has a replica in sync."""
    for _ in range(600):
        ports = live(cluster)
        ok = len(ports) == len(cluster.processes) and all(
            "cluster_state:ok" in cluster.run(port, "CLUSTER", "INFO") for port in ports
        )
        if ok and all(
            "connected_slaves:1" in (info := cluster.run(n.port, "INFO", "replication"))
            and "state=wait_bgsave" not in info
            and "state=send_bulk" not in info
            for n in view(cluster)
            if n.primary
        ):
            return
        time.sleep(0.1)
    raise RuntimeError(f"the cluster did not settle:\n{cluster.run(live(cluster)[0], 'CLUSTER', 'NODES')}")


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


def trial(cluster: Cluster, sandbox: SandboxProcess, replicas: Replicas | None) -> Trial:
    prefix = f"trial-{uuid.uuid4()}:"
    first = connect(cluster)
    a = manager(RedisClusterStorage(first, prefix=prefix, replicas=replicas), sandbox)
    sign_in_through_sandbox(a)
    slot = int(first.keyslot(redis_key(prefix, f"tenant-integration:{sandbox.url}:{CLIENT}:tokens")))  # type: ignore[no-untyped-call]
    nodes = view(cluster)
    primary = next(n for n in nodes if n.primary and n.owns(slot))
    replica = next(n for n in nodes if not n.primary and n.primary_id == primary.id)

    sandbox.advance(16 * 60)
    # A refresh hands out its tokens even when their write failed, and reports that as an event.
    refresh_failures: list[TokenManagerError] = []
    a.on("storage-failed", refresh_failures.append)
    try:
        a.get_access_token()  # the refresh: the rotated token written (with replicas, acknowledged by the replica)
    except TokenManagerError as error:
        refresh_failures.append(error)
    killed = cluster.processes[primary.port]
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    first.close()
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
    settled(cluster)
    return Trial(outcome, bool(refresh_failures), bool(second_failures))


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    # The second manager's failed writes (see Trial.second_failed) are counted, not logged each time.
    logging.getLogger("tenant_integration").setLevel(logging.CRITICAL)
    cluster = Cluster(primaries=3, replicas=1)
    try:
        print(f"{cluster.version}; redis-py {redis.__version__}", flush=True)
        with SandboxProcess(
            clients=(SandboxClient(id=CLIENT, redirect_uris=(REDIRECT,)),),
            command=["node", str(REPO / "packages" / "sandbox" / "dist" / "cli.js")],
        ) as sandbox:
            settled(cluster)
            for replicas in (None, REPLICAS):
                results = [trial(cluster, sandbox, replicas) for _ in range(trials)]
                outcomes = Counter(result.outcome for result in results)
                others = ", ".join(f"{what}: {n}" for what, n in outcomes.items() if what != "kept")
                mode = "replicas=Replicas(1, 1.0)" if replicas else "no replicas option"
                print(
                    f"{mode}: session kept in {outcomes['kept']} of {trials} trials"
                    f"{f' (otherwise {others})' if others else ''}; "
                    f"{sum(r.refresh_failed for r in results)} refreshes reported STORAGE_FAILED; "
                    f"the second manager's writes failed in {sum(r.second_failed for r in results)}",
                    flush=True,
                )
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
