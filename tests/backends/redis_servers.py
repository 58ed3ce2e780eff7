"""Private redis-server processes for tests: loopback only, no persistence, always stopped.

Each server gets its own free port (never 6379) and a temporary directory; waits are bounded,
so a broken ``redis-server`` fails the test instead of hanging it.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

START_TIMEOUT = 10.0
CLUSTER_TIMEOUT = 20.0
# Redis Cluster's bus listens on port + 10000, so data ports stay below this.
MAX_CLUSTER_PORT = 55000


def require_redis_server() -> None:
    """Fail the calling test when this machine has no ``redis-server``/``redis-cli``.

    A required service that is missing fails the run, never skips it: ``./dev test`` installs
    Debian's redis-server when it is missing.
    """
    missing = [name for name in ("redis-server", "redis-cli") if not shutil.which(name)]
    if missing:
        pytest.fail(
            f"{' and '.join(missing)} not found on PATH: the Redis, Redis Cluster and Celery "
            "tests need them (./dev test installs them: apt-get install redis-server)",
            pytrace=False,
        )


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(*, cluster: bool = False, avoid: frozenset[int] = frozenset()) -> int:
    """A loopback port nothing listens on (and, for a cluster node, its bus port too)."""
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port == 6379 or port in avoid:
            continue
        if cluster and (
            port > MAX_CLUSTER_PORT or port + 10000 in avoid or not _port_is_free(port + 10000)
        ):
            continue
        return port
    raise RuntimeError("no free loopback port found")


class RedisServer:
    """One ``redis-server`` on 127.0.0.1:``port``; ``stop()`` and ``start()`` keep the port."""

    def __init__(self, directory: Path, *, port: int | None = None, cluster: bool = False) -> None:
        self.directory = directory
        self.cluster = cluster
        self.port = port or free_port(cluster=cluster)
        self.process: subprocess.Popen[bytes] | None = None
        directory.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)

    def start(self) -> RedisServer:
        if self.process is not None and self.process.poll() is None:
            return self
        args = [
            "redis-server",
            "--bind",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.directory),
            "--logfile",
            str(self.directory / f"redis-{self.port}.log"),
            "--daemonize",
            "no",
        ]
        if self.cluster:
            args += [
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                f"nodes-{self.port}.conf",
                "--cluster-node-timeout",
                "2000",
            ]
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.directory
        )
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=0.5)
        try:
            while True:
                assert self.process is not None
                if self.process.poll() is not None:
                    log = self.directory / f"redis-{self.port}.log"
                    text = log.read_text() if log.exists() else ""
                    raise RuntimeError(f"redis-server on port {self.port} exited:\n{text}")
                try:
                    if client.ping():
                        return
                except redis.RedisError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server on port {self.port} did not answer PING")
                time.sleep(0.02)
        finally:
            client.close()

    def stop(self) -> None:
        """Terminate the server and wait for it (killed if it lingers)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.process = None


@contextlib.contextmanager
def redis_server(directory: Path) -> Iterator[RedisServer]:
    """A started standalone server, stopped on exit."""
    require_redis_server()
    server = RedisServer(directory)
    try:
        yield server.start()
    finally:
        server.stop()


def _cluster_state(client: redis.Redis) -> str:
    info = client.execute_command("CLUSTER INFO")
    if isinstance(info, bytes):
        info = info.decode()
    if isinstance(info, str):
        fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
        return fields.get("cluster_state", "").strip()
    state = info.get("cluster_state", b"")
    return state.decode() if isinstance(state, bytes) else str(state)


class RedisClusterServers:
    """Three master nodes forming one Redis Cluster (no replicas)."""

    def __init__(self, nodes: list[RedisServer]) -> None:
        self.nodes = nodes

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def client(self) -> redis.RedisCluster:
        return redis.RedisCluster(host="127.0.0.1", port=self.nodes[0].port, socket_timeout=2)

    def create(self) -> None:
        addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
        options = ["--cluster-replicas", "0", "--cluster-yes"]
        result = subprocess.run(
            ["redis-cli", "--cluster", "create", *addresses, *options],
            capture_output=True,
            timeout=CLUSTER_TIMEOUT,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed: {result.stdout!r}")
        deadline = time.monotonic() + CLUSTER_TIMEOUT
        for node in self.nodes:
            client = node.client()
            try:
                while _cluster_state(client) != "ok":
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"cluster not ok on node {node.port}")
                    time.sleep(0.05)
            finally:
                client.close()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


@contextlib.contextmanager
def redis_cluster(directory: Path, *, masters: int = 3) -> Iterator[RedisClusterServers]:
    """A started cluster of ``masters`` nodes whose state is ``ok``, stopped on exit."""
    require_redis_server()
    ports: list[int] = []
    for _ in range(masters):
        taken = frozenset(ports + [p + 10000 for p in ports])
        ports.append(free_port(cluster=True, avoid=taken))
    cluster = RedisClusterServers(
        [RedisServer(directory / f"node-{p}", port=p, cluster=True) for p in ports]
    )
    try:
        for node in cluster.nodes:
            node.start()
        cluster.create()
        yield cluster
    finally:
        cluster.stop()
