"""RedisClusterStorage and RedisClusterLock on a real Redis Cluster (issue 31), started here from
Debian's redis-server: three primaries with a replica each, on loopback ports chosen at run time.
The keys of a session share one slot (the TypeScript and Go kits' scheme); a fleet of managers on
the cluster makes one refresh per expiry; a waiter is woken by a release published through another
node; ``replicas`` (``WAIT``) is asked of the slot's primary; a stopped primary is ``STORAGE_FAILED``
and nothing stored is lost; bad input is refused with ``INVALID_OPTIONS`` saying why."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, LoadBalancingStrategy, RedisCluster
from redis.retry import Retry

from tenant_integration import TokenManagerError
from tenant_integration.storage.errors import RedisStorageError, RedisStorageOptionsError
from tenant_integration.storage.redis import RedisClusterLock, RedisClusterStorage, RedisLock, RedisStorage, redis_key

SESSION = "tenant-integration:https://acme.tenant.test:demo"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """``primaries`` redis-servers (and ``replicas`` per primary) with ``--cluster-enabled yes``, joined by
    ``redis-cli --cluster create``, without persistence; stopped by their pids."""

    def __init__(self, primaries: int = 3, replicas: int = 0) -> None:
        server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
        if server is None or cli is None:
            if os.environ.get("CI") == "true":
                pytest.fail("redis-server and redis-cli are not installed (CI installs Debian's redis-server)")
            pytest.skip("redis-server is not installed (apt-get install redis-server)")
        self.cli = cli
        self.version = subprocess.run([server, "--version"], capture_output=True, text=True, check=True).stdout.strip()
        self.dir = tempfile.mkdtemp(prefix="redis-cluster-")
        self.processes: dict[int, subprocess.Popen[bytes]] = {}
        try:
            for _ in range(primaries * (1 + replicas)):
                port, bus = _free_port(), _free_port()
                self.processes[port] = subprocess.Popen(
                    [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                     "--cluster-enabled", "yes", "--cluster-port", str(bus), "--cluster-node-timeout", "60000",
                     "--cluster-config-file", str(Path(self.dir) / f"nodes-{port}.conf"), "--dir", self.dir],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )  # fmt: skip
            for port in self.processes:
                self._until(self._answers(port), f"node {port} did not start")
            self.run(
                next(iter(self.processes)), "--cluster", "create",
                *(f"127.0.0.1:{p}" for p in self.processes), "--cluster-replicas", str(replicas), "--cluster-yes",
            )  # fmt: skip
            self._until(self._ready, "the cluster did not become ready")
        except BaseException:
            self.stop()
            raise

    def run(self, port: int, *args: str) -> str:
        done = subprocess.run(
            [self.cli, "-h", "127.0.0.1", "-p", str(port), *args], capture_output=True, text=True, timeout=30
        )
        return done.stdout.strip() if done.returncode == 0 else f"ERR {done.stderr}"

    def _answers(self, port: int) -> Callable[[], bool]:
        return lambda: self.run(port, "PING") == "PONG"

    def _ready(self) -> bool:
        for port in self.processes:
            info = self.run(port, "CLUSTER", "INFO")
            if "cluster_state:ok" not in info or f"cluster_known_nodes:{len(self.processes)}" not in info:
                return False
        return True

    @staticmethod
    def _until(check: Callable[[], bool], why: str) -> None:
        deadline = time.monotonic() + 30
        while not check():
            if time.monotonic() > deadline:
                raise RuntimeError(why)
            time.sleep(0.05)

    def client(self, **kwargs: object) -> RedisCluster:
        options: dict[str, object] = {"socket_timeout": 5, **kwargs}
        nodes = [ClusterNode("127.0.0.1", p) for p in self.processes]  # type: ignore[no-untyped-call]
        return RedisCluster(startup_nodes=nodes, **options)  # type: ignore[arg-type]

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.kill(process.pid, signal.SIGCONT)  # a node a test stopped would never act on SIGTERM
                process.terminate()
                process.wait(timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    started = Cluster(primaries=3, replicas=1)
    # Which server ran, in the test output (-s, or the report of a failure).
    print(f"Redis Cluster of {len(started.processes)} nodes (3 primaries, 1 replica each): {started.version}")
    yield started
    started.stop()


@pytest.fixture
def client(cluster: Cluster) -> Iterator[RedisCluster]:
    connection = cluster.client()
    yield connection
    connection.close()


@pytest.fixture
def prefix() -> str:
    return f"test-{secrets.token_hex(4)}:"


def test_the_four_keys_of_a_session_share_one_slot_and_a_round_trip_works(client: RedisCluster, prefix: str) -> None:
    kinds = ("tokens", "pending", "intent", "lock")
    slots = {client.keyslot(redis_key(prefix, f"{SESSION}:{kind}")) for kind in kinds}  # type: ignore[no-untyped-call]
    assert len(slots) == 1
    storage = RedisClusterStorage(client, prefix=prefix)
    storage.set(f"{SESSION}:tokens", '{"a":1}')
    assert client.get(f"{prefix}tenant-integration:{{https://acme.tenant.test:demo}}:tokens") == b'{"a":1}'
    assert storage.get(f"{SESSION}:tokens") == '{"a":1}'
    storage.delete(f"{SESSION}:tokens")
    assert storage.get(f"{SESSION}:tokens") is None


def test_the_lock_runs_one_task_at_a_time_across_cluster_clients(cluster: Cluster, prefix: str) -> None:
    clients = [cluster.client() for _ in range(3)]
    try:
        running, most = [0], [0]
        guard = threading.Lock()

        def task() -> None:
            with guard:
                running[0] += 1
                most[0] = max(most[0], running[0])
            time.sleep(0.02)
            with guard:
                running[0] -= 1

        locks = [RedisClusterLock(c, prefix=prefix) for c in clients]
        threads = [threading.Thread(target=locks[i % 3], args=(f"{SESSION}:lock", task)) for i in range(9)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert most[0] == 1
        assert clients[0].exists(redis_key(prefix, f"{SESSION}:lock")) == 0
    finally:
        for c in clients:
            c.close()


def test_a_waiter_is_woken_by_a_release_published_through_another_node(cluster: Cluster, prefix: str) -> None:
    holder_client, waiter_client = cluster.client(), cluster.client()
    try:
        holder = RedisClusterLock(holder_client, prefix=prefix)
        # Polls once a minute: taking the lock within seconds of the release means the message woke it.
        waiter = RedisClusterLock(waiter_client, prefix=prefix, retry_delay=60, max_retry_delay=60, wait_timeout=120)
        taken, release, woken = threading.Event(), threading.Event(), threading.Event()

        def hold() -> None:
            taken.set()
            release.wait()

        holding = threading.Thread(target=holder, args=(f"{SESSION}:lock", hold))
        holding.start()
        taken.wait()
        waiting = threading.Thread(target=waiter, args=(f"{SESSION}:lock", woken.set), daemon=True)
        waiting.start()
        time.sleep(0.3)  # it tried, and subscribed
        release.set()
        holding.join()
        assert woken.wait(10), "the waiter was not woken by the release"
    finally:
        holder_client.close()
        waiter_client.close()


def test_replicas_waits_for_the_replica_of_the_slots_primary(client: RedisCluster, prefix: str) -> None:
    RedisClusterStorage(client, prefix=prefix, replicas=(1, 5)).set(f"{SESSION}:tokens", "v")
    # Each primary has one replica: two are never there, and WAIT on that primary says so.
    with pytest.raises(RedisStorageError) as caught:
        RedisClusterStorage(client, prefix=prefix, replicas=(2, 0.05)).set(f"{SESSION}:tokens", "v2")
    assert caught.value.code == "REPLICATION_TIMEOUT"
    assert "v2" not in str(caught.value)


def test_bad_input_is_refused_with_invalid_options_saying_why(cluster: Cluster, client: RedisCluster) -> None:
    single = redis.Redis(host="127.0.0.1", port=next(iter(cluster.processes)), socket_timeout=5)
    try:
        for make in (RedisStorage, RedisLock):
            with pytest.raises(RedisStorageOptionsError, match=r"is a redis\.cluster\.RedisCluster: use RedisCluster"):
                make(client)
        for make in (RedisClusterStorage, RedisClusterLock):
            with pytest.raises(RedisStorageOptionsError, match=r"must be a redis\.cluster\.RedisCluster: use Redis"):
                make(single)
            with pytest.raises(RedisStorageOptionsError, match="split the session across slots"):
                make(client, prefix="app{x}:")
            with pytest.raises(RedisStorageOptionsError, match="reads from replicas"):
                make(cluster.client(load_balancing_strategy=LoadBalancingStrategy.ROUND_ROBIN))
        with pytest.raises(RedisStorageOptionsError, match="split the session across slots") as caught:
            RedisStorage(single, prefix="{tenant}:")
        assert caught.value.code == "INVALID_OPTIONS"
    finally:
        single.close()


def test_a_stopped_primary_is_storage_failed_and_nothing_stored_is_lost(cluster: Cluster, prefix: str) -> None:
    # No retries: each unanswered command fails after its socket_timeout (redis-py retries by default).
    client = cluster.client(socket_timeout=0.5, retry=Retry(NoBackoff(), 0))
    try:
        storage = RedisClusterStorage(client, prefix=prefix)
        storage.set(f"{SESSION}:tokens", "kept")
        key = redis_key(prefix, f"{SESSION}:tokens")
        node = client.get_node_from_key(key)  # type: ignore[no-untyped-call]
        process = cluster.processes[int(node.port)]
        os.kill(process.pid, signal.SIGSTOP)
        try:
            with pytest.raises(TokenManagerError) as caught:
                storage.lock(f"{SESSION}:lock", lambda: None)
            assert caught.value.code == "STORAGE_FAILED"
            assert redis_key(prefix, f"{SESSION}:lock") in str(caught.value)
            with pytest.raises(RedisStorageError) as failed:
                storage.get(f"{SESSION}:tokens")
            assert failed.value.code == "COMMAND_FAILED"
        finally:
            os.kill(process.pid, signal.SIGCONT)
        _wait_until_read(storage, f"{SESSION}:tokens", "kept")
    finally:
        client.close()


def _wait_until_read(storage: RedisClusterStorage, key: str, expected: str) -> None:
    """Reads ``key`` until it gives ``expected`` (the node resumed: the record was never lost), within 10 s."""
    deadline = time.monotonic() + 10
    while True:
        try:
            assert storage.get(key) == expected
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_a_stopped_primary_costs_one_try_per_command_even_with_redis_pys_default_retries(
    cluster: Cluster, prefix: str
) -> None:
    """redis-py's cluster client retries a command whose node gave no answer (10 times by default, each
    up to ``socket_timeout``): a call would take eleven times the bound the storage documents. The
    storage sends each command to the slot's primary as one try. Regression: the conformance scenario
    redis-outage on a cluster, where the Python kit, on a client built as the docs show, answered a call
    after 55 s instead of 5."""
    client = cluster.client(socket_timeout=0.5)  # redis-py's default retries
    tries: list[tuple[int, str]] = []
    execute = client._execute_command

    def counted(target_node: ClusterNode, *args: object, **kwargs: object) -> object:
        tries.append((int(target_node.port), str(args[0])))
        return execute(target_node, *args, **kwargs)  # type: ignore[no-untyped-call]

    client._execute_command = counted  # type: ignore[method-assign]
    try:
        storage = RedisClusterStorage(client, prefix=prefix)
        storage.set(f"{SESSION}:tokens", "kept")
        port = int(client.get_node_from_key(redis_key(prefix, f"{SESSION}:tokens")).port)  # type: ignore[no-untyped-call]
        process = cluster.processes[port]
        tries.clear()
        os.kill(process.pid, signal.SIGSTOP)
        try:
            with pytest.raises(RedisStorageError) as failed:
                storage.get(f"{SESSION}:tokens")
            assert failed.value.code == "COMMAND_FAILED"
            with pytest.raises(TokenManagerError) as caught:
                storage.lock(f"{SESSION}:lock", lambda: None)
            assert caught.value.code == "STORAGE_FAILED"
        finally:
            os.kill(process.pid, signal.SIGCONT)
        assert [command for node, command in tries if node == port] == ["GET", "SET"]
        _wait_until_read(storage, f"{SESSION}:tokens", "kept")
    finally:
        client.close()


def test_a_lease_a_stopped_primary_took_after_the_set_nx_timed_out_is_released_at_the_next_try(
    cluster: Cluster, prefix: str
) -> None:
    """Decision D4, as reported in issue 36: the primary of the lock's slot stopped, the lock's ``SET NX``
    timed out at the client, and the primary ran it when it resumed. The next try releases that lease
    at once instead of waiting it out (it waited 8 s more before)."""
    client = cluster.client(socket_timeout=0.5, retry=Retry(NoBackoff(), 0))
    watcher = cluster.client()
    try:
        lock = RedisClusterLock(client, prefix=prefix, lease=10, wait_timeout=5)
        name, key = f"{SESSION}:lock", redis_key(prefix, f"{SESSION}:lock")
        lock(name, lambda: None)  # a connection to the primary: the SET NX is written, then unanswered
        process = cluster.processes[int(client.get_node_from_key(key).port)]  # type: ignore[no-untyped-call]
        os.kill(process.pid, signal.SIGSTOP)
        try:
            with pytest.raises(TokenManagerError) as caught:
                lock(name, lambda: None)
            assert caught.value.code == "STORAGE_FAILED"
        finally:
            os.kill(process.pid, signal.SIGCONT)
        deadline = time.monotonic() + 10
        while not watcher.exists(key):  # the scenario: the resumed primary ran it; nobody holds the lease
            assert time.monotonic() < deadline, "the resumed primary did not run the SET NX"
            time.sleep(0.02)
        started = time.monotonic()
        assert lock(name, lambda: "ran") == "ran"
        assert time.monotonic() - started < 3, "the next try waited for a lease of its own"
        assert not watcher.exists(key)
    finally:
        client.close()
        watcher.close()


def test_the_session_is_kept_while_its_slot_migrates_between_primaries(cluster: Cluster, prefix: str) -> None:
    """CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE a key at a time, SETSLOT NODE, twice, while a
    writer takes the lock and rewrites the record: redis-py follows ASK and MOVED; every step either
    succeeds or raises the documented typed error, and the last write is what is read after."""
    client = cluster.client()
    storage = RedisClusterStorage(client, prefix=prefix)
    tokens, lock = f"{SESSION}:tokens", f"{SESSION}:lock"
    storage.set(tokens, "0")
    slot = client.keyslot(redis_key(prefix, tokens))  # type: ignore[no-untyped-call]
    ids = {port: cluster.run(port, "CLUSTER", "MYID") for port in cluster.processes}
    primaries = [port for port in cluster.processes if cluster.run(port, "ROLE").startswith("master")]
    owner = next(port for port in primaries if cluster.run(port, "CLUSTER", "COUNTKEYSINSLOT", str(slot)) != "0")
    first_owner = owner
    written: list[int] = []
    failures: list[BaseException] = []
    moving = threading.Event()
    moving.set()

    def write() -> None:
        n = 0
        while moving.is_set():
            n += 1
            try:

                def read_then_write(n: int = n) -> None:
                    storage.get(tokens)
                    storage.set(tokens, str(n))

                storage.lock(lock, read_then_write)
                written.append(n)
            except (RedisStorageError, TokenManagerError) as e:
                failures.append(e)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        for _ in range(2):
            target = primaries[(primaries.index(owner) + 1) % len(primaries)]
            cluster.run(target, "CLUSTER", "SETSLOT", str(slot), "IMPORTING", ids[owner])
            cluster.run(owner, "CLUSTER", "SETSLOT", str(slot), "MIGRATING", ids[target])
            while keys := [k for k in cluster.run(owner, "CLUSTER", "GETKEYSINSLOT", str(slot), "1").split("\n") if k]:
                cluster.run(owner, "MIGRATE", "127.0.0.1", str(target), keys[0], "0", "5000")
                time.sleep(0.03)
            for port in [target, owner, *(p for p in primaries if p not in (target, owner))]:
                cluster.run(port, "CLUSTER", "SETSLOT", str(slot), "NODE", ids[target])
            owner = target
            time.sleep(0.2)
    finally:
        moving.clear()
        writer.join()
    assert owner != first_owner
    assert cluster.run(owner, "CLUSTER", "COUNTKEYSINSLOT", str(slot)) != "0", (
        "the slot's keys moved to its new primary"
    )
    assert written, "no write went through during the migration"
    assert all(getattr(e, "code", None) in ("COMMAND_FAILED", "STORAGE_FAILED") for e in failures), failures
    assert storage.get(tokens) == str(written[-1])
    client.close()
