"""What the MCP server adds to a recall: ``fact_recall`` called directly vs the MCP ``recall``
tool, in the same run, on the same data.

    .venv/bin/python bench/mcp_overhead.py [--calls 300] [--facts 500] [--database sqlite|postgres]

Three ways, each timed per call (median of ``--calls``, after 20 warm-up calls):

- direct: ``memory.fact_recall(namespace=..., query=..., k=5)`` in this thread;
- in-process: the MCP SDK's ``Client`` talking to ``create_server(credentials=...)`` over its
  in-memory transport (JSON-RPC, argument validation, the API-key check, ``sync_to_async``);
- HTTP: the same client over streamable HTTP to ``mount(get_asgi_application())`` served by
  uvicorn on loopback (adds HTTP, the per-request authentication and JSON encoding).

SQLite (default) uses a temporary file; ``postgres`` the embedded server (``DATABASE_URL`` when
set). Prints one JSON line per mode and the ratios to direct.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUERIES = ["peanut allergy", "window seat", "where does she live", "favourite food", "dog"]


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--facts", type=int, default=500)
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    return parser.parse_args()


def setup(database: str) -> None:
    if database == "sqlite":
        folder = tempfile.mkdtemp(prefix="ttmemory-mcp-bench-")
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def seed(facts: int) -> str:
    from ttmemory import memory
    from ttmemory.services.access import api_key_create

    namespace = f"bench-mcp-{os.getpid()}"
    subjects = ["Ada", "her sister", "the dog", "her manager", "the landlord"]
    topics = ["peanut allergy", "window seats", "Lisbon", "sushi", "a beagle named Biscuit"]
    for i in range(facts):
        text = f"{subjects[i % 5]} mentioned {topics[(i * 7) % 5]} on day {i}"
        memory.fact_remember(namespace=namespace, text=text)
    return api_key_create(name="bench-mcp", namespaces=[namespace])[1]


def median_us(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1e6, 1)


def time_direct(namespace: str, calls: int) -> list[float]:
    from ttmemory import memory

    samples = []
    for i in range(calls + 20):
        started = time.perf_counter()
        memory.fact_recall(namespace=namespace, query=QUERIES[i % len(QUERIES)], k=5)
        if i >= 20:
            samples.append(time.perf_counter() - started)
    return samples


async def time_client(client_factory: Callable[[], Any], calls: int) -> list[float]:
    samples = []
    async with client_factory() as client:
        for i in range(calls + 20):
            started = time.perf_counter()
            result = await client.call_tool("recall", {"query": QUERIES[i % len(QUERIES)], "k": 5})
            if i >= 20:
                samples.append(time.perf_counter() - started)
            assert not result.is_error, result
    return samples


def serve() -> tuple[str, Callable[[], None]]:
    import uvicorn
    from django.core.asgi import get_asgi_application

    from ttmemory.integrations.mcp import mount

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            mount(get_asgi_application()), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)

    def stop() -> None:
        server.should_exit = True
        thread.join(30)

    return f"http://127.0.0.1:{port}/mcp", stop


def main() -> None:
    args = parse()
    setup(args.database)
    import anyio
    import httpx2
    from django.db import connection
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from ttmemory.integrations.mcp import Credentials, create_server
    from ttmemory.services.access import api_key_check

    raw = seed(args.facts)
    key = api_key_check(raw_key=raw)
    assert key is not None
    namespace = key.namespaces[0]
    results: dict[str, list[float]] = {"direct": time_direct(namespace, args.calls)}

    def in_process() -> Any:
        return Client(create_server(credentials=Credentials(api_key=raw)))

    run: Callable[[Callable[[], Any]], Awaitable[list[float]]] = lambda factory: time_client(  # noqa: E731
        factory, args.calls
    )
    results["in-process"] = anyio.run(run, in_process)
    url, stop = serve()
    try:

        def over_http() -> Any:
            headers = {"authorization": f"Api-Key {raw}"}
            return Client(
                streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers))
            )

        results["http"] = anyio.run(run, over_http)
    finally:
        stop()
    direct = statistics.median(results["direct"])
    for mode, samples in results.items():
        line = {
            "mode": mode,
            "database": connection.vendor,
            "facts": args.facts,
            "calls": len(samples),
            "median_us": median_us(samples),
            "p95_us": round(sorted(samples)[int(len(samples) * 0.95) - 1] * 1e6, 1),
            "ratio_to_direct": round(statistics.median(samples) / direct, 2),
        }
        print(json.dumps(line))


if __name__ == "__main__":
    main()
